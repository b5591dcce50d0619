package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"payd"
)

// Passkeys over HTTP (spec 4.9, 5.7, 7.6, 8.1, 8.2; docs/passkeys.md): a
// signed-in person adds, lists, renames and removes passkeys; anyone signs
// in with one; a session proves a recent sign-in with one. The ceremonies
// are Options.Passkeys' (package passkey); their state waits in the
// webauthn_challenges table between options and answer, bound to the
// session (register, step_up) or to passkeyCookie (sign-in).

// passkeyCookie binds a discoverable sign-in to the browser that asked for
// its options: the ceremony stores the cookie's hash, and only an answer
// sent with the cookie finishes it.
const passkeyCookie = "payd_passkey"

// passkey is a registered passkey on the wire. Nothing in it is secret.
type passkey struct {
	ID             string   `json:"id"`
	Kind           string   `json:"kind"`
	Name           string   `json:"name"`
	Transports     []string `json:"transports"`
	BackupEligible bool     `json:"backup_eligible"`
	BackupState    bool     `json:"backup_state"`
	CreatedAt      Time     `json:"created_at"`
	LastUsedAt     *Time    `json:"last_used_at"`
}

func toPasskey(p *payd.Passkey) passkey {
	out := passkey{ID: p.ID, Kind: "passkey", Name: p.Name, Transports: p.Transports, BackupEligible: p.BackupEligible,
		BackupState: p.BackupState, CreatedAt: Time(p.CreatedAt)}
	if out.Transports == nil {
		out.Transports = []string{}
	}
	if p.LastUsedAt != nil {
		t := Time(*p.LastUsedAt)
		out.LastUsedAt = &t
	}
	return out
}

// ceremonyOptions is the answer to an options route: publicKey is what
// the browser passes to navigator.credentials.create or .get, binary
// members in base64url.
type ceremonyOptions struct {
	Kind      string          `json:"kind"`
	PublicKey json.RawMessage `json:"publicKey"`
}

// webauthn returns the ceremonies, or temporarily_unavailable when this
// server has none (its public URL has an IP address for host).
func (s *Server) webauthn() (payd.WebAuthn, error) {
	if s.opts.Passkeys == nil {
		return nil, payd.Errorf(payd.ErrTemporarilyUnavailable,
			"passkeys need a public URL with a domain name (https, or http://localhost); this server has none")
	}
	return s.opts.Passkeys, nil
}

// startCeremony stores a ceremony's state and answers its options.
func (s *Server) startCeremony(w http.ResponseWriter, r *http.Request, kind string, options json.RawMessage, state *payd.WebAuthnChallenge) error {
	var o struct {
		PublicKey json.RawMessage `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		return fmt.Errorf("api: ceremony options: %w", err)
	}
	if err := s.store.CreateWebAuthnChallenge(r.Context(), state); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{ceremonyOptions{Kind: kind, PublicKey: o.PublicKey}})
	return nil
}

// takeCeremony finds and spends the state of the ceremony the answer
// signed, and checks it was started for purpose, bound to binding, and is
// still live: passkey_failed otherwise.
func (s *Server) takeCeremony(ctx context.Context, wa payd.WebAuthn, answer []byte, purpose payd.WebAuthnPurpose, binding string) (*payd.WebAuthnChallenge, error) {
	if len(answer) == 0 || string(answer) == "null" {
		return nil, &payd.Error{Code: payd.ErrInvalidRequest, Field: "credential", Message: "credential is required"}
	}
	hash, err := wa.ChallengeHash(answer)
	if err != nil {
		s.log.Info("passkey answer refused", "error", err)
		return nil, payd.PasskeyFailed()
	}
	state, err := s.store.TakeWebAuthnChallenge(ctx, hash)
	if payd.IsNotFound(err) {
		return nil, payd.PasskeyFailed()
	} else if err != nil {
		return nil, err
	}
	if err := state.Check(purpose, binding, s.clock.Now()); err != nil {
		return nil, err
	}
	return state, nil
}

// passkeyError logs why a ceremony failed and returns the bare error
// code: the client learns nothing it could tune a forged answer with.
func (s *Server) passkeyError(err error) error {
	switch payd.ErrorCode(err) {
	case payd.ErrPasskeyFailed:
		s.log.Info("passkey answer refused", "error", err)
		return payd.PasskeyFailed()
	case payd.ErrPasskeyUnknown:
		return payd.PasskeyUnknown()
	}
	return err
}

// lookupPasskey finds a credential on any account.
func (s *Server) lookupPasskey(ctx context.Context) payd.PasskeyLookup {
	return func(credentialID, _ []byte) (*payd.Passkey, error) {
		return s.store.PasskeyByCredentialID(ctx, credentialID)
	}
}

func passkeyUser(u *payd.User) payd.PasskeyUser {
	return payd.PasskeyUser{ID: u.ID, Email: u.Email, Name: u.Name}
}

// ownCeremony starts a ceremony on the signed-in person's own passkeys
// (adding one, a step-up): the request's body is empty, and it answers
// the relying party, the call and the passkeys the person has.
func (s *Server) ownCeremony(r *http.Request) (payd.WebAuthn, *call, []*payd.Passkey, error) {
	var req struct{}
	if err := decode(r, &req); err != nil {
		return nil, nil, nil, err
	}
	wa, err := s.webauthn()
	if err != nil {
		return nil, nil, nil, err
	}
	c := callOf(r.Context())
	existing, err := s.store.PasskeysByUser(r.Context(), c.user.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	return wa, c, existing, nil
}

// passkeyRegistrationOptions starts adding a passkey to the signed-in
// account, bound to the session.
func (s *Server) passkeyRegistrationOptions(w http.ResponseWriter, r *http.Request) error {
	wa, c, existing, err := s.ownCeremony(r)
	if err != nil {
		return err
	}
	opts, state, err := wa.BeginRegistration(passkeyUser(c.user), existing, payd.WebAuthnRegister, c.session.ID)
	if err != nil {
		return err
	}
	return s.startCeremony(w, r, "passkey_registration_options", opts, state)
}

type createPasskeyRequest struct {
	Credential json.RawMessage `json:"credential"`
	Name       *string         `json:"name"`
}

// createPasskey finishes adding a passkey: 201 with the passkey.
func (s *Server) createPasskey(w http.ResponseWriter, r *http.Request) error {
	var req createPasskeyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	name := payd.DefaultPasskeyName
	if req.Name != nil {
		var err error
		if name, err = payd.CheckPasskeyName(*req.Name); err != nil {
			return err
		}
	}
	wa, err := s.webauthn()
	if err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	state, err := s.takeCeremony(ctx, wa, req.Credential, payd.WebAuthnRegister, c.session.ID)
	if err != nil {
		return err
	}
	if state.UserID != c.user.ID {
		return payd.PasskeyFailed()
	}
	pk, err := wa.FinishRegistration(state, req.Credential)
	if err != nil {
		return s.passkeyError(err)
	}
	pk.Name = name
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		n, err := q.CountPasskeys(ctx, c.user.ID)
		if err != nil {
			return err
		}
		if err := payd.PasskeyLimit(n); err != nil {
			return err
		}
		return q.CreatePasskey(ctx, pk)
	})
	if payd.ErrorCode(err) == payd.ErrConflict {
		return payd.Errorf(payd.ErrPasskeyExists, "this passkey is already registered to an account")
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, single{toPasskey(pk)})
	return nil
}

// listPasskeys lists the account's passkeys, oldest first.
func (s *Server) listPasskeys(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	all, err := s.store.PasskeysByUser(r.Context(), c.user.ID)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(all))}
	for _, p := range all {
		out.Data = append(out.Data, toPasskey(p))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type renamePasskeyRequest struct {
	Name string `json:"name"`
}

// renamePasskey renames one of the account's passkeys.
func (s *Server) renamePasskey(w http.ResponseWriter, r *http.Request) error {
	var req renamePasskeyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	name, err := payd.CheckPasskeyName(req.Name)
	if err != nil {
		return err
	}
	ctx := r.Context()
	c := callOf(ctx)
	id := r.PathValue("id")
	if err := s.store.RenamePasskey(ctx, c.user.ID, id, name); err != nil {
		return err
	}
	pk, err := s.userPasskey(ctx, s.store, c.user.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toPasskey(pk)})
	return nil
}

// userPasskey returns the user's passkey with id; not_found when none.
func (s *Server) userPasskey(ctx context.Context, q payd.Queries, userID, id string) (*payd.Passkey, error) {
	all, err := q.PasskeysByUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.ID == id {
			return p, nil
		}
	}
	return nil, payd.Errorf(payd.ErrNotFound, "no passkey %q", id)
}

// deletePasskey removes one of the account's passkeys, unless it is the
// last way to sign in: no password and no other passkey.
func (s *Server) deletePasskey(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := callOf(ctx)
	id := r.PathValue("id")
	err := s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if _, err := s.userPasskey(ctx, q, c.user.ID, id); err != nil {
			return err
		}
		u, err := q.UserByID(ctx, c.user.ID)
		if err != nil {
			return err
		}
		n, err := q.CountPasskeys(ctx, u.ID)
		if err != nil {
			return err
		}
		if u.PasswordHash == "" && n <= 1 {
			return payd.Errorf(payd.ErrLastSignInMethod,
				"this is the account's only way to sign in; add another passkey or set a password first")
		}
		return q.DeletePasskey(ctx, u.ID, id)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// passkeyAuthOptions starts a discoverable sign-in: no account is named,
// and the ceremony is bound to a fresh passkeyCookie.
func (s *Server) passkeyAuthOptions(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := decode(r, &req); err != nil {
		return err
	}
	wa, err := s.webauthn()
	if err != nil {
		return err
	}
	binding := payd.RandomString(43)
	opts, state, err := wa.BeginLogin(nil, nil, payd.WebAuthnSignin, payd.SecretHash(binding))
	if err != nil {
		return err
	}
	s.setCookie(w, passkeyCookie, binding, int(payd.WebAuthnChallengeTTL.Seconds()))
	return s.startCeremony(w, r, "passkey_authentication_options", opts, state)
}

type passkeyVerifyRequest struct {
	Credential json.RawMessage `json:"credential"`
}

// passkeyAuthVerify finishes a passkey sign-in: 201 with the session and
// its cookie, as a password sign-in answers. A passkey verified its user,
// so it stands in for the password and the two-step code together.
func (s *Server) passkeyAuthVerify(w http.ResponseWriter, r *http.Request) error {
	// The answer signs a session in: refuse another site's form, as a
	// cookie-signed request would be (a login CSRF).
	if err := s.sameSite(r); err != nil {
		return err
	}
	var req passkeyVerifyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	wa, err := s.webauthn()
	if err != nil {
		return err
	}
	ctx := r.Context()
	binding := cookie(r, s.cookieName(passkeyCookie))
	if !validToken(binding) {
		return payd.PasskeyFailed()
	}
	state, err := s.takeCeremony(ctx, wa, req.Credential, payd.WebAuthnSignin, payd.SecretHash(binding))
	if err != nil {
		return err
	}
	used, err := wa.FinishLogin(state, req.Credential, s.lookupPasskey(ctx))
	if err != nil {
		return s.passkeyError(err)
	}
	u, err := s.store.UserByID(ctx, used.UserID)
	if payd.IsNotFound(err) {
		return payd.PasskeyUnknown()
	} else if err != nil {
		return err
	}
	var st *started
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.UpdatePasskeyUse(ctx, used.ID, used.SignCount, used.BackupState, *used.LastUsedAt); err != nil {
			return err
		}
		var err error
		st, err = s.startSession(ctx, r, q, u, "passkey")
		return err
	})
	if payd.IsNotFound(err) {
		return payd.PasskeyUnknown() // removed meanwhile
	} else if err != nil {
		return err
	}
	s.setSession(w, st)
	s.setCookie(w, passkeyCookie, "", -1)
	writeJSON(w, http.StatusCreated, single{s.toSession(st.session, st.session.ID, u)})
	return nil
}

// stepUpOptions starts a passkey step-up for the session's account,
// allowing only its passkeys: no_passkeys when it has none.
func (s *Server) stepUpOptions(w http.ResponseWriter, r *http.Request) error {
	wa, c, existing, err := s.ownCeremony(r)
	if err != nil {
		return err
	}
	u := passkeyUser(c.user)
	opts, state, err := wa.BeginLogin(&u, existing, payd.WebAuthnStepUp, c.session.ID)
	if err != nil {
		return err
	}
	return s.startCeremony(w, r, "passkey_step_up_options", opts, state)
}

// passkeyProof verifies a step-up's passkey answer and records its use
// with the session's new proof, in one transaction.
func (s *Server) passkeyProof(ctx context.Context, c *call, answer json.RawMessage) error {
	wa, err := s.webauthn()
	if err != nil {
		return err
	}
	state, err := s.takeCeremony(ctx, wa, answer, payd.WebAuthnStepUp, c.session.ID)
	if err != nil {
		return err
	}
	if state.UserID != c.user.ID {
		return payd.PasskeyFailed()
	}
	used, err := wa.FinishLogin(state, answer, s.lookupPasskey(ctx))
	if err != nil {
		return s.passkeyError(err)
	}
	err = s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.UpdatePasskeyUse(ctx, used.ID, used.SignCount, used.BackupState, *used.LastUsedAt); err != nil {
			return err
		}
		ses := *c.session // a copy: fn may run again
		ses.ProofAt = used.LastUsedAt
		return q.SaveSession(ctx, &ses)
	})
	if payd.IsNotFound(err) {
		return payd.PasskeyUnknown()
	} else if err != nil {
		return err
	}
	c.session.ProofAt = used.LastUsedAt
	return nil
}
