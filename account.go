package payd

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math/big"
	"strings"
	"time"
)

// Accounts (spec 5.5–5.8, 7.6, 8; docs/accounts.md): people sign up with an
// emailed code, sign in to server-side sessions and act for the businesses
// they belong to. Every secret a person is sent or holds (codes, links,
// session cookies) is stored only as its SHA-256 (SecretHash): each carries
// enough randomness, and the per-code and per-person locks of spec 8.3
// bound the guesses, so a slow hash would add nothing but work.

// Account lifetimes and limits (spec 8.1, 8.3; docs/accounts.md).
const (
	// CodeTTL is how long an emailed code is good (spec 8.1).
	CodeTTL = 15 * time.Minute
	// VerificationTTL is how long a sign-up or email change may be
	// finished (spec 8.1).
	VerificationTTL = 24 * time.Hour
	// CodeTries is how many wrong tries one emailed code takes (spec 8.3).
	CodeTries = 5
	// CodeResendAfter is the wait between two codes of one sign-up.
	CodeResendAfter = time.Minute
	// CodesPerVerification is how many codes one sign-up may be sent.
	CodesPerVerification = 5
	// SignupWrongPerDay is the wrong sign-up codes allowed per address and
	// day, across all its sign-ups (spec 8.3).
	SignupWrongPerDay = 10
	// ProofTTL is how long a step-up proof lets a session make sensitive
	// changes (spec 5.7, 8.1).
	ProofTTL = 15 * time.Minute
	// SessionIdle ends a session unused for this long (sliding expiry).
	SessionIdle = 12 * time.Hour
	// SessionMax ends every session this long after sign-in, used or not
	// (absolute expiry).
	SessionMax = 14 * 24 * time.Hour
	// SessionTouchEvery bounds how often a session's last use is written:
	// the sliding expiry is kept to the minute without a write per request.
	SessionTouchEvery = time.Minute
	// PasswordDisableAfter failed passwords in a row disable an account's
	// password until it is reset (spec 8.3).
	PasswordDisableAfter = 100
)

// Account id prefixes.
const (
	PrefixUser    = "usr_"
	PrefixSession = "ses_"
	PrefixSignup  = "sgn_"
)

// SecretHash is the stored form of a code, link token or session token:
// the hex SHA-256 of its text.
func SecretHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// SameSecret compares two hashes in constant time.
func SameSecret(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// NewCode returns a random 6-digit code such as emails carry.
func NewCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	s := n.String()
	return strings.Repeat("0", 6-len(s)) + s
}

// NormalizeCode strips the spaces and dashes people type into a 6-digit
// code and reports whether what is left is exactly six ASCII digits.
func NormalizeCode(s string) (string, bool) {
	if len(s) > 32 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '-':
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	out := b.String()
	return out, len(out) == 6
}

// InvalidCode is the invalid_code error on field code.
func InvalidCode() *Error {
	return &Error{Code: ErrInvalidCode, Field: "code", Message: "the code is wrong; check the latest email and try again"}
}

// TooManyAttempts is too_many_attempts, waiting wait (at least a second:
// every 429 carries Retry-After, spec 8.3).
func TooManyAttempts(wait time.Duration, msg string) *Error {
	return &Error{Code: ErrTooManyAttempts, Message: msg, RetryAfter: max(wait, time.Second)}
}

// TooManyEmails is too_many_emails, waiting wait (at least a second).
func TooManyEmails(wait time.Duration, msg string) *Error {
	return &Error{Code: ErrTooManyEmails, Message: msg, RetryAfter: max(wait, time.Second)}
}

// User is a person who signs in to the dashboard.
type User struct {
	ID    string
	Email string
	Name  string
	// PasswordHash is the PHC string of the password (package password);
	// "" for an account that signs in with passkeys only.
	PasswordHash string
	// PasswordDisabled stops the password working until it is reset: after
	// PasswordDisableAfter failures, or after an undone email change.
	PasswordDisabled bool
	// ResetHoldUntil, when set, refuses a new password until then
	// (reset_on_hold after an undone email change).
	ResetHoldUntil *time.Time
	// TOTPSecret is the authenticator secret once two-step sign-in is on
	// ("" while off); TOTPLastStep the last time step accepted, so a code
	// is never taken twice; RecoveryCodes the hashes of the unused
	// recovery codes.
	TOTPSecret    string
	TOTPEnabledAt *time.Time
	TOTPLastStep  int64
	RecoveryCodes []string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Version counts writes: SaveUser refuses a stale copy.
	Version int
}

// NewUser validates a new user's fields.
func NewUser(email, name, passwordHash string, now time.Time) (*User, error) {
	if err := CheckEmail("email", email); err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if err := CheckText("name", name, 200, false); err != nil {
		return nil, err
	}
	return &User{ID: NewID(PrefixUser), Email: email, Name: name, PasswordHash: passwordHash,
		CreatedAt: now, UpdatedAt: now}, nil
}

// TwoFactor reports whether two-step sign-in is on.
func (u *User) TwoFactor() bool { return u.TOTPSecret != "" }

// Session is a signed-in browser. The cookie holds a random token; the row
// holds its hash, so a copy of the database signs nobody in.
type Session struct {
	// ID names the session in the list a person sees (ses_…); it is not
	// the cookie's token.
	ID        string
	TokenHash string
	UserID    string
	// BusinessID is the business the session last acted for ("" before
	// any), where the dashboard opens.
	BusinessID string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// ExpiresAt is the absolute end (SessionMax after sign-in).
	ExpiresAt time.Time
	// ProofAt is the last password or passkey proof (spec 5.7).
	ProofAt *time.Time
	// How the session signed in: password, passkey, signup.
	Method    string
	UserAgent string
	IP        string
	// TOTPSetupSecret and TOTPSetupAt hold a two-step setup started in
	// this session until it is confirmed (valid 10 minutes, spec 8.1).
	TOTPSetupSecret string
	TOTPSetupAt     *time.Time
}

// NewSession starts a session for user at now and returns the cookie's
// token with the row to store.
func NewSession(userID, method, userAgent, ip string, now time.Time) (string, *Session) {
	token := RandomString(43)
	proof := now
	return token, &Session{
		ID: NewID(PrefixSession), TokenHash: SecretHash(token), UserID: userID, Method: method,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionMax), ProofAt: &proof,
		UserAgent: truncateUTF8(userAgent, 300), IP: ip,
	}
}

// EndsAt is when the session ends unless used again: SessionIdle after
// its last use, and never after its absolute end.
func (s *Session) EndsAt() time.Time {
	if idle := s.LastSeenAt.Add(SessionIdle); idle.Before(s.ExpiresAt) {
		return idle
	}
	return s.ExpiresAt
}

// Live reports whether the session may still be used at now.
func (s *Session) Live(now time.Time) bool { return now.Before(s.EndsAt()) }

// Proven reports whether the session has a proof younger than ProofTTL.
func (s *Session) Proven(now time.Time) bool {
	return s.ProofAt != nil && now.Before(s.ProofAt.Add(ProofTTL))
}

// StepUpRequired is the step_up_required error.
func StepUpRequired() *Error {
	return Errorf(ErrStepUpRequired, "confirm it is you: sign in again with your password or passkey at POST /sessions/current/step-up, then retry within 15 minutes")
}

// SignupStatus is where a sign-up stands.
type SignupStatus string

// Sign-up statuses; only a pending sign-up can be verified.
const (
	SignupPending  SignupStatus = "pending"
	SignupDone     SignupStatus = "done"
	SignupReplaced SignupStatus = "replaced"
)

// Signup is a sign-up waiting for its emailed code.
type Signup struct {
	ID    string
	Email string
	Name  string
	// PasswordHash is "" for a passkey sign-up.
	PasswordHash string
	// BrowserHash is the hash of the token of the browser that started
	// it (a cookie), so a code entered in another browser needs the
	// password too (password_required), and a passkey sign-up can be
	// finished only where it began (signup_browser_required).
	BrowserHash string
	CodeHash    string
	CodeSentAt  time.Time
	CodesSent   int
	// Exists says the address already had an account when the sign-up
	// started: no code is ever sent (an account_exists email goes
	// instead), yet every route answers as for any other sign-up, so none
	// tells whether an address has an account.
	Exists    bool
	Status    SignupStatus
	CreatedAt time.Time
	ExpiresAt time.Time
	Version   int
}

// MemberRole is what a person may do for a business (docs/accounts.md).
type MemberRole string

// The roles, from most to least.
const (
	RoleOwner     MemberRole = "owner"
	RoleAdmin     MemberRole = "admin"
	RoleDeveloper MemberRole = "developer"
	RoleViewer    MemberRole = "viewer"
)

// Roles lists the roles in order.
var Roles = []MemberRole{RoleOwner, RoleAdmin, RoleDeveloper, RoleViewer}

// ParseRole reads a role name; owner cannot be given, only held.
func ParseRole(s string) (MemberRole, error) {
	switch r := MemberRole(s); r {
	case RoleAdmin, RoleDeveloper, RoleViewer:
		return r, nil
	}
	return "", FieldError("role", "role must be admin, developer or viewer")
}

// Permissions is what the role may do in the API's areas: owners and
// admins everything; developers read payments and customers, and change
// links, webhooks and checkout settings; viewers read everything. Team
// and API key management are ManagesTeam and ManagesKeys.
func (r MemberRole) Permissions() Permissions {
	switch r {
	case RoleOwner, RoleAdmin:
		p := Permissions{}
		for _, a := range Areas {
			p[a] = AccessWrite
		}
		return p
	case RoleDeveloper:
		return Permissions{AreaPayments: AccessRead, AreaCustomers: AccessRead, AreaLinks: AccessWrite,
			AreaWebhooks: AccessWrite, AreaCheckoutSettings: AccessWrite, AreaWallet: AccessRead, AreaMetrics: AccessRead}
	case RoleViewer:
		return Permissions{AreaPayments: AccessRead, AreaCustomers: AccessRead, AreaLinks: AccessRead,
			AreaWebhooks: AccessRead, AreaCheckoutSettings: AccessRead, AreaWallet: AccessRead, AreaMetrics: AccessRead}
	}
	return Permissions{}
}

// ManagesKeys reports whether the role may list, create and revoke API keys.
func (r MemberRole) ManagesKeys() bool {
	return r == RoleOwner || r == RoleAdmin || r == RoleDeveloper
}

// Covers reports whether the role may hand out all that k can do: a person
// creates, changes, rolls and revokes only keys that can do no more than
// their role (a developer, say, restricted keys within the developer's
// areas), so that no key lifts a person above their role.
func (r MemberRole) Covers(k *APIKey) bool {
	p := r.Permissions()
	for _, a := range Areas {
		need := AccessNone
		switch k.Kind {
		case KeySecret:
			need = AccessWrite
		case KeyRestricted:
			need = k.Permissions[a]
		}
		if p[a] < need {
			return false
		}
	}
	return true
}

// ManagesTeam reports whether the role may invite and remove people.
func (r MemberRole) ManagesTeam() bool { return r == RoleOwner || r == RoleAdmin }

// Membership says that a user belongs to a business with a role.
type Membership struct {
	BusinessID string
	UserID     string
	Role       MemberRole
	CreatedAt  time.Time
}

// Attempt is the failure count of one subject of spec 8.3: an email's
// passwords, a browser's, a session's current passwords, a person's
// two-step codes, an address's sign-up codes of one day.
type Attempt struct {
	Subject     string
	Failures    int
	LockedUntil *time.Time
}

// Locked returns how long the subject stays locked at now (0 when not).
func (a *Attempt) Locked(now time.Time) time.Duration {
	if a == nil || a.LockedUntil == nil || !now.Before(*a.LockedUntil) {
		return 0
	}
	return a.LockedUntil.Sub(now)
}

// PasswordLock is the lock of spec 8.3 that the failures-th wrong password
// in a row starts: 5 lock a minute, 10 five, 15 fifteen, 20 and every 5
// after an hour; in between, none.
func PasswordLock(failures int) time.Duration {
	switch {
	case failures < 5 || failures%5 != 0:
		return 0
	case failures == 5:
		return time.Minute
	case failures == 10:
		return 5 * time.Minute
	case failures == 15:
		return 15 * time.Minute
	}
	return time.Hour
}

// CodeLock is the lock of two-step codes per person (spec 8.3): every 5th
// wrong code locks codes for 15 minutes.
func CodeLock(failures int) time.Duration {
	if failures > 0 && failures%5 == 0 {
		return 15 * time.Minute
	}
	return 0
}

// AccountStore keeps users, sessions, sign-ups, memberships and the
// attempt counts of spec 8.3.
type AccountStore interface {
	// CreateUser stores a new user; email_taken when the address (in any
	// case) belongs to another user.
	CreateUser(ctx context.Context, u *User) error
	// UserByID and UserByEmail (any case) return the user; not_found otherwise.
	UserByID(ctx context.Context, id string) (*User, error)
	UserByEmail(ctx context.Context, email string) (*User, error)
	// SaveUser writes u if it is still at u.Version, then counts the
	// version up; conflict when another write came first, email_taken when
	// the new address belongs to another user.
	SaveUser(ctx context.Context, u *User) error

	// CreateSignup stores a sign-up and marks the address's earlier
	// pending sign-ups replaced.
	CreateSignup(ctx context.Context, s *Signup) error
	// PendingSignup returns the newest pending sign-up of the address; not_found otherwise.
	PendingSignup(ctx context.Context, email string) (*Signup, error)
	// SaveSignup writes s if it is still at s.Version; conflict otherwise.
	SaveSignup(ctx context.Context, s *Signup) error

	// CreateSession stores a session.
	CreateSession(ctx context.Context, s *Session) error
	// SessionByToken returns the session whose token hashes to hash; not_found otherwise.
	SessionByToken(ctx context.Context, hash string) (*Session, error)
	// SessionsByUser lists a user's sessions, newest first.
	SessionsByUser(ctx context.Context, userID string) ([]*Session, error)
	// SaveSession writes the session's proof and two-step setup (and its
	// last use and business); not_found when it has ended.
	SaveSession(ctx context.Context, s *Session) error
	// TouchSession writes only the session's last use and business, so a
	// request that read the session before a step-up cannot undo it.
	TouchSession(ctx context.Context, id string, lastSeen time.Time, businessID string) error
	// DeleteSession ends one of the user's sessions; not_found otherwise.
	DeleteSession(ctx context.Context, userID, id string) error
	// DeleteSessions ends every session of the user but keep (which may
	// be "") and returns how many ended.
	DeleteSessions(ctx context.Context, userID, keep string) (int, error)

	// AddMember adds a user to a business; conflict when already a member.
	AddMember(ctx context.Context, m *Membership) error
	// Member returns the user's membership of the business; not_found otherwise.
	Member(ctx context.Context, businessID, userID string) (*Membership, error)
	// MembershipsByUser lists the businesses a user belongs to, oldest first.
	MembershipsByUser(ctx context.Context, userID string) ([]*Membership, error)

	// RememberDevice records that the browser whose cookie token hashes
	// to deviceHash signed in to the user's account; KnownDevice asks.
	RememberDevice(ctx context.Context, userID, deviceHash string, now time.Time) error
	KnownDevice(ctx context.Context, userID, deviceHash string) (bool, error)

	// Attempt returns the subject's count at now (zero when none, or
	// when it was kept past its keepUntil).
	Attempt(ctx context.Context, subject string, now time.Time) (*Attempt, error)
	// TryAttempt reserves one try of the subject before the check it
	// guards, atomically: while the subject is locked it counts nothing
	// and answers ok false; otherwise it counts the try, starts the lock
	// lock(count) gives (if any) in the same step, keeps the count until
	// keepUntil, and answers the attempt with ok true. So concurrent
	// guesses never get past a lock, on any number of replicas. A count
	// kept past its keepUntil starts again from one.
	TryAttempt(ctx context.Context, subject string, now, keepUntil time.Time, lock func(count int) time.Duration) (a *Attempt, ok bool, err error)
	// ClearAttempts forgets the subject's count.
	ClearAttempts(ctx context.Context, subject string) error

	// DeleteExpiredAccountRows sweeps what has ended by now: sessions;
	// sign-ups, reset links and email changes a day past their end; and
	// failure counts past their keep.
	DeleteExpiredAccountRows(ctx context.Context, now time.Time) (int, error)
}

// PasswordHasher hashes and verifies passwords (package password, with its
// bound on concurrent hashes).
type PasswordHasher interface {
	// Normalize is the form a password is checked and hashed in (NFKC).
	Normalize(password string) string
	// Hash returns the PHC string of a normalised password.
	Hash(ctx context.Context, password string) (string, error)
	// Verify compares a password with a PHC string; rehash says the
	// parameters are out of date.
	Verify(ctx context.Context, password, encoded string) (ok, rehash bool, err error)
	// VerifyNone does the work of a Verify that fails, for an unknown
	// email or an account without a password, so both take the same time.
	VerifyNone(ctx context.Context) error
}

// hashWaitKey carries the wait WithHashWait sets.
type hashWaitKey struct{}

// WithHashWait returns ctx telling the PasswordHasher to wait at most d
// for room before it answers busy (temporarily_unavailable), when that is
// less than its own bound: a request that spent time before its hash (the
// bot check, counting the attempt) still answers in time. d ≤ 0 means it
// does not wait at all.
func WithHashWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, hashWaitKey{}, d)
}

// HashWait returns the wait WithHashWait set on ctx, if any.
func HashWait(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(hashWaitKey{}).(time.Duration)
	return d, ok
}

// BreachChecker says how often a password appears in known breaches
// (Have I Been Pwned's range API, off by default).
type BreachChecker interface {
	Breached(ctx context.Context, password string) (int, error)
}

// The kinds of the account emails. The quota kinds count against the
// per-address limits of spec 8.3.
const (
	EmailSignupCode      = "signup_code"
	EmailAccountExists   = "account_exists"
	EmailPasswordReset   = "password_reset"
	EmailChangeCode      = "email_change_code"
	EmailChangeAlert     = "email_change_alert"
	EmailInvitation      = "invitation"
	EmailsPerAddressHour = 5
	EmailsPerAddressDay  = 20
	ResetLinksPerHour    = 3
	EmailChangesPerHour  = 3
	AlertEmailsPerHour   = 3
)

// QuotaEmailKinds are the kinds counted by the per-address quotas.
var QuotaEmailKinds = []string{EmailSignupCode, EmailAccountExists, EmailPasswordReset, EmailChangeCode, EmailChangeAlert}

// Letters writes the account emails (package mail's templates): each
// returns a pending email for the outbox.
type Letters interface {
	// SignupCode carries the code that finishes a sign-up.
	SignupCode(to, code string, now time.Time) (*Email, error)
	// AccountExists answers a sign-up for an address that already has an
	// account, so the sign-up form never tells whether one exists.
	AccountExists(to, signInURL string, now time.Time) (*Email, error)
	// PasswordReset carries the link that sets a new password (ResetTTL).
	PasswordReset(to, link string, now time.Time) (*Email, error)
	// EmailChangeCode carries the code that confirms a new address.
	EmailChangeCode(to, code string, now time.Time) (*Email, error)
	// EmailChangeAlert tells the old address of a changed account, with
	// the link that undoes the change.
	EmailChangeAlert(to, newEmail, undoLink string, now time.Time) (*Email, error)
	// Invitation invites to into business's team with role, from inviter
	// (a name or an address), with the link that accepts.
	Invitation(to, inviter, business string, role MemberRole, acceptURL string, now time.Time) (*Email, error)
}
