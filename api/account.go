package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// Sign-up (spec 5.8, 7.6, 8.3; CONTRACT.md; docs/accounts.md): POST
// /accounts starts it and emails a 6-digit code, POST /accounts/verify
// finishes it with the code and signs the new user in.

// user is a person on the wire.
type user struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	HasPassword bool   `json:"has_password"`
	TwoFactor   bool   `json:"two_factor"`
	CreatedAt   Time   `json:"created_at"`
}

func toUser(u *payd.User) user {
	return user{ID: u.ID, Kind: "user", Email: u.Email, Name: u.Name, HasPassword: u.PasswordHash != "",
		TwoFactor: u.TwoFactor(), CreatedAt: Time(u.CreatedAt)}
}

// signupStarted is the answer to POST /accounts and its resend: the same
// whether or not the address already has an account.
type signupStarted struct {
	Kind          string `json:"kind"`
	Email         string `json:"email"`
	CodeExpiresAt Time   `json:"code_expires_at"`
	ExpiresAt     Time   `json:"expires_at"`
}

type signupRequest struct {
	Email    string  `json:"email"`
	Password *string `json:"password"`
	Name     string  `json:"name"`
}

// createAccount starts a sign-up. An address that already has an account
// gets a sign-up too, whose code is never sent: an email saying the
// account exists goes instead, and every route answers that sign-up as
// any other, so none tells whether an address is taken. A sign-up without
// a password is a passkey sign-up, finished only in the browser that
// started it.
func (s *Server) createAccount(w http.ResponseWriter, r *http.Request) error {
	if err := s.challenge(r, payd.ChallengeSignup); err != nil {
		return err
	}
	var req signupRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := payd.CheckEmail("email", req.Email); err != nil {
		return err
	}
	if err := payd.CheckText("name", req.Name, 200, false); err != nil {
		return err
	}
	if err := s.mailable(); err != nil {
		return err
	}
	hash := ""
	if req.Password != nil {
		var err error
		if hash, err = s.newPassword(r.Context(), *req.Password, req.Email); err != nil {
			return err
		}
	}
	ctx := r.Context()
	now := s.clock.Now()
	browser := payd.RandomString(43)
	code := payd.NewCode()
	sg := &payd.Signup{ID: payd.NewID(payd.PrefixSignup), Email: req.Email, Name: req.Name, PasswordHash: hash,
		BrowserHash: payd.SecretHash(browser), CodeHash: payd.SecretHash(code), CodeSentAt: now, CodesSent: 1,
		Status: payd.SignupPending, CreatedAt: now, ExpiresAt: now.Add(payd.VerificationTTL)}
	err := s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		g := *sg // a copy: fn may run again
		_, err := q.UserByEmail(ctx, req.Email)
		if err != nil && !payd.IsNotFound(err) {
			return err
		}
		g.Exists = err == nil
		if err := q.CreateSignup(ctx, &g); err != nil {
			return err
		}
		return s.sendQuota(ctx, q, req.Email, func() (*payd.Email, error) { return s.signupEmail(&g, code, now) })
	})
	if err != nil {
		return err
	}
	s.setCookie(w, signupCookie, browser, int(payd.VerificationTTL.Seconds()))
	writeJSON(w, http.StatusAccepted, single{signupStarted{Kind: "signup", Email: req.Email,
		CodeExpiresAt: Time(now.Add(payd.CodeTTL)), ExpiresAt: Time(sg.ExpiresAt)}})
	return nil
}

type verifyRequest struct {
	Email    string  `json:"email"`
	Code     string  `json:"code"`
	Password *string `json:"password"`
}

// verifyAccount finishes a sign-up with its emailed code: 201 with the new
// user and a session cookie.
func (s *Server) verifyAccount(w http.ResponseWriter, r *http.Request) error {
	var req verifyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := payd.CheckEmail("email", req.Email); err != nil {
		return err
	}
	ctx := r.Context()
	now := s.clock.Now()
	// Every try is reserved before the code is compared, against the
	// address's day and then against the code, so no burst of concurrent
	// guesses gets past the limits of spec 8.3.
	endOfDay := nextDay(now).Sub(now)
	if _, err := s.try(ctx, signupDaySubject(req.Email, now), endOfDay, func(n int) time.Duration {
		if n >= payd.SignupWrongPerDay {
			return endOfDay
		}
		return 0
	}, "too many wrong codes for this address today; try again tomorrow"); err != nil {
		return err
	}
	sg, err := s.store.PendingSignup(ctx, req.Email)
	if payd.IsNotFound(err) {
		return payd.InvalidCode() // no sign-up waits: the code is wrong, as any guess is
	} else if err != nil {
		return err
	}
	if !now.Before(sg.ExpiresAt) {
		return payd.Errorf(payd.ErrVerificationExpired, "this sign-up is older than a day; sign up again")
	}
	if err := s.checkCode(ctx, signupCode(sg), req.Code, now); err != nil {
		return err
	}
	if browser := cookie(r, s.cookieName(signupCookie)); browser == "" || !payd.SameSecret(payd.SecretHash(browser), sg.BrowserHash) {
		if err := s.otherBrowser(ctx, sg, req.Password); err != nil {
			return err
		}
	}
	u, err := payd.NewUser(sg.Email, sg.Name, sg.PasswordHash, now)
	if err != nil {
		return err
	}
	var st *started
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		done := *sg // a copy: fn may run again, and SaveSignup counts the version up
		done.Status = payd.SignupDone
		if err := q.SaveSignup(ctx, &done); err != nil {
			return err
		}
		if err := q.CreateUser(ctx, u); err != nil {
			return err
		}
		// Failures counted against the address before it had an account
		// are not the new account's.
		if err := q.ClearAttempts(ctx, "pw:"+payd.EmailKey(u.Email)); err != nil {
			return err
		}
		var err error
		st, err = s.startSession(ctx, r, q, u, "signup")
		return err
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		return payd.Errorf(payd.ErrVerificationExpired, "this sign-up was finished or replaced meanwhile")
	} else if err != nil {
		return err
	}
	s.setSession(w, st)
	s.setCookie(w, signupCookie, "", -1)
	if err := s.store.ClearAttempts(ctx, signupCode(sg).subject()); err != nil {
		s.log.WarnContext(ctx, "clear code attempts", "error", err)
	}
	writeJSON(w, http.StatusCreated, single{toUser(u)})
	return nil
}

// otherBrowser decides a sign-up finished in a browser other than the one
// that started it: a password sign-up needs its password too, a passkey
// sign-up cannot be finished there at all.
func (s *Server) otherBrowser(ctx context.Context, sg *payd.Signup, password *string) error {
	if sg.PasswordHash == "" {
		return payd.Errorf(payd.ErrSignupBrowserRequired, "finish this passkey sign-up in the browser where it started")
	}
	if password == nil {
		return &payd.Error{Code: payd.ErrPasswordRequired, Field: "password",
			Message: "this sign-up was started in another browser; enter the password you chose too"}
	}
	// The try of this request is already counted against the code, so a
	// wrong password here uses up one of its 5 tries too.
	ok, _, err := s.verifyPassword(ctx, *password, sg.PasswordHash)
	if err != nil {
		return err
	}
	if !ok {
		return payd.InvalidCredentials()
	}
	return nil
}

type resendRequest struct {
	Email string `json:"email"`
}

// resendAccountCode sends a sign-up a new code: one minute after the last
// at the soonest, at most 5 per sign-up, within the address's quota. An
// address with no sign-up waiting gets the same answer and no email.
func (s *Server) resendAccountCode(w http.ResponseWriter, r *http.Request) error {
	var req resendRequest
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
	now := s.clock.Now()
	sg, err := s.store.PendingSignup(ctx, req.Email)
	if payd.IsNotFound(err) || err == nil && !now.Before(sg.ExpiresAt) {
		writeJSON(w, http.StatusAccepted, single{signupStarted{Kind: "signup", Email: req.Email,
			CodeExpiresAt: Time(now.Add(payd.CodeTTL)), ExpiresAt: Time(now.Add(payd.VerificationTTL))}})
		return nil
	} else if err != nil {
		return err
	}
	if err := signupCode(sg).mayResend(now); err != nil {
		return err
	}
	code := payd.NewCode()
	next := *sg
	next.CodeHash, next.CodeSentAt, next.CodesSent = payd.SecretHash(code), now, sg.CodesSent+1
	if next.Exists {
		next.CodeHash = payd.SecretHash(payd.RandomString(43)) // never sent
	}
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if wait, err := s.emailQuota(ctx, q, req.Email, now); err != nil {
			return err
		} else if wait > 0 {
			return payd.TooManyEmails(wait, "too many emails to this address; try again later")
		}
		g := next // a copy: fn may run again
		if err := q.SaveSignup(ctx, &g); err != nil {
			return err
		}
		e, err := s.signupEmail(&g, code, now)
		if err != nil {
			return err
		}
		return q.CreateEmail(ctx, e)
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		// Another resend of the same sign-up won: that one is on its way.
		return payd.TooManyEmails(payd.CodeResendAfter, "a code was sent just now; wait before asking again")
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, single{signupStarted{Kind: "signup", Email: sg.Email,
		CodeExpiresAt: Time(now.Add(payd.CodeTTL)), ExpiresAt: Time(sg.ExpiresAt)}})
	return nil
}

// signupEmail is the email a sign-up is sent: its code, or, for an
// address that has an account, the notice saying so.
func (s *Server) signupEmail(sg *payd.Signup, code string, now time.Time) (*payd.Email, error) {
	if sg.Exists {
		return s.opts.Letters.AccountExists(sg.Email, s.opts.PublicURL+"/dashboard/sign-in", now)
	}
	return s.opts.Letters.SignupCode(sg.Email, code, now)
}

// signupCode is a sign-up's emailed code.
func signupCode(sg *payd.Signup) emailedCode {
	return emailedCode{id: sg.ID, sent: sg.CodesSent, hash: sg.CodeHash, sentAt: sg.CodeSentAt, endsAt: sg.ExpiresAt, unsent: sg.Exists}
}

// signupDaySubject counts an address's wrong sign-up codes of one UTC day.
func signupDaySubject(email string, now time.Time) string {
	return "signup:" + payd.EmailKey(email) + ":" + now.UTC().Format("2006-01-02")
}

// nextDay is the start of the UTC day after now's.
func nextDay(now time.Time) time.Time {
	return now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}
