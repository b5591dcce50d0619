package passkey

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"payd"
)

// FinishRegistration verifies the browser's answer to a registration's
// options (the JSON of the PublicKeyCredential, as its toJSON gives it)
// against the ceremony's state, taken from the store by
// ChallengeHash(response) and checked by the caller with
// WebAuthnChallenge.Check. It returns the new passkey, named
// payd.DefaultPasskeyName, for the caller to store (a credential already
// on an account is a conflict there: passkey_exists). Every failure is
// passkey_failed: an unreadable answer, a state of another purpose or
// expired, another ceremony's challenge, another origin or RP ID, a bad
// attestation, missing user presence.
func (rp *RP) FinishRegistration(state *payd.WebAuthnChallenge, response []byte) (*payd.Passkey, error) {
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, failed("unreadable registration", err)
	}
	session, err := rp.session(state, parsed.Response.CollectedClientData.Challenge, payd.WebAuthnRegister, payd.WebAuthnSignup)
	if err != nil {
		return nil, err
	}
	user := &waUser{id: []byte(state.UserID)}
	session.UserID = user.id
	cred, err := rp.wa.CreateCredential(user, session, parsed)
	if err != nil {
		return nil, failed("registration refused", err)
	}
	return &payd.Passkey{
		ID:             payd.NewID(payd.PrefixPasskey),
		UserID:         state.UserID,
		CredentialID:   cred.ID,
		PublicKey:      cred.PublicKey,
		AAGUID:         cred.Authenticator.AAGUID,
		SignCount:      cred.Authenticator.SignCount,
		Transports:     knownTransports(cred.Transport),
		BackupEligible: cred.Flags.BackupEligible,
		BackupState:    cred.Flags.BackupState,
		Name:           payd.DefaultPasskeyName,
		CreatedAt:      rp.clock.Now(),
	}, nil
}

// transports are the hints WebAuthn defines; a browser's other values are
// dropped rather than stored.
var transports = []protocol.AuthenticatorTransport{protocol.USB, protocol.NFC, protocol.BLE, protocol.SmartCard,
	protocol.Hybrid, protocol.Internal}

// knownTransports keeps the known hints of ts, each once, in their order.
func knownTransports(ts []protocol.AuthenticatorTransport) []string {
	var out []string
	for _, t := range ts {
		if slices.Contains(transports, t) && !slices.Contains(out, string(t)) {
			out = append(out, string(t))
		}
	}
	return out
}

// Lookup finds the passkey an assertion names (payd.PasskeyLookup).
type Lookup = payd.PasskeyLookup

// FinishLogin verifies the browser's answer to a sign-in's or step-up's
// options against the ceremony's state (taken by ChallengeHash(response)
// and checked with WebAuthnChallenge.Check). It returns the passkey used,
// as lookup found it but with the new signature counter, backup state and
// LastUsedAt, which the caller saves with UpdatePasskeyUse in the same
// transaction that signs the session in. A credential on no account, or at
// a step-up on another account than the state's, is passkey_unknown; every
// other failure is passkey_failed: an unreadable answer, a state of another
// purpose or expired, another ceremony's challenge, another origin or RP
// ID, a bad signature, no user verification, a user handle of another
// account, a counter that did not advance.
func (rp *RP) FinishLogin(state *payd.WebAuthnChallenge, response []byte, lookup Lookup) (*payd.Passkey, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, failed("unreadable assertion", err)
	}
	session, err := rp.session(state, parsed.Response.CollectedClientData.Challenge, payd.WebAuthnSignin, payd.WebAuthnStepUp)
	if err != nil {
		return nil, err
	}
	handle := parsed.Response.UserHandle
	pk, err := lookup(parsed.RawID, handle)
	switch {
	case payd.IsNotFound(err):
		return nil, fmt.Errorf("passkey: credential on no account: %w", payd.PasskeyUnknown())
	case err != nil:
		return nil, err
	case state.UserID != "" && pk.UserID != state.UserID:
		return nil, fmt.Errorf("passkey: credential of another account than the ceremony's: %w", payd.PasskeyUnknown())
	case len(handle) > 0 && !bytes.Equal(handle, []byte(pk.UserID)):
		return nil, failed("user handle of another account", nil)
	}
	// The allow list was the user's passkeys and pk is the user's: the
	// library's own ownership check needs every credential of the user,
	// which the lookup does not load.
	session.UserID, session.AllowedCredentialIDs = []byte(pk.UserID), nil
	user := &waUser{id: session.UserID, creds: []webauthn.Credential{{
		ID:        pk.CredentialID,
		PublicKey: pk.PublicKey,
		Flags:     webauthn.CredentialFlags{BackupEligible: pk.BackupEligible, BackupState: pk.BackupState},
		Authenticator: webauthn.Authenticator{
			AAGUID:    pk.AAGUID,
			SignCount: pk.SignCount,
		},
	}}}
	cred, err := rp.wa.ValidateLogin(user, session, parsed)
	if err != nil {
		return nil, failed("assertion refused", err)
	}
	if cred.Authenticator.CloneWarning {
		return nil, failed(fmt.Sprintf("signature counter %d did not advance past %d",
			parsed.Response.AuthenticatorData.Counter, pk.SignCount), nil)
	}
	now := rp.clock.Now()
	used := *pk
	used.SignCount = cred.Authenticator.SignCount
	used.BackupState = parsed.Response.AuthenticatorData.Flags.HasBackupState()
	used.LastUsedAt = &now
	return &used, nil
}
