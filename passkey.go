package payd

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Passkeys (WebAuthn credentials) let a person sign in, and prove a recent
// sign-in for a sensitive change, without a password (spec 5.7, 7.6, 8.1;
// docs/passkeys.md). The ceremonies themselves are run by package passkey;
// the domain keeps the stored credential, the stored state of a ceremony in
// progress, and the rules that need no cryptography.

// MaxPasskeys is how many passkeys one account may hold (spec 8.1). A
// registration beyond it is passkey_limit.
const MaxPasskeys = 10

// MaxPasskeyName is the longest name, in characters, a person may give a
// passkey.
const MaxPasskeyName = 100

// DefaultPasskeyName is the name a new passkey has until its owner renames
// it.
const DefaultPasskeyName = "Passkey"

// Passkey is one WebAuthn credential registered to a user.
type Passkey struct {
	ID     string
	UserID string
	// CredentialID is the authenticator's id of the credential (rawId):
	// unique across every account.
	CredentialID []byte
	// PublicKey is the credential's public key in COSE form, as the
	// authenticator gave it at registration.
	PublicKey []byte
	// AAGUID names the authenticator's model (16 bytes; all zero when the
	// authenticator does not say).
	AAGUID []byte
	// SignCount is the authenticator's signature counter at the last use;
	// a sign-in presenting a counter not above it (unless both are zero,
	// as with authenticators that keep no counter) is refused as a
	// possible clone.
	SignCount uint32
	// Transports are the hints the browser gave (usb, nfc, ble, internal,
	// hybrid), passed back to browsers so they offer the right
	// authenticator.
	Transports []string
	// BackupEligible says the credential may be synced to other devices (a
	// synced passkey); it never changes. BackupState says it is synced now.
	BackupEligible bool
	BackupState    bool
	Name           string
	CreatedAt      time.Time
	LastUsedAt     *time.Time
}

// CheckPasskeyName returns the name to store for a passkey: trimmed, not
// empty, at most MaxPasskeyName characters, without control characters.
// A bad name is invalid_request on field name.
func CheckPasskeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", FieldError("name", "name must not be empty")
	case !utf8.ValidString(name):
		return "", FieldError("name", "name must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxPasskeyName:
		return "", FieldError("name", "name must be at most %d characters", MaxPasskeyName)
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return "", FieldError("name", "name must not contain control characters")
	}
	return name, nil
}

// PasskeyLimit returns passkey_limit when an account that holds count
// passkeys may not register another.
func PasskeyLimit(count int) error {
	if count >= MaxPasskeys {
		return Errorf(ErrPasskeyLimit, "an account can hold at most %d passkeys; remove one first", MaxPasskeys)
	}
	return nil
}

// PasskeyFailed returns the passkey_failed error. Its message does not say
// which check failed: a client learns nothing it could use to tune a forged
// answer, and the reason goes to the log instead.
func PasskeyFailed() *Error {
	return &Error{Code: ErrPasskeyFailed, Message: "the passkey could not be verified; try again"}
}

// PasskeyUnknown returns the passkey_unknown error: the credential is on no
// account (or, at a step-up, not on this account).
func PasskeyUnknown() *Error {
	return &Error{Code: ErrPasskeyUnknown, Message: "this passkey is not registered to an account here"}
}

// PasskeyStore keeps the registered passkeys.
type PasskeyStore interface {
	// CreatePasskey stores a new passkey; conflict when its credential id
	// is already stored, on any account (the API answers passkey_exists).
	// Whether the account may hold another passkey (PasskeyLimit) is the
	// caller's to check with CountPasskeys in the same transaction.
	CreatePasskey(ctx context.Context, p *Passkey) error
	// PasskeyByCredentialID returns the passkey with this credential id;
	// not_found when none.
	PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*Passkey, error)
	// PasskeysByUser returns the user's passkeys, oldest first (empty, not
	// an error, when there are none).
	PasskeysByUser(ctx context.Context, userID string) ([]*Passkey, error)
	// CountPasskeys returns how many passkeys the user holds.
	CountPasskeys(ctx context.Context, userID string) (int, error)
	// UpdatePasskeyUse records a verified sign-in with the passkey: the new
	// signature counter, backup state and time of use; not_found when no
	// passkey has this id.
	UpdatePasskeyUse(ctx context.Context, id string, signCount uint32, backupState bool, lastUsedAt time.Time) error
	// RenamePasskey sets the name of the user's passkey; not_found when the
	// user has no passkey with this id.
	RenamePasskey(ctx context.Context, userID, id, name string) error
	// DeletePasskey removes the user's passkey; not_found when the user has
	// no passkey with this id (another user's id included). Whether the
	// user keeps a way to sign in (last_sign_in_method) is the caller's to
	// check in the same transaction.
	DeletePasskey(ctx context.Context, userID, id string) error
}

// WebAuthnPurpose says what a WebAuthn ceremony was started for. A
// ceremony's state is only good for the purpose it was started for.
type WebAuthnPurpose string

// The ceremonies payd runs.
const (
	// WebAuthnRegister adds a passkey to a signed-in account.
	WebAuthnRegister WebAuthnPurpose = "register"
	// WebAuthnSignin signs in with a discoverable passkey: no account is
	// named beforehand.
	WebAuthnSignin WebAuthnPurpose = "signin"
	// WebAuthnStepUp proves a recent sign-in for the session's account
	// (spec 5.7).
	WebAuthnStepUp WebAuthnPurpose = "step_up"
	// WebAuthnSignup creates the first passkey of an account being signed
	// up without a password.
	WebAuthnSignup WebAuthnPurpose = "signup"
)

// WebAuthnChallengeTTL is how long a started ceremony may be finished: the
// timeout its options tell the browser, after which its state is refused.
const WebAuthnChallengeTTL = 5 * time.Minute

// WebAuthnChallenge is the stored state of a WebAuthn ceremony between its
// options and its verification. It is found again by the hash of the
// challenge the browser signed, which the response carries, and is taken
// (read and deleted) once, so a response cannot be replayed.
type WebAuthnChallenge struct {
	// Hash is the hex SHA-256 of the challenge. The challenge itself is
	// never stored.
	Hash string
	// State is the rest of the ceremony's state (package passkey's to
	// read), as JSON.
	State []byte
	// UserID is the account the ceremony is for: the user registering or
	// stepping up, the user id reserved for a sign-up, or "" for a
	// discoverable sign-in.
	UserID  string
	Purpose WebAuthnPurpose
	// Binding ties the ceremony to where it started: the id of the session
	// (never the cookie's secret) for register and step_up, the sign-up's
	// id for signup; "" when nothing binds it (a sign-in before any
	// session).
	Binding   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Check reports whether a ceremony state just taken from the store may
// finish a ceremony of this purpose, bound to binding, at now:
// passkey_failed when it was started for another purpose or elsewhere, or
// has expired. The state is spent either way.
func (c *WebAuthnChallenge) Check(purpose WebAuthnPurpose, binding string, now time.Time) error {
	if c.Purpose != purpose || c.Binding != binding || !now.Before(c.ExpiresAt) {
		return PasskeyFailed()
	}
	return nil
}

// WebAuthnChallengeStore keeps the state of ceremonies in progress, shared
// by every replica.
type WebAuthnChallengeStore interface {
	// CreateWebAuthnChallenge stores a started ceremony; conflict when its
	// hash is already stored.
	CreateWebAuthnChallenge(ctx context.Context, c *WebAuthnChallenge) error
	// TakeWebAuthnChallenge removes the ceremony with this challenge hash
	// and returns it, in one statement: of two concurrent takes one gets it
	// and the other not_found, as does a hash never stored or already
	// taken (the API answers passkey_failed).
	TakeWebAuthnChallenge(ctx context.Context, hash string) (*WebAuthnChallenge, error)
	// DeleteExpiredWebAuthnChallenges removes the ceremonies that expired
	// at or before now and returns how many.
	DeleteExpiredWebAuthnChallenges(ctx context.Context, now time.Time) (int, error)
}

// PasskeyUser is the account a registration is for.
type PasskeyUser struct {
	// ID is the user's id (usr_…), which becomes the credential's user
	// handle: opaque, unlike the email, and at most 64 bytes.
	ID string
	// Email is the name the authenticator shows to tell accounts apart.
	Email string
	// Name is the display name; the email stands in when it is empty.
	Name string
}

// PasskeyLookup finds the passkey an assertion names by its credential id
// (the user handle, which a discoverable credential returns, is given
// too). It returns not_found for a credential on no account; any other
// error is passed on as it is.
type PasskeyLookup func(credentialID, userHandle []byte) (*Passkey, error)

// WebAuthn runs the passkey ceremonies (package passkey implements it; the
// API calls it). It stores nothing: a ceremony's state is a
// WebAuthnChallenge the caller keeps between the two steps and takes once.
type WebAuthn interface {
	// BeginRegistration starts adding a passkey to user, for purpose
	// register or signup, bound to binding; existing are the user's
	// passkeys (excluded; MaxPasskeys of them is passkey_limit). It
	// returns the options for navigator.credentials.create as JSON
	// {"publicKey": {...}} and the ceremony's state.
	BeginRegistration(user PasskeyUser, existing []*Passkey, purpose WebAuthnPurpose, binding string) (json.RawMessage, *WebAuthnChallenge, error)
	// BeginLogin starts a sign-in (user nil: discoverable) or a step-up
	// (the user and their passkeys; none is no_passkeys), bound to
	// binding. It returns the options for navigator.credentials.get and
	// the ceremony's state.
	BeginLogin(user *PasskeyUser, passkeys []*Passkey, purpose WebAuthnPurpose, binding string) (json.RawMessage, *WebAuthnChallenge, error)
	// FinishRegistration verifies a registration's answer against its
	// state and returns the new passkey to store; passkey_failed.
	FinishRegistration(state *WebAuthnChallenge, response []byte) (*Passkey, error)
	// FinishLogin verifies an assertion against its state and returns the
	// passkey used with its new counter, backup state and LastUsedAt;
	// passkey_unknown or passkey_failed.
	FinishLogin(state *WebAuthnChallenge, response []byte, lookup PasskeyLookup) (*Passkey, error)
	// ChallengeHash returns the hash the answer's ceremony state is stored
	// under; passkey_failed when it has no readable challenge.
	ChallengeHash(response []byte) (string, error)
}
