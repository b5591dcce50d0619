package totp

import (
	"time"

	"payd"
)

// Authenticator is payd.Authenticator over this package's functions, for
// the API (which may not import an adapter) to be given by cmd/payd.
type Authenticator struct {
	// Issuer is the name authenticator apps show above the code; it may
	// not contain ':'.
	Issuer string
}

var _ payd.Authenticator = Authenticator{}

// NewSecret makes a secret for account at a.Issuer (NewSecret).
func (a Authenticator) NewSecret(account string) (payd.TOTPSetup, error) {
	s, err := NewSecret(a.Issuer, account)
	return payd.TOTPSetup{Secret: s.Secret, URI: s.URI, QRDataURL: s.QRDataURL, QRSVG: s.QRSVG}, err
}

// IsCode reports whether s has the form of an authenticator code (ParseCode).
func (Authenticator) IsCode(s string) bool {
	_, err := ParseCode(s)
	return err == nil
}

// Verify checks an authenticator code (Verify).
func (Authenticator) Verify(secret, code string, now time.Time, lastStep int64) (int64, error) {
	return Verify(secret, code, now, lastStep)
}

// NewRecoveryCodes makes a set of recovery codes (NewRecoveryCodes).
func (Authenticator) NewRecoveryCodes() (plain, hashes []string) { return NewRecoveryCodes() }

// MatchRecoveryCode finds the recovery code typed (MatchRecoveryCode).
func (Authenticator) MatchRecoveryCode(hashes []string, input string) (int, bool) {
	return MatchRecoveryCode(hashes, input)
}
