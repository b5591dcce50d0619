// Package passkey runs payd's WebAuthn ceremonies (docs/passkeys.md) with
// github.com/go-webauthn/webauthn: the options a browser passes to
// navigator.credentials.create or .get, and the verification of what the
// authenticator answered. It stores nothing itself: a ceremony's state is a
// payd.WebAuthnChallenge that the caller stores between the two steps and
// takes once, and a registered credential is a payd.Passkey.
//
// Every failed verification is passkey_failed (spec 7.6) and a credential
// on no account passkey_unknown; the error wraps a payd.Error whose code
// the API renders, and its text carries the reason for the log.
package passkey

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"payd"
	"payd/clock"
)

// RPName is the relying party's name browsers may show.
const RPName = "payd"

// MaxUserID is the longest user id WebAuthn accepts as a user handle, in
// bytes.
const MaxUserID = 64

// RP is payd's WebAuthn relying party: one per public URL.
type RP struct {
	wa     *webauthn.WebAuthn
	clock  clock.Clock
	rpID   string
	origin string
}

// New returns the relying party of the service at publicURL: its RP ID is
// the URL's host (no port), its one accepted origin the URL's scheme, host
// and port. Browsers run WebAuthn only in a secure context, https or
// http://localhost, and refuse an IP address as RP ID, which New refuses
// too. Expiry follows clk.
func New(publicURL string, clk clock.Clock) (*RP, error) {
	u, err := url.Parse(publicURL)
	if err != nil {
		return nil, fmt.Errorf("passkey: public URL: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil {
		return nil, fmt.Errorf("passkey: public URL %q is not an http(s) URL with a host", publicURL)
	}
	host := strings.ToLower(u.Hostname())
	if net.ParseIP(host) != nil {
		return nil, fmt.Errorf("passkey: public URL %q has an IP address for host; WebAuthn needs a domain name", publicURL)
	}
	origin := u.Scheme + "://" + strings.ToLower(u.Host)
	sel := protocol.AuthenticatorSelection{
		ResidentKey:        protocol.ResidentKeyRequirementPreferred,
		RequireResidentKey: protocol.ResidentKeyNotRequired(),
		UserVerification:   protocol.VerificationPreferred,
	}
	timeout := webauthn.TimeoutConfig{Timeout: payd.WebAuthnChallengeTTL, TimeoutUVD: payd.WebAuthnChallengeTTL}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                   host,
		RPDisplayName:          RPName,
		RPOrigins:              []string{origin},
		AttestationPreference:  protocol.PreferNoAttestation,
		AuthenticatorSelection: sel,
		// Expiry is payd's to enforce, on the service clock: the library
		// would read the wall clock, which the dev test clock does not move.
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return &RP{wa: wa, clock: clk, rpID: host, origin: origin}, nil
}

// RP runs payd's ceremonies for the API.
var _ payd.WebAuthn = (*RP)(nil)

// RPID returns the relying party id: the public URL's host.
func (rp *RP) RPID() string { return rp.rpID }

// Origin returns the one origin ceremonies are accepted from.
func (rp *RP) Origin() string { return rp.origin }

// User is the account a registration is for.
type User = payd.PasskeyUser

// waUser adapts a user to go-webauthn.
type waUser struct {
	id          []byte
	name, shown string
	creds       []webauthn.Credential
}

func (u *waUser) WebAuthnID() []byte                         { return u.id }
func (u *waUser) WebAuthnName() string                       { return u.name }
func (u *waUser) WebAuthnDisplayName() string                { return u.shown }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// descriptors lists passkeys as the credentials of an exclude or allow list.
func descriptors(ps []*payd.Passkey) []protocol.CredentialDescriptor {
	out := make([]protocol.CredentialDescriptor, 0, len(ps))
	for _, p := range ps {
		d := protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: p.CredentialID}
		for _, t := range p.Transports {
			d.Transport = append(d.Transport, protocol.AuthenticatorTransport(t))
		}
		out = append(out, d)
	}
	return out
}

// BeginRegistration starts adding a passkey to user, for purpose register
// (a signed-in account) or signup (an account being created, whose id is
// already chosen), bound to binding (payd.WebAuthnChallenge.Binding). It
// returns the options for navigator.credentials.create, as JSON
// {"publicKey": {...}} with binary members in base64url, and the
// ceremony's state for the caller to store. existing are the user's
// passkeys: the browser is told not to register one of them again, and a
// user holding MaxPasskeys already gets passkey_limit.
func (rp *RP) BeginRegistration(user User, existing []*payd.Passkey, purpose payd.WebAuthnPurpose, binding string) (json.RawMessage, *payd.WebAuthnChallenge, error) {
	if purpose != payd.WebAuthnRegister && purpose != payd.WebAuthnSignup {
		return nil, nil, fmt.Errorf("passkey: registration cannot be for purpose %q", purpose)
	}
	if user.ID == "" || len(user.ID) > MaxUserID || user.Email == "" {
		return nil, nil, fmt.Errorf("passkey: registration needs a user id of 1 to %d bytes and an email", MaxUserID)
	}
	if err := payd.PasskeyLimit(len(existing)); err != nil {
		return nil, nil, err
	}
	shown := user.Name
	if shown == "" {
		shown = user.Email
	}
	creation, session, err := rp.wa.BeginRegistration(&waUser{id: []byte(user.ID), name: user.Email, shown: shown},
		webauthn.WithExclusions(descriptors(existing)))
	if err != nil {
		return nil, nil, fmt.Errorf("passkey: begin registration: %w", err)
	}
	return rp.begin(creation, session, user.ID, purpose, binding)
}

// BeginLogin starts a sign-in (purpose signin) or a step-up (step_up)
// bound to binding. With user nil it is a discoverable sign-in: no account
// is named and the browser offers every passkey it holds for payd. With a
// user, only passkeys (the user's own) are allowed; none at all is
// no_passkeys. A step-up always names its user. It returns the options for
// navigator.credentials.get, as JSON {"publicKey": {...}}, and the
// ceremony's state for the caller to store. Sign-in requires user
// verification (a PIN or biometric on the authenticator): a passkey stands
// in for the password and the second step together.
func (rp *RP) BeginLogin(user *User, passkeys []*payd.Passkey, purpose payd.WebAuthnPurpose, binding string) (json.RawMessage, *payd.WebAuthnChallenge, error) {
	if purpose != payd.WebAuthnSignin && purpose != payd.WebAuthnStepUp {
		return nil, nil, fmt.Errorf("passkey: sign-in cannot be for purpose %q", purpose)
	}
	if purpose == payd.WebAuthnStepUp && user == nil {
		return nil, nil, errors.New("passkey: a step-up names its user")
	}
	userID := ""
	opts := []webauthn.LoginOption{webauthn.WithUserVerification(protocol.VerificationRequired)}
	if user != nil {
		if len(passkeys) == 0 {
			return nil, nil, payd.Errorf(payd.ErrNoPasskeys, "this account has no passkeys")
		}
		userID = user.ID
		opts = append(opts, webauthn.WithAllowedCredentials(descriptors(passkeys)))
	}
	assertion, session, err := rp.wa.BeginDiscoverableLogin(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("passkey: begin login: %w", err)
	}
	return rp.begin(assertion, session, userID, purpose, binding)
}

// begin renders a ceremony's options and makes its state: the challenge is
// kept only as its hash, which finds the state again from the response.
func (rp *RP) begin(options any, session *webauthn.SessionData, userID string, purpose payd.WebAuthnPurpose, binding string) (json.RawMessage, *payd.WebAuthnChallenge, error) {
	out, err := json.Marshal(options)
	if err != nil {
		return nil, nil, fmt.Errorf("passkey: options: %w", err)
	}
	hash := hashChallenge(session.Challenge)
	session.Challenge = ""
	state, err := json.Marshal(session)
	if err != nil {
		return nil, nil, fmt.Errorf("passkey: state: %w", err)
	}
	now := rp.clock.Now()
	return out, &payd.WebAuthnChallenge{
		Hash: hash, State: state, UserID: userID, Purpose: purpose, Binding: binding,
		CreatedAt: now, ExpiresAt: now.Add(payd.WebAuthnChallengeTTL),
	}, nil
}

// hashChallenge is how a challenge is stored and found: the hex SHA-256 of
// its base64url text, exactly as clientDataJSON carries it.
func hashChallenge(challenge string) string {
	sum := sha256.Sum256([]byte(challenge))
	return hex.EncodeToString(sum[:])
}

// failed returns passkey_failed carrying why, for the log.
func failed(why string, err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		why = fmt.Sprintf("%s: %s (%s)", why, pe.Details, pe.DevInfo)
	} else if err != nil {
		why = fmt.Sprintf("%s: %v", why, err)
	}
	return fmt.Errorf("passkey: %s: %w", why, payd.PasskeyFailed())
}

// session checks the stored state against purposes, the clock and the
// challenge the response carries, and returns the library's session data
// with that challenge restored.
func (rp *RP) session(state *payd.WebAuthnChallenge, challenge string, purposes ...payd.WebAuthnPurpose) (webauthn.SessionData, error) {
	var s webauthn.SessionData
	if state == nil {
		return s, failed("no ceremony state", nil)
	}
	ok := false
	for _, p := range purposes {
		ok = ok || state.Purpose == p
	}
	if !ok {
		return s, failed(fmt.Sprintf("ceremony started for %q", state.Purpose), nil)
	}
	if !rp.clock.Now().Before(state.ExpiresAt) {
		return s, failed("ceremony expired", nil)
	}
	if subtle.ConstantTimeCompare([]byte(hashChallenge(challenge)), []byte(state.Hash)) != 1 {
		return s, failed("response signs another ceremony's challenge", nil)
	}
	if err := json.Unmarshal(state.State, &s); err != nil {
		return s, fmt.Errorf("passkey: stored ceremony state: %w", err)
	}
	// Expiry was checked above on the service clock; the library's own
	// check would read the wall clock.
	s.Challenge, s.Expires = challenge, time.Time{}
	return s, nil
}
