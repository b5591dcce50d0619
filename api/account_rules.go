package api

import (
	"context"
	"net/http"
	"time"

	"payd"
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
	return s.opts.Passwords.Hash(ctx, pw)
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

func (s *Server) passwordLockOf(ctx context.Context, r *http.Request, email string, u *payd.User) (passwordLock, error) {
	if d := cookie(r, deviceCookie); u != nil && validToken(d) {
		known, err := s.store.KnownDevice(ctx, u.ID, payd.SecretHash(d))
		if err != nil {
			return passwordLock{}, err
		}
		if known {
			return passwordLock{subject: "pwdev:" + u.ID + ":" + payd.SecretHash(d), device: true}, nil
		}
	}
	return passwordLock{subject: "pw:" + payd.EmailKey(email)}, nil
}

// lockKeep is how long a failure count is kept after its last failure.
const lockKeep = 24 * time.Hour

// checkLock answers too_many_attempts while subject is locked.
func (s *Server) checkLock(ctx context.Context, subject string) (*payd.Attempt, error) {
	a, err := s.store.Attempt(ctx, subject)
	if err != nil {
		return nil, err
	}
	if wait := a.Locked(s.clock.Now()); wait > 0 {
		return a, payd.TooManyAttempts(wait, "too many failed attempts; wait for Retry-After seconds")
	}
	return a, nil
}

// fail counts a failure of subject and starts the lock the schedule gives
// for the new count; it returns the count.
func (s *Server) fail(ctx context.Context, subject string, schedule func(int) time.Duration) (int, error) {
	now := s.clock.Now()
	n, err := s.store.AddFailure(ctx, subject, now, now.Add(lockKeep))
	if err != nil {
		return 0, err
	}
	if d := schedule(n); d > 0 {
		if err := s.store.LockAttempt(ctx, subject, now.Add(d)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// currentPassword checks a signed-in person's current password (step-up,
// /me/password, /me/email, /me/two-factor) with the per-session locks of
// spec 8.3.
func (s *Server) currentPassword(ctx context.Context, c *call, password string) error {
	subject := "cur:" + c.session.ID
	if _, err := s.checkLock(ctx, subject); err != nil {
		return err
	}
	ok := false
	if c.user.PasswordHash != "" && !c.user.PasswordDisabled {
		var err error
		if ok, _, err = s.opts.Passwords.Verify(ctx, s.opts.Passwords.Normalize(password), c.user.PasswordHash); err != nil {
			return err
		}
	} else if err := s.opts.Passwords.VerifyNone(ctx); err != nil {
		return err
	}
	if !ok {
		if _, err := s.fail(ctx, subject, payd.PasswordLock); err != nil {
			return err
		}
		return &payd.Error{Code: payd.ErrInvalidCredentials, Field: "password", Message: "the current password is wrong"}
	}
	return s.store.ClearAttempts(ctx, subject)
}
