package payd

import (
	"context"
	"time"
)

// Two-step sign-in (docs/two-step.md): a correct password of an account
// with two-step sign-in on starts no session but a TwoFactorChallenge,
// which an authenticator or recovery code then finishes.

// TwoFactorSetupTTL is how long a setup's secret and QR code may be
// confirmed, in the session that started it (spec 8.1;
// two_factor_setup_required after).
const TwoFactorSetupTTL = 10 * time.Minute

// TwoFactorChallengeTTL is how long a password sign-in waits for its code
// (challenge_expired after): long enough to find the phone, short enough
// that a sign-in left open is worthless.
const TwoFactorChallengeTTL = 5 * time.Minute

// PrefixTwoFactorChallenge starts the id of a two-step sign-in challenge.
const PrefixTwoFactorChallenge = "tfa_"

// TwoFactorChallenge is a password sign-in waiting for its second step.
// Its id is public (the answer carries it, a page may put it in a URL);
// what finishes it is the id and a random token kept in an HttpOnly cookie
// of the browser that gave the password, stored only as its hash, so the
// id alone is never enough.
type TwoFactorChallenge struct {
	ID        string
	TokenHash string
	UserID    string
	// PasswordHash is the SHA-256 of the user's password hash (PHC string)
	// that was given: once the password changes (a reset, a change), the
	// challenge it started is void.
	PasswordHash string
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// NewTwoFactorChallenge starts a challenge for u, who gave the password
// whose PHC string u holds, at now, and returns the browser's token with
// the row to store.
func NewTwoFactorChallenge(u *User, now time.Time) (string, *TwoFactorChallenge) {
	token := RandomString(43)
	return token, &TwoFactorChallenge{ID: NewID(PrefixTwoFactorChallenge), TokenHash: SecretHash(token),
		UserID: u.ID, PasswordHash: SecretHash(u.PasswordHash), CreatedAt: now, ExpiresAt: now.Add(TwoFactorChallengeTTL)}
}

// Check reports whether the browser holding token may finish the
// challenge for u at now: challenge_expired when the token is not the
// challenge's, the challenge has timed out, or u has since turned two-step
// sign-in off or changed or lost the password. One answer for all, so the
// id alone tells nothing.
func (c *TwoFactorChallenge) Check(token string, u *User, now time.Time) error {
	if !SameSecret(c.TokenHash, SecretHash(token)) || !now.Before(c.ExpiresAt) || u.ID != c.UserID ||
		!u.TwoFactor() || u.PasswordDisabled || !SameSecret(c.PasswordHash, SecretHash(u.PasswordHash)) {
		return ChallengeExpired()
	}
	return nil
}

// ChallengeExpired is challenge_expired: the two-step sign-in timed out,
// was used, or belongs to another browser.
func ChallengeExpired() *Error {
	return Errorf(ErrChallengeExpired, "this sign-in has timed out or was used; sign in again with your password")
}

// TwoFactorCodeSubject is the attempt subject that counts a person's wrong
// two-step codes (spec 8.3, CodeLock), across every challenge and the
// codes of /me/two-factor.
func TwoFactorCodeSubject(userID string) string { return "totp:" + userID }

// TOTPSetup is what a person needs to add payd to an authenticator app.
type TOTPSetup struct {
	// Secret is the shared secret in base32, for typing in.
	Secret string
	// URI is the otpauth://totp/ URI the QR code holds.
	URI string
	// QRDataURL is the QR code as a PNG in a data: URL; QRSVG the same as
	// an SVG document.
	QRDataURL string
	QRSVG     string
}

// Authenticator makes and checks the codes of two-step sign-in: the
// authenticator app's (TOTP, RFC 6238) and the recovery codes (package
// totp). It stores nothing; the caller keeps the secret, the last step and
// the recovery code hashes on the user.
type Authenticator interface {
	// NewSecret makes a random secret for account (the person's email),
	// with its otpauth URI and QR code.
	NewSecret(account string) (TOTPSetup, error)
	// IsCode reports whether s has the form of an authenticator code (six
	// digits, spaces allowed) rather than of a recovery code.
	IsCode(s string) bool
	// Verify checks an authenticator code against secret at now, taking
	// only a step after lastStep, and returns the step matched (the new
	// lastStep); invalid_code when malformed, wrong or already used.
	Verify(secret, code string, now time.Time, lastStep int64) (step int64, err error)
	// NewRecoveryCodes makes a set of recovery codes: plain to show once,
	// hashes (in the same order) to store.
	NewRecoveryCodes() (plain, hashes []string)
	// MatchRecoveryCode returns the index in hashes of the recovery code
	// typed, or false when it is none of them.
	MatchRecoveryCode(hashes []string, input string) (index int, ok bool)
}

// TwoFactorChallengeStore keeps two-step sign-ins in progress, shared by
// every replica.
type TwoFactorChallengeStore interface {
	// CreateTwoFactorChallenge stores a new challenge.
	CreateTwoFactorChallenge(ctx context.Context, c *TwoFactorChallenge) error
	// TwoFactorChallenge returns the challenge; not_found when it was never
	// stored, was taken or was swept.
	TwoFactorChallenge(ctx context.Context, id string) (*TwoFactorChallenge, error)
	// TakeTwoFactorChallenge deletes the challenge in one statement, so of
	// two sign-ins racing to finish it one wins and the other gets
	// not_found (the API answers challenge_expired).
	TakeTwoFactorChallenge(ctx context.Context, id string) error
	// DeleteExpiredTwoFactorChallenges removes the challenges that expired
	// at or before now and returns how many.
	DeleteExpiredTwoFactorChallenges(ctx context.Context, now time.Time) (int, error)
}
