// Package totp is payd's two-step sign-in with an authenticator app
// (docs/two-step.md): it makes the shared secret and the QR code a person
// scans at setup, checks the 6-digit codes of RFC 6238 (SHA-1, 30-second
// steps, one step of clock skew either way, each step used once), and makes
// and matches the one-time recovery codes that replace a lost authenticator.
//
// It stores nothing: the API keeps the secret, the last accepted step and
// the recovery code hashes on the user, and counts wrong codes per person
// (spec 8.3). Every time comes from the caller, read from the service clock.
package totp

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"payd"
)

// The parameters every authenticator app understands: Google Authenticator
// ignores any other algorithm, digit count or period in the otpauth URI and
// silently shows wrong codes, so payd uses the defaults of RFC 6238.
const (
	// Period is the length of one time step.
	Period = 30 * time.Second
	// Digits is the length of a code.
	Digits = 6
	// Skew is how many steps before and after the current one are
	// accepted, for a phone whose clock is a little off and a person who
	// types the code as it changes.
	Skew = 1
	// SecretBytes is the size of a secret: 160 bits, the HMAC-SHA-1 block
	// the RFC 4226 recommends, written as 32 base32 characters.
	SecretBytes = 20
	// SetupValidity is how long a setup's QR code may be confirmed (spec
	// 8.1); the API enforces it (two_factor_setup_required).
	SetupValidity = payd.TwoFactorSetupTTL
)

// maxCodeInput bounds what ParseCode looks at: a code with its spaces is
// a dozen bytes, so anything longer is refused before any work.
const maxCodeInput = 64

// Setup is what a person needs to add payd to an authenticator app.
type Setup struct {
	// Secret is the shared secret in base32 without padding (32
	// characters), shown for typing in when the camera cannot be used.
	// Store it with the pending setup; it is the same in URI and the QR.
	Secret string
	// URI is the otpauth://totp/ URI the QR code holds.
	URI string
	// QRDataURL is the QR code as a PNG in a data: URL, ready for an
	// <img src>.
	QRDataURL string
	// QRSVG is the QR code as an SVG document, for inlining in a page.
	QRSVG string
}

// NewSecret makes a new random secret for the account (the person's email)
// at the issuer (the product name, payd), with its otpauth URI and QR code.
// The issuer and the account must be non-empty and hold no ':', which
// separates them in the URI's label.
func NewSecret(issuer, account string) (Setup, error) {
	for _, s := range []string{issuer, account} {
		if s == "" || strings.ContainsRune(s, ':') {
			return Setup{}, fmt.Errorf("totp: issuer and account must be non-empty without ':' (%q, %q)", issuer, account)
		}
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Period: uint(Period / time.Second),
		SecretSize: SecretBytes, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Rand: rand.Reader})
	if err != nil {
		return Setup{}, fmt.Errorf("totp: generating a secret: %w", err)
	}
	s := Setup{Secret: key.Secret(), URI: key.URL()}
	if s.QRDataURL, s.QRSVG, err = qrImages(s.URI); err != nil {
		return Setup{}, err
	}
	return s, nil
}

// Step returns the time step that holds t: the RFC 6238 counter, the Unix
// time divided by the period.
func Step(t time.Time) int64 {
	s := t.Unix()
	p := int64(Period / time.Second)
	if s < 0 {
		return (s - p + 1) / p
	}
	return s / p
}

// Verify checks a code typed by a person against secret at now. It accepts
// exactly Digits ASCII digits, spaces anywhere ignored, matching the step
// of now or one step either side (Skew), and only a step after lastStep:
// a code, once accepted, never works again, nor does any older one (RFC
// 6238 §5.2). It returns the step matched, for the caller to store as the
// new lastStep (0 before the first use). Every candidate step is computed
// and compared in constant time, so the time taken says nothing of which,
// if any, matched.
//
// A malformed, wrong or reused code is invalid_code; an error of another
// kind means the stored secret is not base32 (an internal error).
func Verify(secret, code string, now time.Time, lastStep int64) (step int64, err error) {
	c, err := ParseCode(code)
	if err != nil {
		return 0, err
	}
	now0 := Step(now)
	matched, stale := int64(-1), false
	for s := now0 - Skew; s <= now0+Skew; s++ {
		if s < 0 {
			continue
		}
		want, err := hotp.GenerateCodeCustom(secret, uint64(s), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, fmt.Errorf("totp: the stored secret: %w", err)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(c)) == 1 {
			if s > lastStep {
				matched = s // the latest step wins should two steps share a code
			} else {
				stale = true
			}
		}
	}
	switch {
	case matched >= 0:
		return matched, nil
	case stale:
		return 0, &payd.Error{Code: payd.ErrInvalidCode, Field: "code",
			Message: "this code was used already; wait for the next code in your authenticator app"}
	}
	return 0, &payd.Error{Code: payd.ErrInvalidCode, Field: "code", Message: "the code is not right; check the time on your phone and try the current code"}
}

// errMalformed is the answer to anything that is not a 6-digit code.
var errMalformed = &payd.Error{Code: payd.ErrInvalidCode, Field: "code",
	Message: fmt.Sprintf("a code is %d digits from your authenticator app", Digits)}

// ParseCode returns the code in s: s with its spaces removed must be
// exactly Digits ASCII digits (authenticator apps show "123 456", and a
// pasted code may carry spaces around it). Anything else is invalid_code.
// The result is a fresh string of the digits alone.
func ParseCode(s string) (string, error) {
	if len(s) > maxCodeInput {
		return "", errMalformed
	}
	var b [Digits]byte
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
		case c >= '0' && c <= '9' && n < Digits:
			b[n] = c
			n++
		default:
			return "", errMalformed
		}
	}
	if n != Digits {
		return "", errMalformed
	}
	return string(b[:]), nil
}
