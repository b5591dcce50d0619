package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"payd"
	"payd/clock"
)

// The rules every account route shares: the bot check, new passwords, the
// email quotas and the failure locks of spec 8.3, each in one place.

// challenge verifies the Service-Challenge token for form (spec 5.8).
func (s *Server) challenge(r *http.Request, form payd.ChallengeForm) error {
	if s.opts.Challenger == nil {
		return payd.ChallengeUnavailable()
	}
	return s.opts.Challenger.Verify(r.Context(), form, r.Header.Get(payd.ChallengeHeader), s.clientIP(r))
}

// mailable answers email_unavailable when no email can go out.
func (s *Server) mailable() error {
	if !s.opts.Mail || s.opts.Letters == nil {
		return &payd.Error{Code: payd.ErrEmailUnavailable, Message: "this deployment cannot send email; ask its operator to configure --smtp"}
	}
	return nil
}

// newPassword checks a new password (the strength rules, then the breach
// check when configured, which never blocks when it cannot answer) and
// returns its hash.
func (s *Server) newPassword(ctx context.Context, password, email string) (string, error) {
	pw := s.opts.Passwords.Normalize(password)
	if err := payd.CheckPassword(pw, email); err != nil {
		return "", err
	}
	if s.opts.Breaches != nil {
		if n, err := s.opts.Breaches.Breached(ctx, pw); err == nil && n > 0 {
			return "", payd.BreachedPassword()
		}
	}
	return s.opts.Passwords.Hash(hashWait(ctx), pw)
}

// hashAnswerBudget is how long after a request began its password hash
// may still wait for the hasher's room. The hasher bounds its own wait
// (password.DefaultMaxWait, 750 ms), but a request also spends time
// before the hash (the bot check, counting the attempt: database writes,
// which under a flood of 100 sign-ins took 100–800 ms here) and after it
// (the session), and that came on top: answers' p99 reached 1.2 s on
// SQLite and 1.8 s on PostgreSQL. Counted from the request's start, 750
// ms still gave 1.05–1.09 s on PostgreSQL; 600 ms gave 0.64–0.74 s on both
// databases with as many sign-ins checked (docs/passwords.md, "Through
// the server").
const hashAnswerBudget = 600 * time.Millisecond

// hashWait tells the hasher how long this request's hash may still wait.
func hashWait(ctx context.Context) context.Context {
	c := callOf(ctx)
	if c.start.IsZero() {
		return ctx
	}
	return payd.WithHashWait(ctx, hashAnswerBudget-clock.Real{}.Now().Sub(c.start))
}

// emailQuota is how long until the address may be sent another account
// email (5 an hour, 20 a day; spec 8.3), 0 when it may now.
func (s *Server) emailQuota(ctx context.Context, q payd.Queries, to string, now time.Time) (time.Duration, error) {
	hour, err := q.CountEmails(ctx, to, payd.QuotaEmailKinds, now.Add(-time.Hour))
	if err != nil {
		return 0, err
	}
	if hour >= payd.EmailsPerAddressHour {
		return time.Hour, nil
	}
	day, err := q.CountEmails(ctx, to, payd.QuotaEmailKinds, now.Add(-24*time.Hour))
	if err != nil {
		return 0, err
	}
	if day >= payd.EmailsPerAddressDay {
		return 24 * time.Hour, nil
	}
	return 0, nil
}

// sendQuota puts the email build makes in the outbox when the address's
// quota allows, and otherwise sends nothing: requests other than resends
// and alert emails answer normally over the quota (spec 8.3).
func (s *Server) sendQuota(ctx context.Context, q payd.Queries, to string, build func() (*payd.Email, error)) error {
	wait, err := s.emailQuota(ctx, q, to, s.clock.Now())
	if err != nil || wait > 0 {
		return err
	}
	e, err := build()
	if err != nil {
		return err
	}
	return q.CreateEmail(ctx, e)
}

// passwordLock is where a sign-in's failed passwords are counted: a
// browser that has signed in to the account before keeps its own count,
// which never disables the password; every other attempt counts against
// the email, known or not, so an unknown address locks like a real one.
type passwordLock struct {
	subject string
	device  bool
}

// passwordLockOf finds the count a sign-in attempt goes to. The device
// is looked up whether or not the address has an account, so the answer
// takes the same time for both.
func (s *Server) passwordLockOf(ctx context.Context, r *http.Request, email string, u *payd.User) (passwordLock, error) {
	d := cookie(r, s.cookieName(deviceCookie))
	if !validToken(d) {
		return passwordLock{subject: "pw:" + payd.EmailKey(email)}, nil
	}
	userID := "usr_none"
	if u != nil {
		userID = u.ID
	}
	known, err := s.store.KnownDevice(ctx, userID, payd.SecretHash(d))
	if err != nil {
		return passwordLock{}, err
	}
	if known && u != nil {
		return passwordLock{subject: "pwdev:" + u.ID + ":" + payd.SecretHash(d), device: true}, nil
	}
	return passwordLock{subject: "pw:" + payd.EmailKey(email)}, nil
}

// lockKeep is how long a failure count is kept after its last failure.
const lockKeep = 24 * time.Hour

// try reserves one try of subject before the check it guards
// (payd.AccountStore.TryAttempt): while the subject is locked it answers
// too_many_attempts with the wait, otherwise the try is counted, with
// the lock the schedule gives starting at once. Reserving first is what
// keeps concurrent guesses within the limits of spec 8.3; a success
// calls ClearAttempts.
func (s *Server) try(ctx context.Context, subject string, keep time.Duration, lock func(int) time.Duration, msg string) (*payd.Attempt, error) {
	now := s.clock.Now()
	a, ok, err := s.store.TryAttempt(ctx, subject, now, now.Add(keep), lock)
	if err != nil {
		return nil, err
	}
	if !ok {
		return a, payd.TooManyAttempts(a.Locked(now), msg)
	}
	return a, nil
}

// verifyPassword is the one password check: it compares password with the
// PHC string encoded, or, when there is none (no account, or none with a
// password), does the same work and fails, so both take the same time.
func (s *Server) verifyPassword(ctx context.Context, password, encoded string) (ok, rehash bool, err error) {
	ctx = hashWait(ctx)
	if encoded == "" {
		return false, false, s.opts.Passwords.VerifyNone(ctx)
	}
	return s.opts.Passwords.Verify(ctx, s.opts.Passwords.Normalize(password), encoded)
}

// currentPassword checks a signed-in person's current password (step-up,
// /me/password, /me/email, /me/two-factor) with the per-session locks of
// spec 8.3.
func (s *Server) currentPassword(ctx context.Context, c *call, password string) error {
	subject := "cur:" + c.session.ID
	if _, err := s.try(ctx, subject, lockKeep, payd.PasswordLock, "too many wrong passwords; wait for Retry-After seconds"); err != nil {
		return err
	}
	encoded := c.user.PasswordHash
	if c.user.PasswordDisabled {
		encoded = ""
	}
	ok, _, err := s.verifyPassword(ctx, password, encoded)
	if err != nil {
		return err
	}
	if !ok {
		return &payd.Error{Code: payd.ErrInvalidCredentials, Field: "password", Message: "the current password is wrong"}
	}
	return s.store.ClearAttempts(ctx, subject)
}

// emailedCode is a 6-digit code payd emailed to finish something (a
// sign-up, an email change): the rules of spec 8.3 for such codes live in
// its methods, for every route that takes one.
type emailedCode struct {
	// id is the sign-up's or change's; each new code counts its tries
	// apart (codes sent so far, sent).
	id   string
	sent int
	hash string
	// sentAt is when the current code went out; endsAt when the sign-up
	// or change itself ends.
	sentAt, endsAt time.Time
	// unsent is a code never emailed (a sign-up for a taken address):
	// every input is wrong, after the same steps as any other.
	unsent bool
}

// resendWait is how long until another code may be sent (0 when it may).
func (e emailedCode) resendWait(now time.Time) time.Duration {
	return max(e.sentAt.Add(payd.CodeResendAfter).Sub(now), 0)
}

// mayResend answers too_many_emails while the last code is under a minute
// old, or CodesPerVerification have been sent.
func (e emailedCode) mayResend(now time.Time) error {
	if wait := e.resendWait(now); wait > 0 {
		return payd.TooManyEmails(wait, "a code was sent less than a minute ago; wait before asking again")
	}
	if e.sent >= payd.CodesPerVerification {
		return payd.TooManyEmails(e.endsAt.Sub(now), "5 codes have been sent already; start again tomorrow")
	}
	return nil
}

// subject counts the tries of the current code.
func (e emailedCode) subject() string { return "code:" + e.id + ":" + strconv.Itoa(e.sent) }

// checkCode compares input with the code: the try is reserved first (5
// per code, then too_many_attempts until a new code can be sent, so no
// burst gets more), a wrong or malformed code is invalid_code, and a
// right one older than payd.CodeTTL is code_expired. The caller clears
// the count (ClearAttempts(e.subject())) once the code is spent.
func (s *Server) checkCode(ctx context.Context, e emailedCode, input string, now time.Time) error {
	_, err := s.try(ctx, e.subject(), payd.VerificationTTL, func(n int) time.Duration {
		if n >= payd.CodeTries {
			return e.endsAt.Sub(now)
		}
		return 0
	}, "too many wrong tries of this code")
	if payd.ErrorCode(err) == payd.ErrTooManyAttempts {
		return payd.TooManyAttempts(e.resendWait(now), "too many wrong tries of this code; ask for a new code")
	} else if err != nil {
		return err
	}
	code, ok := payd.NormalizeCode(input)
	if !ok || e.unsent || !payd.SameSecret(payd.SecretHash(code), e.hash) {
		return payd.InvalidCode()
	}
	if !now.Before(e.sentAt.Add(payd.CodeTTL)) {
		return &payd.Error{Code: payd.ErrCodeExpired, Field: "code", Message: "this code is older than 15 minutes; ask for a new code"}
	}
	return nil
}

// setPassword is the one place a person's password changes (a reset, a
// change at /me/password): the new hash, working at once (a password
// disabled by failures or an undone email change, and a hold, end), the
// failure counts of the address and of the account's browsers
// forgotten, and every session but keep ("" for none) ended, since one of
// them may be whoever knew the old password.
func (s *Server) setPassword(ctx context.Context, q payd.Queries, u *payd.User, hash, keep string) error {
	u.PasswordHash, u.PasswordDisabled, u.ResetHoldUntil, u.UpdatedAt = hash, false, nil, s.clock.Now()
	if err := q.SaveUser(ctx, u); err != nil {
		return err
	}
	if err := q.ClearAttempts(ctx, "pw:"+payd.EmailKey(u.Email)); err != nil {
		return err
	}
	if err := q.ClearDeviceAttempts(ctx, u.ID); err != nil {
		return err
	}
	_, err := q.DeleteSessions(ctx, u.ID, keep)
	return err
}
