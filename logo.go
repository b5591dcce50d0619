package payd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	_ "image/jpeg" // the logo formats
	_ "image/png"
	"time"
)

// CheckoutLogo is the logo a business's checkout pages show. The pages'
// Content-Security-Policy allows images of payd's own origin only, so the
// logo is uploaded, checked by decoding it, kept in the database and
// served by payd.
type CheckoutLogo struct {
	BusinessID string
	// Digest is the first 32 hex digits of the image's SHA-256: its
	// address, which changes with the image.
	Digest string
	// ContentType is image/png or image/jpeg.
	ContentType string
	Data        []byte
	UpdatedAt   time.Time
}

// Bounds of a logo: at most 256 KiB, and no side longer than 2,048 pixels
// (a decoded image is held in memory while checking it).
const (
	MaxLogoBytes = 256 << 10
	MaxLogoSide  = 2048
)

// Ext is the logo's file extension: "png" or "jpg".
func (l *CheckoutLogo) Ext() string {
	if l.ContentType == "image/jpeg" {
		return "jpg"
	}
	return "png"
}

// NewCheckoutLogo checks an uploaded image: a PNG or JPEG of at most
// MaxLogoBytes and MaxLogoSide pixels a side that decodes whole.
func NewCheckoutLogo(businessID string, data []byte, now time.Time) (*CheckoutLogo, error) {
	if len(data) == 0 {
		return nil, FieldError("logo", "the logo is empty")
	}
	if len(data) > MaxLogoBytes {
		return nil, FieldError("logo", "the logo is %d KiB; at most 256 KiB are allowed", (len(data)+1023)/1024)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || format != "png" && format != "jpeg" {
		return nil, FieldError("logo", "the logo must be a PNG or JPEG image")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
		return nil, FieldError("logo", "the logo is %d×%d pixels; each side must be from 1 to %d", cfg.Width, cfg.Height, MaxLogoSide)
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return nil, FieldError("logo", "the logo could not be read as a whole image")
	}
	sum := sha256.Sum256(data)
	return &CheckoutLogo{BusinessID: businessID, Digest: hex.EncodeToString(sum[:16]), ContentType: "image/" + format,
		Data: data, UpdatedAt: now}, nil
}

// CheckoutLogoStore keeps checkout logos.
type CheckoutLogoStore interface {
	// CheckoutLogo returns the business's logo; not_found when it has none.
	CheckoutLogo(ctx context.Context, businessID string) (*CheckoutLogo, error)
	// CheckoutLogoByDigest returns a logo by its digest; not_found when no
	// business has it.
	CheckoutLogoByDigest(ctx context.Context, digest string) (*CheckoutLogo, error)
	// SaveCheckoutLogo creates or replaces the business's logo.
	SaveCheckoutLogo(ctx context.Context, l *CheckoutLogo) error
	// DeleteCheckoutLogo removes the business's logo, if any.
	DeleteCheckoutLogo(ctx context.Context, businessID string) error
}
