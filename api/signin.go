package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"payd"
)

// Sign-in, step-up and sessions (spec 5.5–5.7, 8.3; CONTRACT.md;
// docs/accounts.md).

// session is a signed-in browser on the wire.
type session struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Current    bool    `json:"current"`
	Method     string  `json:"method"`
	UserAgent  string  `json:"user_agent"`
	IP         string  `json:"ip"`
	BusinessID *string `json:"business_id"`
	// ProvenUntil is when the session's step-up proof lapses, null when it
	// has none.
	ProvenUntil *Time `json:"proven_until"`
	CreatedAt   Time  `json:"created_at"`
	LastSeenAt  Time  `json:"last_seen_at"`
	ExpiresAt   Time  `json:"expires_at"`
	// User is set on the answers of sign-in and GET /sessions/current.
	User *user `json:"user,omitempty"`
}

func (s *Server) toSession(ses *payd.Session, current string, u *payd.User) session {
	out := session{ID: ses.ID, Kind: "session", Current: ses.ID == current, Method: ses.Method,
		UserAgent: ses.UserAgent, IP: ses.IP, CreatedAt: Time(ses.CreatedAt), LastSeenAt: Time(ses.LastSeenAt),
		ExpiresAt: Time(ses.EndsAt())}
	if ses.BusinessID != "" {
		out.BusinessID = &ses.BusinessID
	}
	if ses.Proven(s.clock.Now()) {
		t := Time(ses.ProofAt.Add(payd.ProofTTL))
		out.ProvenUntil = &t
	}
	if u != nil {
		wu := toUser(u)
		out.User = &wu
	}
	return out
}

type signinRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// createSession signs in with email and password: 201 with the session
// and its cookie, or, with two-step sign-in on, 200 with a challenge that
// POST /sessions/two-factor finishes (two_factor.go). An unknown email,
// an account without a password and a wrong password answer alike, after
// the same work.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	if err := s.challenge(r, payd.ChallengeSignin); err != nil {
		return err
	}
	var req signinRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := payd.CheckEmail("email", req.Email); err != nil {
		return err
	}
	if err := payd.CheckText("password", req.Password, 4*payd.MaxPasswordLength, false); err != nil {
		return err
	}
	ctx := r.Context()
	u, err := s.store.UserByEmail(ctx, req.Email)
	if payd.IsNotFound(err) {
		u = nil
	} else if err != nil {
		return err
	}
	lock, err := s.passwordLockOf(ctx, r, req.Email, u)
	if err != nil {
		return err
	}
	// The try is counted before the password is checked, so concurrent
	// guesses cannot get past a lock (spec 8.3).
	a, err := s.try(ctx, lock.subject, lockKeep, payd.PasswordLock, "too many failed sign-ins; wait for Retry-After seconds")
	if err != nil {
		return err
	}
	encoded := ""
	if u != nil {
		encoded = u.PasswordHash
	}
	ok, rehash, err := s.verifyPassword(ctx, req.Password, encoded)
	if err != nil {
		return err
	}
	// A disabled password (100 failures in a row, or an undone email
	// change) is told only to someone who knows it: anyone else learns
	// nothing of the account from the answer.
	disabled := u != nil && (u.PasswordDisabled || !lock.device && a.Failures > payd.PasswordDisableAfter)
	if !ok {
		if u != nil && !lock.device && a.Failures >= payd.PasswordDisableAfter && !u.PasswordDisabled {
			if err := s.disablePassword(ctx, u.ID); err != nil {
				return err
			}
		}
		return payd.InvalidCredentials()
	}
	if disabled {
		return passwordResetRequired()
	}
	newHash := ""
	if rehash {
		if newHash, err = s.opts.Passwords.Hash(hashWait(ctx), s.opts.Passwords.Normalize(req.Password)); err != nil {
			return err
		}
	}
	var st *started
	var tf *pendingTwoFactor // two-step sign-in on: a challenge, not a session
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		// A reset, undo or password change that committed while the
		// password was being checked has ended every session; this sign-in
		// must not outlive it, nor write a hash of the old password back.
		cur, err := q.UserByID(ctx, u.ID)
		if err != nil {
			return err
		}
		if cur.PasswordHash != u.PasswordHash {
			return payd.InvalidCredentials()
		} else if cur.PasswordDisabled {
			return passwordResetRequired()
		}
		for _, sub := range []string{lock.subject, "pw:" + payd.EmailKey(u.Email)} {
			if err := q.ClearAttempts(ctx, sub); err != nil {
				return err
			}
		}
		if newHash != "" {
			cur.PasswordHash, cur.UpdatedAt = newHash, s.clock.Now()
			if err := q.SaveUser(ctx, cur); err != nil {
				return err
			}
		}
		// Two-step as it is now, not as it was when the password was
		// checked: it may have been turned on meanwhile.
		if cur.TwoFactor() {
			tf, err = s.startTwoFactor(ctx, q, cur)
			return err
		}
		st, err = s.startSession(ctx, r, q, cur, "password")
		return err
	})
	if err != nil {
		return err
	}
	if tf != nil {
		s.answerTwoFactor(w, tf)
		return nil
	}
	s.setSession(w, st)
	writeJSON(w, http.StatusCreated, single{s.toSession(st.session, st.session.ID, u)})
	return nil
}

// disablePassword stops the user's password working until it is reset.
func (s *Server) disablePassword(ctx context.Context, userID string) error {
	return s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		u, err := q.UserByID(ctx, userID)
		if err != nil {
			return err
		}
		u.PasswordDisabled, u.UpdatedAt = true, s.clock.Now()
		return q.SaveUser(ctx, u)
	})
}

func passwordResetRequired() error {
	return payd.Errorf(payd.ErrPasswordResetRequired, "this password has been disabled; reset it with POST /password-resets")
}

type stepUpRequest struct {
	Password *string `json:"password"`
	// Passkey is the answer to POST /sessions/current/step-up/options.
	Passkey json.RawMessage `json:"passkey"`
}

// stepUp gives the session a fresh proof (spec 5.7) for the password or a
// passkey.
func (s *Server) stepUp(w http.ResponseWriter, r *http.Request) error {
	var req stepUpRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c := callOf(r.Context())
	if req.Passkey != nil {
		if req.Password != nil {
			return &payd.Error{Code: payd.ErrInvalidRequest, Field: "passkey", Message: "send a password or a passkey, not both"}
		}
		if err := s.passkeyProof(r.Context(), c, req.Passkey); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, single{s.toSession(c.session, c.session.ID, c.user)})
		return nil
	}
	if req.Password == nil {
		return &payd.Error{Code: payd.ErrInvalidRequest, Field: "password", Message: "send password, or passkey with the answer to POST /sessions/current/step-up/options"}
	}
	if c.user.PasswordDisabled {
		return passwordResetRequired()
	}
	if err := s.currentPassword(r.Context(), c, *req.Password); err != nil {
		return err
	}
	now := s.clock.Now()
	c.session.ProofAt = &now
	if err := s.store.SaveSession(r.Context(), c.session); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{s.toSession(c.session, c.session.ID, c.user)})
	return nil
}

// getCurrentSession answers the signed-in session with its user.
func (s *Server) getCurrentSession(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	writeJSON(w, http.StatusOK, single{s.toSession(c.session, c.session.ID, c.user)})
	return nil
}

// listSessions lists the person's sessions, the current one marked.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	all, err := s.store.SessionsByUser(r.Context(), c.user.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	out := objectList{Data: make([]any, 0, len(all))}
	for _, ses := range all {
		if ses.Live(now) {
			out.Data = append(out.Data, s.toSession(ses, c.session.ID, nil))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deleteSession ends another of the person's sessions; the one in use
// ends by DELETE /sessions/current (current_session).
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	id := r.PathValue("id")
	if id == c.session.ID {
		return payd.Errorf(payd.ErrCurrentSession, "this is the session in use; sign out with DELETE /sessions/current")
	}
	if err := s.store.DeleteSession(r.Context(), c.user.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// signOut ends the session in use and deletes its cookie.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	if err := s.store.DeleteSession(r.Context(), c.user.ID, c.session.ID); err != nil && !payd.IsNotFound(err) {
		return err
	}
	s.setCookie(w, sessionCookie, "", -1)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getMe answers the signed-in person.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, single{toUser(callOf(r.Context()).user)})
	return nil
}

type patchMeRequest struct {
	Name *string `json:"name"`
}

// patchMe changes what a person may change about themselves without a
// proof: the name others see on the team. The email address and the
// password have their own routes (me_email.go), which ask for one.
func (s *Server) patchMe(w http.ResponseWriter, r *http.Request) error {
	var req patchMeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	if req.Name == nil {
		writeJSON(w, http.StatusOK, single{toUser(c.user)})
		return nil
	}
	name := strings.TrimSpace(*req.Name)
	if err := payd.CheckText("name", name, 200, false); err != nil {
		return err
	}
	var u *payd.User
	err := s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		var err error
		if u, err = q.UserByID(ctx, c.user.ID); err != nil {
			return err
		}
		u.Name, u.UpdatedAt = name, s.clock.Now()
		return q.SaveUser(ctx, u)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toUser(u)})
	return nil
}
