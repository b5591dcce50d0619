package passkey

import (
	"testing"

	"payd"
	"payd/passkey/passkeytest"
)

// FuzzChallengeHash: any body gives a hash or passkey_failed, never a
// panic, and a hash is always 64 hex characters.
func FuzzChallengeHash(f *testing.F) {
	b := setup(f)
	a := &passkeytest.Authenticator{T: f, Origin: b.rp.Origin()}
	opts, _, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "")
	_, reg := a.Create(opts, passkeytest.FlagUV)
	f.Add(reg)
	f.Add([]byte(`{"response":{"clientDataJSON":"eyJjaGFsbGVuZ2UiOiJhYmMifQ=="}}`))
	f.Add([]byte(`{"response":{"clientDataJSON":"e30"}}`))
	f.Add([]byte(`{"response":{"clientDataJSON":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		h, err := ChallengeHash(body)
		if err != nil {
			if payd.ErrorCode(err) != payd.ErrPasskeyFailed {
				t.Fatalf("ChallengeHash error %v is not passkey_failed", err)
			}
			return
		}
		if len(h) != 64 {
			t.Fatalf("ChallengeHash = %q", h)
		}
	})
}

// FuzzFinish: whatever a client posts, both verifications answer with an
// error or a passkey, never a panic; a mangled answer is never accepted
// unless it still carries a valid signature over the ceremony.
func FuzzFinish(f *testing.F) {
	b := setup(f)
	a := &passkeytest.Authenticator{T: f, Origin: b.rp.Origin()}
	opts, reg, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "")
	k, regResp := a.Create(opts, passkeytest.FlagUV)
	pk, err := b.rp.FinishRegistration(reg, regResp)
	if err != nil {
		f.Fatal(err)
	}
	b.keys[string(pk.CredentialID)] = pk
	opts, login, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	f.Add(regResp)
	f.Add(a.Get(k, opts, 1))
	f.Add([]byte(`{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := *reg
		if p, err := b.rp.FinishRegistration(&r, body); err == nil && p.UserID != ada.ID {
			t.Fatalf("registration accepted for %q", p.UserID)
		}
		l := *login
		if p, err := b.rp.FinishLogin(&l, body, b.lookup); err == nil && p.ID != pk.ID {
			t.Fatalf("login accepted passkey %q", p.ID)
		}
	})
}
