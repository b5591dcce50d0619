package payd

import (
	"context"
	"time"
)

// Recovery (spec 7.6, 8.3; docs/accounts.md "Recovery"): a forgotten
// password is reset through an emailed link; an email change is confirmed
// by a code sent to the new address, and the old address is alerted with a
// link that undoes it. Links carry a random token and codes six digits;
// the rows hold only their SecretHash.

// Recovery lifetimes (docs/accounts.md "Recovery").
const (
	// ResetTTL is how long a password reset link works; the email says
	// so (package mail's ResetValidity is the same hour).
	ResetTTL = time.Hour
	// UndoTTL is how long the undo link of an email change works: a week,
	// so a person who reads the old mailbox only now and then still finds
	// it working.
	UndoTTL = 7 * 24 * time.Hour
	// ResetHold is how long an undone email change refuses a new password
	// (reset_on_hold): whoever made the change cannot race the owner to a
	// reset.
	ResetHold = 24 * time.Hour
)

// Recovery id prefixes.
const (
	PrefixPasswordReset = "pwr_"
	PrefixEmailChange   = "emc_"
)

// PasswordResetStatus is where a reset link stands; only a pending one
// works.
type PasswordResetStatus string

// Password reset statuses.
const (
	ResetPending  PasswordResetStatus = "pending"
	ResetUsed     PasswordResetStatus = "used"
	ResetReplaced PasswordResetStatus = "replaced"
)

// PasswordReset is an emailed link that sets a new password.
type PasswordReset struct {
	ID     string
	UserID string
	// Email is the address the link went to: once the account's address
	// changes, the link no longer works.
	Email     string
	TokenHash string
	Status    PasswordResetStatus
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NewPasswordReset makes a reset link for u at now and returns its token
// with the row to store.
func NewPasswordReset(u *User, now time.Time) (string, *PasswordReset) {
	token := RandomString(43)
	return token, &PasswordReset{ID: NewID(PrefixPasswordReset), UserID: u.ID, Email: u.Email,
		TokenHash: SecretHash(token), Status: ResetPending, CreatedAt: now, ExpiresAt: now.Add(ResetTTL)}
}

// Usable reports whether the link still works at now for u: pending,
// younger than ResetTTL, and sent to u's present address.
func (p *PasswordReset) Usable(u *User, now time.Time) bool {
	return p.Status == ResetPending && now.Before(p.ExpiresAt) && EmailKey(p.Email) == EmailKey(u.Email)
}

// InvalidToken is the invalid_token error on field token.
func InvalidToken(what string) *Error {
	return &Error{Code: ErrInvalidToken, Field: "token", Message: "this " + what + " link was used, replaced by a newer one, or has expired"}
}

// ResetOnHold is reset_on_hold until until (an undone email change).
func ResetOnHold(until, now time.Time) *Error {
	return &Error{Code: ErrResetOnHold, RetryAfter: until.Sub(now),
		Message: "an email change was undone on this account; a new password can be chosen after " + until.UTC().Format(time.RFC3339)}
}

// OnHold returns how long u still refuses a new password at now (0 when not).
func (u *User) OnHold(now time.Time) time.Duration {
	if u.ResetHoldUntil == nil || !now.Before(*u.ResetHoldUntil) {
		return 0
	}
	return u.ResetHoldUntil.Sub(now)
}

// EmailChangeStatus is where an email change stands.
type EmailChangeStatus string

// Email change statuses: a pending change waits for its code; a done one
// may be undone until UndoExpiresAt.
const (
	EmailChangePending  EmailChangeStatus = "pending"
	EmailChangeDone     EmailChangeStatus = "done"
	EmailChangeReplaced EmailChangeStatus = "replaced"
	EmailChangeUndone   EmailChangeStatus = "undone"
)

// EmailChange moves an account to a new address: a code sent there
// confirms it, and an alert to the old address carries the link that
// undoes it.
type EmailChange struct {
	ID       string
	UserID   string
	OldEmail string
	NewEmail string
	// CodeHash, CodeSentAt and CodesSent are the emailed code's,
	// with the rules of a sign-up's (spec 8.3).
	CodeHash   string
	CodeSentAt time.Time
	CodesSent  int
	Status     EmailChangeStatus
	// SessionStartedAt is when the session that started the change
	// signed in: an undo removes the passkeys and two-step added since,
	// which whoever made the change may have set up before starting it.
	SessionStartedAt time.Time
	// UndoHash is the hash of the undo link's token ("" until done).
	UndoHash      string
	CreatedAt     time.Time
	ExpiresAt     time.Time
	DoneAt        *time.Time
	UndoExpiresAt *time.Time
	Version       int
}

// RecoveryStore keeps password reset links and email changes.
type RecoveryStore interface {
	// CreatePasswordReset stores a reset link and marks the user's earlier
	// pending links replaced.
	CreatePasswordReset(ctx context.Context, p *PasswordReset) error
	// PasswordResetByToken returns the link whose token hashes to hash;
	// not_found otherwise.
	PasswordResetByToken(ctx context.Context, hash string) (*PasswordReset, error)
	// UsePasswordReset marks a pending link used at now; conflict when it
	// is no longer pending (used or replaced meanwhile).
	UsePasswordReset(ctx context.Context, id string, now time.Time) error

	// CreateEmailChange stores an email change and marks the user's
	// earlier pending changes replaced.
	CreateEmailChange(ctx context.Context, c *EmailChange) error
	// PendingEmailChange returns the user's newest pending change; not_found otherwise.
	PendingEmailChange(ctx context.Context, userID string) (*EmailChange, error)
	// EmailChangeByUndo returns the change whose undo token hashes to
	// hash; not_found otherwise.
	EmailChangeByUndo(ctx context.Context, hash string) (*EmailChange, error)
	// SaveEmailChange writes c if it is still at c.Version, then counts
	// the version up; conflict otherwise.
	SaveEmailChange(ctx context.Context, c *EmailChange) error
	// EndEmailChanges marks the user's pending and done changes replaced:
	// after an undo, no other change's code or undo link works.
	EndEmailChanges(ctx context.Context, userID string) error
	// ClearDeviceAttempts forgets the failed-password counts of every
	// browser of the user (a reset clears them, spec 8.3).
	ClearDeviceAttempts(ctx context.Context, userID string) error
	// CountEmailChanges counts the user's changes started since then and
	// those finished (alerted) since then.
	CountEmailChanges(ctx context.Context, userID string, since time.Time) (started, alerted int, err error)
}
