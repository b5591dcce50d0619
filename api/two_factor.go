package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"payd"
)

// Two-step sign-in over HTTP (spec 7.6, 8.1–8.3; CONTRACT.md;
// docs/two-step.md): the person turns it on with POST /me/two-factor, and
// a correct password then answers a challenge that POST
// /sessions/two-factor finishes with an authenticator or recovery code.

// twoFactorCookie holds the token that binds a two-step challenge to the
// browser that gave the password: the challenge's id alone finishes
// nothing.
const twoFactorCookie = "payd_two_factor"

// twoFactorChallenge is the answer to a correct password when two-step
// sign-in is on (CONTRACT.md).
type twoFactorChallenge struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	ExpiresAt Time   `json:"expires_at"`
}

// pendingTwoFactor is a challenge made in a transaction, whose cookie is
// set once it commits.
type pendingTwoFactor struct {
	challenge *payd.TwoFactorChallenge
	token     string
}

// startTwoFactor stores a challenge for u, who gave the right password.
// It reads u again in the transaction, so the password hash it binds to
// is the one stored (sign-in may have just rehashed it).
func (s *Server) startTwoFactor(ctx context.Context, q payd.Queries, u *payd.User) (*pendingTwoFactor, error) {
	cur, err := q.UserByID(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	token, c := payd.NewTwoFactorChallenge(cur, s.clock.Now())
	if err := q.CreateTwoFactorChallenge(ctx, c); err != nil {
		return nil, err
	}
	return &pendingTwoFactor{challenge: c, token: token}, nil
}

// answerTwoFactor gives the browser the committed challenge: its token in
// a cookie that lasts as long as the challenge, its id in the body.
func (s *Server) answerTwoFactor(w http.ResponseWriter, p *pendingTwoFactor) {
	s.setCookie(w, twoFactorCookie, p.token, int(payd.TwoFactorChallengeTTL.Seconds()))
	writeJSON(w, http.StatusOK, single{twoFactorChallenge{Kind: "two_factor_challenge", ID: p.challenge.ID,
		ExpiresAt: Time(p.challenge.ExpiresAt)}})
}

type twoFactorSigninRequest struct {
	ChallengeID string `json:"challenge_id"`
	Code        string `json:"code"`
}

// finishTwoFactor finishes a two-step sign-in with an authenticator or
// recovery code: 201 with the session and its cookie, as a password
// sign-in. The challenge is taken, the code spent and the session started
// in one transaction.
func (s *Server) finishTwoFactor(w http.ResponseWriter, r *http.Request) error {
	var req twoFactorSigninRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.ChallengeID == "" {
		return payd.FieldError("challenge_id", "challenge_id is required: the id POST /sessions answered")
	}
	if err := payd.CheckText("challenge_id", req.ChallengeID, 64, false); err != nil {
		return err
	}
	ctx := r.Context()
	c, err := s.store.TwoFactorChallenge(ctx, req.ChallengeID)
	if payd.IsNotFound(err) {
		return payd.ChallengeExpired()
	} else if err != nil {
		return err
	}
	u, err := s.store.UserByID(ctx, c.UserID)
	if err != nil {
		return err
	}
	if err := c.Check(cookie(r, s.cookieName(twoFactorCookie)), u, s.clock.Now()); err != nil {
		return err
	}
	next, err := s.spendCode(ctx, u, req.Code)
	if err != nil {
		return err
	}
	var st *started
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.TakeTwoFactorChallenge(ctx, c.ID); payd.IsNotFound(err) {
			return payd.ChallengeExpired()
		} else if err != nil {
			return err
		}
		if err := s.saveTwoFactor(ctx, q, *next); err != nil {
			return err
		}
		var err error
		st, err = s.startSession(ctx, r, q, u, "two_factor")
		return err
	})
	if err != nil {
		return err
	}
	s.setCookie(w, twoFactorCookie, "", -1)
	s.setSession(w, st)
	writeJSON(w, http.StatusCreated, single{s.toSession(st.session, st.session.ID, u)})
	return nil
}

// codeTry runs check under the person's two-step code lock (spec 8.3):
// the try is counted before the check (try), so concurrent guesses cannot
// get past the lock; every 5th locks codes for 15 minutes
// (payd.CodeLock), and while locked the answer is too_many_attempts. An
// accepted code clears the count (saveTwoFactor).
func (s *Server) codeTry(ctx context.Context, userID string, check func() error) error {
	if _, err := s.try(ctx, payd.TwoFactorCodeSubject(userID), lockKeep, payd.CodeLock,
		"too many wrong codes; wait for Retry-After seconds"); err != nil {
		return err
	}
	return check()
}

// spendCode checks an authenticator or recovery code of u's under the
// lock and returns a copy of u with the code spent (the step taken, or the
// recovery code's hash removed), for saveTwoFactor. Six digits are an
// authenticator code; anything else is tried as a recovery code.
func (s *Server) spendCode(ctx context.Context, u *payd.User, code string) (*payd.User, error) {
	next := *u
	return &next, s.codeTry(ctx, u.ID, func() error {
		if s.opts.TwoFactor.IsCode(code) {
			step, err := s.opts.TwoFactor.Verify(u.TOTPSecret, code, s.clock.Now(), u.TOTPLastStep)
			next.TOTPLastStep = step
			return err
		}
		i, ok := s.opts.TwoFactor.MatchRecoveryCode(u.RecoveryCodes, code)
		if !ok {
			return &payd.Error{Code: payd.ErrInvalidCode, Field: "code",
				Message: "the code is wrong: enter the 6 digits from your authenticator app, or one of your recovery codes"}
		}
		next.RecoveryCodes = slices.Delete(slices.Clone(u.RecoveryCodes), i, i+1)
		return nil
	})
}

// saveTwoFactor writes next, the person changed by an accepted code, at
// the version the code was checked against, and forgets their wrong
// codes. Of two requests racing with one code, the second finds the
// version gone and is refused, so a code is never taken twice. next is a
// copy, so a retried transaction saves at the same version again.
func (s *Server) saveTwoFactor(ctx context.Context, q payd.Queries, next payd.User) error {
	next.UpdatedAt = s.clock.Now()
	if err := q.SaveUser(ctx, &next); err != nil {
		if payd.ErrorCode(err) == payd.ErrConflict {
			return &payd.Error{Code: payd.ErrInvalidCode, Field: "code",
				Message: "this code was used by another request at the same moment; try again with a new code"}
		}
		return err
	}
	return q.ClearAttempts(ctx, payd.TwoFactorCodeSubject(next.ID))
}

// twoFactorStatus is the person's two-step sign-in on the wire.
type twoFactorStatus struct {
	Kind      string `json:"kind"`
	Enabled   bool   `json:"enabled"`
	EnabledAt *Time  `json:"enabled_at"`
	// RecoveryCodesLeft counts the unused recovery codes.
	RecoveryCodesLeft int `json:"recovery_codes_left"`
	// RecoveryCodes is a new set, shown once: set only on the answers
	// that make one.
	RecoveryCodes []string `json:"recovery_codes,omitempty"`
}

func toTwoFactorStatus(u *payd.User, plain []string) twoFactorStatus {
	out := twoFactorStatus{Kind: "two_factor", Enabled: u.TwoFactor(), RecoveryCodesLeft: len(u.RecoveryCodes),
		RecoveryCodes: plain}
	if u.TOTPEnabledAt != nil && u.TwoFactor() {
		t := Time(*u.TOTPEnabledAt)
		out.EnabledAt = &t
	}
	return out
}

// twoFactorSetup is a new secret to add to an authenticator app.
type twoFactorSetup struct {
	Kind   string `json:"kind"`
	Secret string `json:"secret"`
	URI    string `json:"uri"`
	QRPNG  string `json:"qr_png"`
	QRSVG  string `json:"qr_svg"`
	// ExpiresAt is when the setup can no longer be confirmed.
	ExpiresAt Time `json:"expires_at"`
}

// getTwoFactor answers the person's two-step sign-in.
func (s *Server) getTwoFactor(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, single{toTwoFactorStatus(callOf(r.Context()).user, nil)})
	return nil
}

type twoFactorRequest struct {
	Action          string  `json:"action"`
	Code            string  `json:"code"`
	CurrentPassword *string `json:"current_password"`
}

// twoFactorActions are the actions of POST /me/two-factor and the fields
// each takes besides action.
var twoFactorActions = map[string][]string{
	"setup":          nil,
	"enable":         {"code"},
	"disable":        {"current_password", "code"},
	"recovery_codes": {"code"},
}

// postTwoFactor changes the person's two-step sign-in by action: setup
// (a new secret, kept on this session for 10 minutes), enable (with a code
// of that secret), disable (current password and code) and recovery_codes
// (a new set, with a code).
func (s *Server) postTwoFactor(w http.ResponseWriter, r *http.Request) error {
	var req twoFactorRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	c := callOf(r.Context())
	switch req.Action {
	case "setup":
		return s.setupTwoFactor(w, r, c)
	case "enable":
		return s.enableTwoFactor(w, r, c, req.Code)
	case "disable":
		return s.disableTwoFactor(w, r, c, req.CurrentPassword, req.Code)
	}
	return s.newRecoveryCodes(w, r, c, req.Code)
}

// check refuses an unknown action, a field the action does not take, and
// a missing code where it takes one. (disable asks for current_password
// only of an account that has a password: proveCurrent.)
func (req *twoFactorRequest) check() error {
	takes, ok := twoFactorActions[req.Action]
	if !ok {
		return payd.FieldError("action", "action must be setup, enable, disable or recovery_codes")
	}
	for _, f := range []struct {
		name string
		sent bool
	}{{"code", req.Code != ""}, {"current_password", req.CurrentPassword != nil}} {
		switch {
		case f.sent && !slices.Contains(takes, f.name):
			return payd.FieldError(f.name, "action %s takes no %s", req.Action, f.name)
		case !f.sent && f.name == "code" && slices.Contains(takes, f.name):
			return payd.FieldError("code", "code is required to %s", req.Action)
		}
	}
	if req.CurrentPassword != nil {
		return payd.CheckText("current_password", *req.CurrentPassword, 4*payd.MaxPasswordLength, false)
	}
	return nil
}

func twoFactorEnabled() error {
	return payd.Errorf(payd.ErrTwoFactorEnabled, "two-step sign-in is already on")
}

func twoFactorDisabled() error {
	return payd.Errorf(payd.ErrTwoFactorDisabled, "two-step sign-in is off")
}

// setupTwoFactor makes a new secret and keeps it on the session, where
// enable finds it for payd.TwoFactorSetupTTL.
func (s *Server) setupTwoFactor(w http.ResponseWriter, r *http.Request, c *call) error {
	if c.user.TwoFactor() {
		return twoFactorEnabled()
	}
	setup, err := s.opts.TwoFactor.NewSecret(strings.ReplaceAll(c.user.Email, ":", ""))
	if err != nil {
		return err
	}
	now := s.clock.Now()
	c.session.TOTPSetupSecret, c.session.TOTPSetupAt = setup.Secret, &now
	if err := s.store.SaveSession(r.Context(), c.session); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{twoFactorSetup{Kind: "two_factor_setup", Secret: setup.Secret, URI: setup.URI,
		QRPNG: setup.QRDataURL, QRSVG: setup.QRSVG, ExpiresAt: Time(now.Add(payd.TwoFactorSetupTTL))}})
	return nil
}

// enableTwoFactor turns two-step sign-in on with a code of the secret
// this session set up less than 10 minutes ago, and answers the first
// set of recovery codes, shown this once.
func (s *Server) enableTwoFactor(w http.ResponseWriter, r *http.Request, c *call, code string) error {
	if c.user.TwoFactor() {
		return twoFactorEnabled()
	}
	ses, now := c.session, s.clock.Now()
	if ses.TOTPSetupSecret == "" || ses.TOTPSetupAt == nil || !now.Before(ses.TOTPSetupAt.Add(payd.TwoFactorSetupTTL)) {
		return payd.Errorf(payd.ErrTwoFactorSetupRequired,
			"start again with action setup: no setup was started in this session, or its QR code is older than 10 minutes")
	}
	next := *c.user
	err := s.codeTry(r.Context(), c.user.ID, func() (err error) {
		next.TOTPLastStep, err = s.opts.TwoFactor.Verify(ses.TOTPSetupSecret, code, now, 0)
		return err
	})
	if err != nil {
		return err
	}
	plain, hashes := s.opts.TwoFactor.NewRecoveryCodes()
	next.TOTPSecret, next.TOTPEnabledAt, next.RecoveryCodes = ses.TOTPSetupSecret, &now, hashes
	err = s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		if err := s.saveTwoFactor(ctx, q, next); err != nil {
			return err
		}
		done := *ses
		done.TOTPSetupSecret, done.TOTPSetupAt = "", nil
		return q.SaveSession(ctx, &done)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toTwoFactorStatus(&next, plain)})
	return nil
}

// disableTwoFactor turns two-step sign-in off. It takes the current
// password (proveCurrent: none for an account without one) and a code: a
// stolen session with a known password cannot remove the second step
// without the phone or a recovery code.
func (s *Server) disableTwoFactor(w http.ResponseWriter, r *http.Request, c *call, password *string, code string) error {
	if !c.user.TwoFactor() {
		return twoFactorDisabled()
	}
	if err := s.proveCurrent(r.Context(), c, password); err != nil {
		return err
	}
	next, err := s.spendCode(r.Context(), c.user, code)
	if err != nil {
		return err
	}
	next.TOTPSecret, next.TOTPEnabledAt, next.TOTPLastStep, next.RecoveryCodes = "", nil, 0, nil
	err = s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		return s.saveTwoFactor(ctx, q, *next)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toTwoFactorStatus(next, nil)})
	return nil
}

// newRecoveryCodes replaces the person's recovery codes with a new set,
// shown this once, for a code (an authenticator code, or one of the old
// recovery codes).
func (s *Server) newRecoveryCodes(w http.ResponseWriter, r *http.Request, c *call, code string) error {
	if !c.user.TwoFactor() {
		return twoFactorDisabled()
	}
	next, err := s.spendCode(r.Context(), c.user, code)
	if err != nil {
		return err
	}
	plain, hashes := s.opts.TwoFactor.NewRecoveryCodes()
	next.RecoveryCodes = hashes
	err = s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		return s.saveTwoFactor(ctx, q, *next)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toTwoFactorStatus(next, plain)})
	return nil
}
