package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// Finishing and undoing an email change (docs/accounts.md "Recovery").

type emailVerifyRequest struct {
	Code string `json:"code"`
}

// verifyEmailChange finishes the pending email change with the code sent
// to the new address: the account moves there, and the old address gets
// an alert with a link that undoes the change for payd.UndoTTL. The alert
// must go out, so the change waits (too_many_emails) while the person's
// alerts of the last hour or the old address's email quota are spent.
func (s *Server) verifyEmailChange(w http.ResponseWriter, r *http.Request) error {
	var req emailVerifyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
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
	if err := s.checkCode(ctx, changeCode(ec), req.Code, now); err != nil {
		return err
	}
	if err := s.alertQuota(ctx, ec, now); err != nil {
		return err
	}
	undo := payd.RandomString(43)
	var u *payd.User
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		done, until := *ec, now.Add(payd.UndoTTL) // a copy: fn may run again
		done.Status, done.UndoHash, done.DoneAt, done.UndoExpiresAt = payd.EmailChangeDone, payd.SecretHash(undo), &now, &until
		if err := q.SaveEmailChange(ctx, &done); err != nil {
			return err
		}
		var err error
		if u, err = q.UserByID(ctx, c.user.ID); err != nil {
			return err
		}
		if payd.EmailKey(u.Email) != payd.EmailKey(ec.OldEmail) {
			return payd.Errorf(payd.ErrVerificationExpired, "the account's address changed since this email change started; start it again")
		}
		u.Email, u.UpdatedAt = ec.NewEmail, now
		if err := q.SaveUser(ctx, u); payd.ErrorCode(err) == payd.ErrEmailTaken {
			return emailTaken()
		} else if err != nil {
			return err
		}
		e, err := s.opts.Letters.EmailChangeAlert(ec.OldEmail, ec.NewEmail, s.opts.PublicURL+"/dashboard/email-undo#token="+undo, now)
		if err != nil {
			return err
		}
		return q.CreateEmail(ctx, e)
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		return payd.Errorf(payd.ErrVerificationExpired, "this email change was finished or replaced meanwhile")
	} else if err != nil {
		return err
	}
	if err := s.store.ClearAttempts(ctx, changeCode(ec).subject()); err != nil {
		s.log.WarnContext(ctx, "clear code attempts", "error", err)
	}
	writeJSON(w, http.StatusOK, single{toUser(u)})
	return nil
}

// changeCode is an email change's emailed code.
func changeCode(ec *payd.EmailChange) emailedCode {
	return emailedCode{id: ec.ID, sent: ec.CodesSent, hash: ec.CodeHash, sentAt: ec.CodeSentAt, endsAt: ec.ExpiresAt}
}

// alertQuota answers too_many_emails while no alert may go out: the
// person was sent AlertEmailsPerHour alerts in the last hour, or the old
// address is over its email quota (spec 8.3).
func (s *Server) alertQuota(ctx context.Context, ec *payd.EmailChange, now time.Time) error {
	_, alerted, err := s.store.CountEmailChanges(ctx, ec.UserID, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	if alerted >= payd.AlertEmailsPerHour {
		return payd.TooManyEmails(time.Hour, "3 alert emails were sent for this account in the last hour; finish the change later")
	}
	if wait, err := s.emailQuota(ctx, s.store, ec.OldEmail, now); err != nil {
		return err
	} else if wait > 0 {
		return payd.TooManyEmails(wait, "too many emails to your current address; finish the change later")
	}
	return nil
}

// emailChangeUndone is the answer to an undo.
type emailChangeUndone struct {
	Kind   string `json:"kind"`
	Email  string `json:"email"`
	Status string `json:"status"`
	// ResetAvailableAt is when a password reset may set a new password.
	ResetAvailableAt Time `json:"reset_available_at"`
}

// undoEmailChange puts the old address back on the account from the
// alert's link. Whoever made the change may know the password, so it is
// disabled, no new one may be set for payd.ResetHold (reset_on_hold),
// every session ends, and no other change's code or undo link works.
func (s *Server) undoEmailChange(w http.ResponseWriter, r *http.Request) error {
	var req tokenRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if !validToken(req.Token) {
		return payd.InvalidToken("undo")
	}
	ctx := r.Context()
	now := s.clock.Now()
	ec, err := s.store.EmailChangeByUndo(ctx, payd.SecretHash(req.Token))
	if payd.IsNotFound(err) || err == nil && (ec.Status != payd.EmailChangeDone || ec.UndoExpiresAt == nil || !now.Before(*ec.UndoExpiresAt)) {
		return payd.InvalidToken("undo")
	} else if err != nil {
		return err
	}
	hold := now.Add(payd.ResetHold)
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		undone := *ec // a copy: fn may run again
		undone.Status = payd.EmailChangeUndone
		if err := q.SaveEmailChange(ctx, &undone); err != nil {
			return err
		}
		if err := q.EndEmailChanges(ctx, ec.UserID); err != nil {
			return err
		}
		u, err := q.UserByID(ctx, ec.UserID)
		if err != nil {
			return err
		}
		u.Email, u.PasswordDisabled, u.ResetHoldUntil, u.UpdatedAt = ec.OldEmail, true, &hold, now
		// Whoever made the change may have added sign-in methods of their
		// own since it started, or since the session that started it signed
		// in: two-step turned on, passkeys. They go with it; the owner's
		// older ones stay.
		since := ec.CreatedAt
		if ec.SessionStartedAt.Before(since) {
			since = ec.SessionStartedAt
		}
		if u.TOTPEnabledAt != nil && !u.TOTPEnabledAt.Before(since) {
			u.TOTPSecret, u.TOTPEnabledAt, u.TOTPLastStep, u.RecoveryCodes = "", nil, 0, nil
		}
		if err := q.SaveUser(ctx, u); err != nil {
			return err
		}
		pks, err := q.PasskeysByUser(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, pk := range pks {
			if !pk.CreatedAt.Before(since) {
				if err := q.DeletePasskey(ctx, u.ID, pk.ID); err != nil {
					return err
				}
			}
		}
		_, err = q.DeleteSessions(ctx, u.ID, "")
		return err
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		return payd.InvalidToken("undo")
	} else if payd.ErrorCode(err) == payd.ErrEmailTaken {
		return payd.Errorf(payd.ErrEmailTaken, "%s has become another account's address since the change; sign in there, or ask the operator", ec.OldEmail)
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{emailChangeUndone{Kind: "email_change", Email: ec.OldEmail, Status: "undone",
		ResetAvailableAt: Time(hold)}})
	return nil
}
