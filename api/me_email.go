package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"payd"
)

// A person's own password and email address (spec 7.6, 8.3;
// docs/accounts.md "Recovery"): POST /me/password changes the password,
// POST /me/email starts an email change confirmed by a code sent to the
// new address (POST /me/email/verify), and the old address gets an alert
// whose link undoes it (POST /email-changes/undo).

type passwordChangeRequest struct {
	CurrentPassword *string `json:"current_password"`
	Password        string  `json:"password"`
}

// changePassword sets a new password and ends the person's other
// sessions. A passkey-only account sets its first password with the
// route's step-up alone: it has no current password to give.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) error {
	var req passwordChangeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	now := s.clock.Now()
	if c.user.OnHold(now) > 0 {
		return payd.ResetOnHold(*c.user.ResetHoldUntil, now)
	}
	if err := s.proveCurrent(ctx, c, req.CurrentPassword); err != nil {
		return err
	}
	hash, err := s.newPassword(ctx, req.Password, c.user.Email)
	if err != nil {
		return err
	}
	var u *payd.User
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		var err error
		if u, err = q.UserByID(ctx, c.user.ID); err != nil {
			return err
		}
		// A first password (a passkey-only account, perhaps after an undone
		// email change disabled the none it had) starts enabled.
		return s.setPassword(ctx, q, u, hash, c.session.ID)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toUser(u)})
	return nil
}

// proveCurrent checks current_password on /me/password and /me/email with
// the per-session locks of spec 8.3. An account without a password has
// proven itself by the route's step-up (a passkey); a disabled password
// proves nothing (password_reset_required).
func (s *Server) proveCurrent(ctx context.Context, c *call, password *string) error {
	if c.user.PasswordHash == "" {
		return nil
	}
	if c.user.PasswordDisabled {
		return passwordResetRequired()
	}
	if password == nil {
		return payd.FieldError("current_password", "current_password is required")
	}
	err := s.currentPassword(ctx, c, *password)
	var e *payd.Error
	if errors.As(err, &e) && e.Field == "password" {
		e.Field = "current_password"
	}
	return err
}

// emailChange is a started email change on the wire.
type emailChange struct {
	Kind          string `json:"kind"`
	Email         string `json:"email"`
	CodeExpiresAt Time   `json:"code_expires_at"`
	ExpiresAt     Time   `json:"expires_at"`
}

func toEmailChange(ec *payd.EmailChange) emailChange {
	return emailChange{Kind: "email_change", Email: ec.NewEmail, CodeExpiresAt: Time(ec.CodeSentAt.Add(payd.CodeTTL)),
		ExpiresAt: Time(ec.ExpiresAt)}
}

type emailChangeRequest struct {
	Email           string  `json:"email"`
	CurrentPassword *string `json:"current_password"`
}

// changeEmail starts an email change: a 6-digit code goes to the new
// address (within its email quota; over it the answer is the same and
// nothing is sent), at most EmailChangesPerHour started per person.
func (s *Server) changeEmail(w http.ResponseWriter, r *http.Request) error {
	var req emailChangeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := payd.CheckEmail("email", req.Email); err != nil {
		return err
	}
	if err := s.mailable(); err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	if err := s.proveCurrent(ctx, c, req.CurrentPassword); err != nil {
		return err
	}
	if payd.EmailKey(req.Email) == payd.EmailKey(c.user.Email) {
		return payd.FieldError("email", "this is already your email address")
	}
	now := s.clock.Now()
	code := payd.NewCode()
	ec := &payd.EmailChange{ID: payd.NewID(payd.PrefixEmailChange), UserID: c.user.ID, OldEmail: c.user.Email,
		NewEmail: req.Email, CodeHash: payd.SecretHash(code), CodeSentAt: now, CodesSent: 1, SessionStartedAt: c.session.CreatedAt,
		Status: payd.EmailChangePending, CreatedAt: now, ExpiresAt: now.Add(payd.VerificationTTL)}
	err := s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if _, err := q.UserByEmail(ctx, req.Email); err == nil {
			return emailTaken()
		} else if !payd.IsNotFound(err) {
			return err
		}
		if started, _, err := q.CountEmailChanges(ctx, c.user.ID, now.Add(-time.Hour)); err != nil {
			return err
		} else if started >= payd.EmailChangesPerHour {
			return payd.TooManyEmails(time.Hour, "3 email changes were started in the last hour; try again later")
		}
		if err := q.CreateEmailChange(ctx, ec); err != nil {
			return err
		}
		return s.sendQuota(ctx, q, req.Email, func() (*payd.Email, error) {
			return s.opts.Letters.EmailChangeCode(req.Email, code, now)
		})
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, single{toEmailChange(ec)})
	return nil
}

func emailTaken() error {
	return &payd.Error{Code: payd.ErrEmailTaken, Field: "email", Message: "this email belongs to another account"}
}

// pendingChange returns the person's email change waiting for its code:
// verification_expired when there is none (finished, replaced, undone) or
// it is older than a day.
func (s *Server) pendingChange(ctx context.Context, userID string, now time.Time) (*payd.EmailChange, error) {
	ec, err := s.store.PendingEmailChange(ctx, userID)
	if payd.IsNotFound(err) || err == nil && !now.Before(ec.ExpiresAt) {
		return nil, payd.Errorf(payd.ErrVerificationExpired, "no email change is waiting for a code: it was finished, replaced, or started more than a day ago; start it again")
	}
	return ec, err
}

// resendEmailCode sends the pending email change a new code: a minute
// after the last at the soonest, at most CodesPerVerification per change,
// within the new address's email quota (too_many_emails otherwise).
func (s *Server) resendEmailCode(w http.ResponseWriter, r *http.Request) error {
	if err := s.mailable(); err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	now := s.clock.Now()
	ec, err := s.pendingChange(ctx, c.user.ID, now)
	if err != nil {
		return err
	}
	if err := changeCode(ec).mayResend(now); err != nil {
		return err
	}
	code := payd.NewCode()
	next := *ec
	next.CodeHash, next.CodeSentAt, next.CodesSent = payd.SecretHash(code), now, ec.CodesSent+1
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if wait, err := s.emailQuota(ctx, q, ec.NewEmail, now); err != nil {
			return err
		} else if wait > 0 {
			return payd.TooManyEmails(wait, "too many emails to this address; try again later")
		}
		saved := next // a copy: fn may run again, and SaveEmailChange counts the version up
		if err := q.SaveEmailChange(ctx, &saved); err != nil {
			return err
		}
		e, err := s.opts.Letters.EmailChangeCode(ec.NewEmail, code, now)
		if err != nil {
			return err
		}
		return q.CreateEmail(ctx, e)
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		// Another resend, or the change's end, won the race.
		if _, perr := s.pendingChange(ctx, c.user.ID, now); perr != nil {
			return perr
		}
		return payd.TooManyEmails(payd.CodeResendAfter, "a code was sent just now; wait before asking again")
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, single{toEmailChange(&next)})
	return nil
}
