package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// Password resets (spec 7.6, 8.3; CONTRACT.md; docs/accounts.md
// "Recovery"): POST /password-resets emails a link carrying a token,
// which POST /password-resets/check tests and POST
// /password-resets/confirm spends on a new password.

// passwordReset is a reset link on the wire: the answer to a request,
// which is the same whether or not anything was sent, and to a check.
type passwordReset struct {
	Kind      string `json:"kind"`
	Email     string `json:"email"`
	ExpiresAt Time   `json:"expires_at"`
}

type resetRequest struct {
	Email string `json:"email"`
}

// createPasswordReset emails a reset link to a known address within its
// quotas (3 links an hour, and the per-address email quota) and answers
// 202 alike for every address, sent or not.
func (s *Server) createPasswordReset(w http.ResponseWriter, r *http.Request) error {
	if err := s.challenge(r, payd.ChallengeReset); err != nil {
		return err
	}
	var req resetRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := payd.CheckEmail("email", req.Email); err != nil {
		return err
	}
	if err := s.mailable(); err != nil {
		return err
	}
	now := s.clock.Now()
	err := s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		u, err := q.UserByEmail(ctx, req.Email)
		if payd.IsNotFound(err) {
			// The same reads and rendering as for a known address, with
			// nothing stored, so the answer's time says little of the
			// address (two inserts are the difference left).
			if _, err := q.CountEmails(ctx, req.Email, []string{payd.EmailPasswordReset}, now.Add(-time.Hour)); err != nil {
				return err
			}
			if _, err := s.emailQuota(ctx, q, req.Email, now); err != nil {
				return err
			}
			_, err := s.opts.Letters.PasswordReset(req.Email, s.opts.PublicURL+"/dashboard/reset#token="+payd.RandomString(43), now)
			return err
		} else if err != nil {
			return err
		}
		return s.sendReset(ctx, q, u, now)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, single{passwordReset{Kind: "password_reset", Email: req.Email,
		ExpiresAt: Time(now.Add(payd.ResetTTL))}})
	return nil
}

// sendReset stores a new link for u and emails it, unless the address
// had ResetLinksPerHour links in the last hour or is over its email
// quota: then nothing is sent, and the answer stays the same (spec 8.3).
func (s *Server) sendReset(ctx context.Context, q payd.Queries, u *payd.User, now time.Time) error {
	n, err := q.CountEmails(ctx, u.Email, []string{payd.EmailPasswordReset}, now.Add(-time.Hour))
	if err != nil || n >= payd.ResetLinksPerHour {
		return err
	}
	token, pr := payd.NewPasswordReset(u, now)
	sent := false
	err = s.sendQuota(ctx, q, u.Email, func() (*payd.Email, error) {
		sent = true
		return s.opts.Letters.PasswordReset(u.Email, s.opts.PublicURL+"/dashboard/reset#token="+token, now)
	})
	if err != nil || !sent {
		return err
	}
	return q.CreatePasswordReset(ctx, pr)
}

type tokenRequest struct {
	Token string `json:"token"`
}

// resetOf finds the live reset link of token and its user: invalid_token
// when it is unknown, used, replaced, expired or was sent to an address
// the account no longer has; reset_on_hold while an undone email change
// holds new passwords back.
func (s *Server) resetOf(ctx context.Context, q payd.Queries, token string, now time.Time) (*payd.PasswordReset, *payd.User, error) {
	if !validToken(token) {
		return nil, nil, payd.InvalidToken("password reset")
	}
	pr, err := q.PasswordResetByToken(ctx, payd.SecretHash(token))
	if payd.IsNotFound(err) {
		return nil, nil, payd.InvalidToken("password reset")
	} else if err != nil {
		return nil, nil, err
	}
	u, err := q.UserByID(ctx, pr.UserID)
	if err != nil {
		return nil, nil, err
	}
	if !pr.Usable(u, now) {
		return nil, nil, payd.InvalidToken("password reset")
	}
	if u.OnHold(now) > 0 {
		return nil, nil, payd.ResetOnHold(*u.ResetHoldUntil, now)
	}
	return pr, u, nil
}

// checkPasswordReset tells the reset page whether its link still works.
func (s *Server) checkPasswordReset(w http.ResponseWriter, r *http.Request) error {
	var req tokenRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	pr, u, err := s.resetOf(r.Context(), s.store, req.Token, s.clock.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{passwordReset{Kind: "password_reset", Email: u.Email, ExpiresAt: Time(pr.ExpiresAt)}})
	return nil
}

type resetConfirmRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// confirmPasswordReset spends a reset link on a new password: the
// password works again (PasswordDisabled cleared, the failure counts of
// the address and of the account's browsers forgotten), every session of
// the account ends, and the link is used. It signs nobody in: two-step
// sign-in must not be skipped by a link from a mailbox.
func (s *Server) confirmPasswordReset(w http.ResponseWriter, r *http.Request) error {
	var req resetConfirmRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	now := s.clock.Now()
	_, u, err := s.resetOf(ctx, s.store, req.Token, now)
	if err != nil {
		return err
	}
	hash, err := s.newPassword(ctx, req.Password, u.Email)
	if err != nil {
		return err
	}
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		pr, cur, err := s.resetOf(ctx, q, req.Token, now)
		if err != nil {
			return err
		}
		if err := q.UsePasswordReset(ctx, pr.ID, now); payd.ErrorCode(err) == payd.ErrConflict {
			return payd.InvalidToken("password reset") // spent by a racing confirm
		} else if err != nil {
			return err
		}
		u = cur
		return s.setPassword(ctx, q, cur, hash, "")
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toUser(u)})
	return nil
}
