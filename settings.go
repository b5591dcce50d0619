package payd

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"payd/money"
)

// CheckoutSettings is how a business's checkouts behave. A business that
// never changed them has DefaultCheckoutSettings.
type CheckoutSettings struct {
	BusinessID string
	// QuoteMinutes is how long a quote stays locked (spec 2.11 rule 8).
	QuoteMinutes int
	// CollectEmail makes checkout ask the customer for an email.
	CollectEmail bool
	// FeePayer is the default fee_payer of new payments.
	FeePayer money.FeePayer
	// AcceptedRails are the rails checkout offers.
	AcceptedRails []Rail
	// AcceptedAssets maps each accepted network to the coins accepted on it.
	AcceptedAssets map[money.Network][]money.Asset
	// DisplayName is the name customers see on the checkout pages; ""
	// shows the business's own name.
	DisplayName string
	// AccentColor is the checkout pages' accent, "#rrggbb" in lower case;
	// "" keeps payd's own. It must keep WCAG AA contrast on the page
	// (CheckAccent).
	AccentColor string
	// SupportEmail is where customers are told to write; "" for none. It
	// is the business's own column (businesses.support_email), which the
	// checkout settings own the writes of.
	SupportEmail string
	UpdatedAt    time.Time
}

// CheckoutSettingsStore keeps checkout settings.
type CheckoutSettingsStore interface {
	// CheckoutSettings returns the business's settings; not_found when it
	// never saved any (the caller then uses DefaultCheckoutSettings).
	CheckoutSettings(ctx context.Context, businessID string) (*CheckoutSettings, error)
	// SaveCheckoutSettings creates or replaces the business's settings.
	SaveCheckoutSettings(ctx context.Context, s *CheckoutSettings) error
}

// Bounds of CheckoutSettings.QuoteMinutes. A quote shorter than a minute
// cannot be paid from a phone; one longer than an hour leaves the business
// carrying an hour of a volatile coin's price moves.
const (
	MinQuoteMinutes     = 1
	MaxQuoteMinutes     = 60
	DefaultQuoteMinutes = 15
)

// DefaultCheckoutSettings are the settings of a business that never saved
// any: a 15-minute quote (spec 2.11 rule 8), no email asked, the business
// pays fees, both rails, and every coin on every network it moves on.
func DefaultCheckoutSettings(businessID string) *CheckoutSettings {
	assets := map[money.Network][]money.Asset{}
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			assets[n] = append(assets[n], a)
		}
	}
	return &CheckoutSettings{
		BusinessID: businessID, QuoteMinutes: DefaultQuoteMinutes, FeePayer: money.FeePayerBusiness,
		AcceptedRails: []Rail{RailCrypto, RailCard}, AcceptedAssets: assets,
	}
}

// Validate checks the settings and puts them in canonical order (rails as
// in RailCrypto, RailCard; each network's coins in money.Assets order;
// networks with no coin dropped), so that equal settings are stored and
// shown identically. At least one rail and one coin are required: card
// payments also settle in a coin, so with no coin nothing could be paid.
func (s *CheckoutSettings) Validate() error {
	if s.QuoteMinutes < MinQuoteMinutes || s.QuoteMinutes > MaxQuoteMinutes {
		return FieldError("quote_minutes", "quote_minutes must be from %d to %d", MinQuoteMinutes, MaxQuoteMinutes)
	}
	if err := checkFeePayer(s.FeePayer); err != nil {
		return err
	}
	s.DisplayName = strings.TrimSpace(s.DisplayName)
	if err := CheckText("display_name", s.DisplayName, MaxDisplayName, false); err != nil {
		return err
	}
	color, err := CheckAccent(s.AccentColor)
	if err != nil {
		return err
	}
	s.AccentColor = color
	s.SupportEmail = strings.TrimSpace(s.SupportEmail)
	if s.SupportEmail != "" {
		if err := CheckEmail("support_email", s.SupportEmail); err != nil {
			return err
		}
	}
	rails, err := canonicalRails(s.AcceptedRails)
	if err != nil {
		return err
	}
	assets, err := canonicalAssets(s.AcceptedAssets)
	if err != nil {
		return err
	}
	s.AcceptedRails, s.AcceptedAssets = rails, assets
	return nil
}

// canonicalRails checks rails and returns them in canonical order.
func canonicalRails(rails []Rail) ([]Rail, error) {
	var out []Rail
	for _, r := range []Rail{RailCrypto, RailCard} {
		if slices.Contains(rails, r) {
			out = append(out, r)
		}
	}
	for _, r := range rails {
		if r != RailCrypto && r != RailCard {
			return nil, FieldError("accepted_rails", "rail %q is neither crypto nor card", r)
		}
	}
	if len(out) != len(rails) {
		return nil, FieldError("accepted_rails", "accepted_rails names a rail more than once")
	}
	if len(out) == 0 {
		return nil, FieldError("accepted_rails", "accept at least one rail")
	}
	return out, nil
}

// canonicalAssets checks that every coin moves on its network and is named
// once, and returns the map in canonical order.
func canonicalAssets(m map[money.Network][]money.Asset) (map[money.Network][]money.Asset, error) {
	out := map[money.Network][]money.Asset{}
	for n, assets := range m {
		field := "accepted_assets." + string(n)
		if !n.Valid() {
			return nil, FieldError(field, "network %q is not one of bitcoin, ethereum, polygon, solana, tron", n)
		}
		for i, a := range assets {
			if !money.Supports(a, n) {
				return nil, FieldError(field, "%q is not a coin payd accepts on %s", a, n)
			}
			if slices.Contains(assets[:i], a) {
				return nil, FieldError(field, "%s is named more than once", a)
			}
		}
		if len(assets) > 0 {
			out[n] = slices.DeleteFunc(slices.Clone(money.Assets), func(a money.Asset) bool { return !slices.Contains(assets, a) })
		}
	}
	if len(out) == 0 {
		return nil, FieldError("accepted_assets", "accept at least one coin on one network")
	}
	return out, nil
}

// AcceptsRail reports whether checkout offers the rail.
func (s *CheckoutSettings) AcceptsRail(r Rail) bool { return slices.Contains(s.AcceptedRails, r) }

// Offer is one coin on one network that checkout offers.
type Offer struct {
	Asset   money.Asset
	Network money.Network
}

// Accepts reports whether the business takes coin a on network n.
func (s *CheckoutSettings) Accepts(a money.Asset, n money.Network) bool {
	return slices.Contains(s.AcceptedAssets[n], a)
}

// Offers lists the accepted coins and networks in a stable order: coins in
// money.Assets order, each on its networks in the spec's order (2.11 rule 9).
func (s *CheckoutSettings) Offers() []Offer {
	var out []Offer
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			if slices.Contains(s.AcceptedAssets[n], a) {
				out = append(out, Offer{a, n})
			}
		}
	}
	return out
}

// Fee rates and card limits of checkout (spec 2.11 rule 5, 7.4). Card
// limits are US-dollar values, offered in the price's currency at the
// rates in force.
const (
	CryptoFeeBps    = 0
	CardFeeBps      = 300
	CardMinUSDCents = 500
	CardMaxUSDCents = 1_000_000
)

// checkFeePayer requires a known fee payer (payments and settings alike).
func checkFeePayer(p money.FeePayer) error {
	if !p.Valid() {
		return FieldError("fee_payer", "fee_payer must be business or customer")
	}
	return nil
}

// MaxDisplayName is the longest CheckoutSettings.DisplayName, in
// characters.
const MaxDisplayName = 100

// MinAccentContrast is the contrast an accent colour must have with the
// checkout page's white: WCAG AA for normal text (1.4.3), which covers the
// accent's links on white and the white text of its buttons, and more than
// the 3:1 its focus rings need (1.4.11).
const MinAccentContrast = 4.5

// CheckAccent checks an accent colour ("#rrggbb", either case; "" for
// payd's own) and returns it in lower case. A colour with less than
// MinAccentContrast against white is refused with a sentence saying its
// contrast.
func CheckAccent(c string) (string, error) {
	c = strings.ToLower(strings.TrimSpace(c))
	if c == "" {
		return "", nil
	}
	if len(c) != 7 || c[0] != '#' {
		return "", FieldError("accent_color", "the accent colour must be written #rrggbb, such as #0b5cad")
	}
	if _, err := strconv.ParseUint(c[1:], 16, 32); err != nil {
		return "", FieldError("accent_color", "the accent colour must be written #rrggbb, such as #0b5cad")
	}
	if r := Contrast(c, "#ffffff"); r < MinAccentContrast {
		return "", FieldError("accent_color", "the accent colour %s has a contrast of only %s:1 with the checkout page's white; "+
			"it needs at least 4.5:1 (WCAG AA), so choose a darker colour", c, floorTenth(r))
	}
	return c, nil
}

// floorTenth writes r rounded down to a tenth, so a refused colour never
// reads as 4.5.
func floorTenth(r float64) string { return fmt.Sprintf("%.1f", math.Floor(r*10)/10) }

// Contrast is the WCAG 2 contrast ratio of two "#rrggbb" colours.
func Contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is a "#rrggbb" colour's relative luminance (WCAG 2).
func luminance(c string) float64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(c, "#"), 16, 32)
	ch := func(v uint64) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(n>>16&0xff) + 0.7152*ch(n>>8&0xff) + 0.0722*ch(n&0xff)
}
