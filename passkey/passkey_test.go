package passkey

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"payd"
	"payd/clock"
	"payd/passkey/passkeytest"
)

var b64u = base64.RawURLEncoding

const publicURL = "https://pay.example.com"

// bundle is what every test starts from: a relying party on a fake clock,
// a browser at the right origin, and the passkeys "stored" so far.
type bundle struct {
	rp    *RP
	clock *clock.Fake
	auth  *passkeytest.Authenticator
	keys  map[string]*payd.Passkey // by string(credential id)
}

func setup(t testing.TB) *bundle {
	t.Helper()
	clk := clock.NewFake(time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC))
	rp, err := New(publicURL, clk)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{rp: rp, clock: clk, auth: &passkeytest.Authenticator{T: t, Origin: "https://pay.example.com"},
		keys: map[string]*payd.Passkey{}}
}

var ada = User{ID: "usr_ada", Email: "ada@example.com", Name: "Ada"}

// lookup finds stored passkeys as the store would.
func (b *bundle) lookup(credID, _ []byte) (*payd.Passkey, error) {
	if p, ok := b.keys[string(credID)]; ok {
		return p, nil
	}
	return nil, payd.Errorf(payd.ErrNotFound, "passkey not found")
}

// take plays the store: the state is found by the hash of the challenge
// the response carries.
func take(t *testing.T, response []byte, states ...*payd.WebAuthnChallenge) *payd.WebAuthnChallenge {
	t.Helper()
	hash, err := ChallengeHash(response)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Hash == hash {
			return s
		}
	}
	t.Fatalf("no state has hash %s", hash)
	return nil
}

// register adds a passkey for user through the whole ceremony.
func (b *bundle) register(t *testing.T, user User, flags byte) (*passkeytest.Key, *payd.Passkey) {
	t.Helper()
	opts, state, err := b.rp.BeginRegistration(user, b.passkeysOf(user.ID), payd.WebAuthnRegister, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	k, resp := b.auth.Create(opts, flags)
	pk, err := b.rp.FinishRegistration(take(t, resp, state), resp)
	if err != nil {
		t.Fatal(err)
	}
	b.keys[string(pk.CredentialID)] = pk
	return k, pk
}

func (b *bundle) passkeysOf(userID string) []*payd.Passkey {
	var out []*payd.Passkey
	for _, p := range b.keys {
		if p.UserID == userID {
			out = append(out, p)
		}
	}
	return out
}

// wantCode fails unless err carries the payd code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := payd.ErrorCode(err); got != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func TestNew(t *testing.T) {
	for _, c := range []struct{ url, rpID, origin string }{
		{"https://pay.example.com", "pay.example.com", "https://pay.example.com"},
		{"https://Pay.Example.com:8443/base/", "pay.example.com", "https://pay.example.com:8443"},
		{"http://localhost:8080", "localhost", "http://localhost:8080"},
	} {
		rp, err := New(c.url, clock.Real{})
		if err != nil {
			t.Fatalf("New(%q): %v", c.url, err)
		}
		if rp.RPID() != c.rpID || rp.Origin() != c.origin {
			t.Errorf("New(%q) = RP ID %q, origin %q; want %q, %q", c.url, rp.RPID(), rp.Origin(), c.rpID, c.origin)
		}
	}
	for _, bad := range []string{"", "pay.example.com", "ftp://pay.example.com", "http://127.0.0.1:8080",
		"https://[::1]/", "https://user@pay.example.com", "https://"} {
		if _, err := New(bad, clock.Real{}); err == nil {
			t.Errorf("New(%q) succeeded, want an error", bad)
		}
	}
}

func TestRegisterAndSignIn(t *testing.T) {
	b := setup(t)
	opts, state, err := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	o := passkeytest.ReadOptions(t, opts)
	if o.PublicKey.RP.ID != "pay.example.com" || o.PublicKey.User.ID != b64u.EncodeToString([]byte("usr_ada")) ||
		o.PublicKey.Timeout != int(payd.WebAuthnChallengeTTL/time.Millisecond) {
		t.Fatalf("registration options %s", opts)
	}
	if !strings.Contains(string(opts), `"residentKey":"preferred"`) || !strings.Contains(string(opts), `"userVerification":"preferred"`) {
		t.Errorf("registration options %s: want resident key and user verification preferred", opts)
	}
	if state.UserID != "usr_ada" || state.Purpose != payd.WebAuthnRegister || state.Binding != "ses_1" ||
		!state.ExpiresAt.Equal(b.clock.Now().Add(5*time.Minute)) || len(state.Hash) != 64 {
		t.Fatalf("state %+v", state)
	}
	if bytes.Contains(state.State, []byte(o.PublicKey.Challenge)) {
		t.Fatalf("state %s holds the challenge itself", state.State)
	}

	k, resp := b.auth.Create(opts, passkeytest.FlagUV|passkeytest.FlagBE)
	if err := take(t, resp, state).Check(payd.WebAuthnRegister, "ses_1", b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	pk, err := b.rp.FinishRegistration(state, resp)
	if err != nil {
		t.Fatal(err)
	}
	if !payd.HasPrefix(pk.ID, payd.PrefixPasskey) || pk.UserID != "usr_ada" || !bytes.Equal(pk.CredentialID, k.ID) ||
		len(pk.PublicKey) == 0 || !pk.BackupEligible || pk.BackupState || pk.SignCount != 0 ||
		strings.Join(pk.Transports, ",") != "internal,hybrid" || pk.Name != payd.DefaultPasskeyName ||
		!pk.CreatedAt.Equal(b.clock.Now()) || pk.LastUsedAt != nil {
		t.Fatalf("passkey %+v", pk)
	}
	b.keys[string(pk.CredentialID)] = pk

	// A second registration excludes the first passkey.
	opts, _, err = b.rp.BeginRegistration(ada, b.passkeysOf("usr_ada"), payd.WebAuthnRegister, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	if ex := passkeytest.ReadOptions(t, opts).PublicKey.Exclude; len(ex) != 1 || ex[0].ID != b64u.EncodeToString(k.ID) {
		t.Fatalf("excludeCredentials = %+v, want the first passkey", ex)
	}

	// Discoverable sign-in: no user named, user verification required.
	b.clock.Advance(time.Hour)
	opts, state, err = b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	if err != nil {
		t.Fatal(err)
	}
	if o := passkeytest.ReadOptions(t, opts); o.PublicKey.RPID != "pay.example.com" || len(o.PublicKey.Allow) != 0 ||
		o.PublicKey.UserVerification != "required" {
		t.Fatalf("sign-in options %s", opts)
	}
	k.Flags |= passkeytest.FlagBS // synced meanwhile
	resp = b.auth.Get(k, opts, 1)
	used, err := b.rp.FinishLogin(take(t, resp, state), resp, b.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if used.ID != pk.ID || used.SignCount != 1 || !used.BackupState || used.LastUsedAt == nil ||
		!used.LastUsedAt.Equal(b.clock.Now()) {
		t.Fatalf("used passkey %+v", used)
	}
	if pk.SignCount != 0 || pk.LastUsedAt != nil {
		t.Fatalf("FinishLogin changed the looked-up passkey: %+v", pk)
	}
	b.keys[string(pk.CredentialID)] = used

	// Step-up: the user's passkeys are allowed.
	opts, state, err = b.rp.BeginLogin(&ada, b.passkeysOf("usr_ada"), payd.WebAuthnStepUp, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	if al := passkeytest.ReadOptions(t, opts).PublicKey.Allow; len(al) != 1 || al[0].ID != b64u.EncodeToString(k.ID) {
		t.Fatalf("allowCredentials = %+v", al)
	}
	resp = b.auth.Get(k, opts, 5)
	used, err = b.rp.FinishLogin(take(t, resp, state), resp, b.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if used.SignCount != 6 {
		t.Fatalf("sign count %d after step-up, want 6", used.SignCount)
	}
}

// TestNoCounter: authenticators that keep no counter (synced passkeys)
// report 0 every time, which is no regression.
func TestNoCounter(t *testing.T) {
	b := setup(t)
	k, _ := b.register(t, ada, passkeytest.FlagUV|passkeytest.FlagBE|passkeytest.FlagBS)
	for range 3 {
		opts, state, err := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.rp.FinishLogin(state, b.auth.Get(k, opts, 0), b.lookup); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSignupPurpose(t *testing.T) {
	b := setup(t)
	opts, state, err := b.rp.BeginRegistration(User{ID: "usr_new", Email: "new@example.com"}, nil, payd.WebAuthnSignup, "sgn_1")
	if err != nil {
		t.Fatal(err)
	}
	_, resp := b.auth.Create(opts, passkeytest.FlagUV)
	pk, err := b.rp.FinishRegistration(state, resp)
	if err != nil {
		t.Fatal(err)
	}
	if pk.UserID != "usr_new" || pk.BackupEligible {
		t.Fatalf("passkey %+v", pk)
	}
	// The same state cannot finish a login.
	if _, err := b.rp.FinishLogin(state, resp, b.lookup); payd.ErrorCode(err) != payd.ErrPasskeyFailed {
		t.Fatalf("FinishLogin with a registration's answer: %v", err)
	}
}

func TestBeginErrors(t *testing.T) {
	b := setup(t)
	var ten []*payd.Passkey
	for range payd.MaxPasskeys {
		ten = append(ten, &payd.Passkey{CredentialID: []byte{1}})
	}
	_, _, err := b.rp.BeginRegistration(ada, ten, payd.WebAuthnRegister, "ses_1")
	wantCode(t, err, payd.ErrPasskeyLimit)
	_, _, err = b.rp.BeginLogin(&ada, nil, payd.WebAuthnStepUp, "ses_1")
	wantCode(t, err, payd.ErrNoPasskeys)
	for _, bad := range []func() error{
		func() error { _, _, err := b.rp.BeginRegistration(ada, nil, payd.WebAuthnSignin, ""); return err },
		func() error { _, _, err := b.rp.BeginLogin(nil, nil, payd.WebAuthnRegister, ""); return err },
		func() error { _, _, err := b.rp.BeginLogin(nil, nil, payd.WebAuthnStepUp, "ses_1"); return err },
		func() error {
			_, _, err := b.rp.BeginRegistration(User{ID: strings.Repeat("u", 65), Email: "a@b.c"}, nil, payd.WebAuthnRegister, "")
			return err
		},
	} {
		if err := bad(); err == nil || payd.ErrorCode(err) != payd.ErrInternal {
			t.Errorf("misuse answered %v, want a plain error", err)
		}
	}
}

// TestRegistrationFailures: every refused registration is passkey_failed.
func TestRegistrationFailures(t *testing.T) {
	cases := []struct {
		name, why string
		// answer returns the state to finish with and the response.
		answer func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte)
	}{
		{"WrongOrigin", "validating origin", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			b.auth.Origin = "https://pay.example.com.evil.test"
			_, resp := b.auth.Create(opts, passkeytest.FlagUV)
			return state, resp
		}},
		{"WrongRPID", "RP Hash mismatch", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			o := passkeytest.ReadOptions(t, opts)
			k, _ := b.auth.Create(opts, passkeytest.FlagUV)
			return state, b.auth.Attest(k, o.PublicKey.Challenge, "example.com")
		}},
		{"ForeignChallenge", "another ceremony's challenge", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			_, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			other, _, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			_, resp := b.auth.Create(other, passkeytest.FlagUV)
			return state, resp
		}},
		{"Expired", "expired", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			_, resp := b.auth.Create(opts, passkeytest.FlagUV)
			b.clock.Advance(payd.WebAuthnChallengeTTL)
			return state, resp
		}},
		{"LoginState", "started for", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			_, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			opts, _, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			_, resp := b.auth.Create(opts, passkeytest.FlagUV)
			var o passkeytest.Options
			_ = json.Unmarshal(opts, &o)
			state.Hash = hashChallenge(o.PublicKey.Challenge) // even with the right challenge
			return state, resp
		}},
		{"BackupStateWithoutEligible", "Backup State", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			_, resp := b.auth.Create(opts, passkeytest.FlagUV|passkeytest.FlagBS)
			return state, resp
		}},
		{"Garbage", "unreadable", func(t *testing.T, b *bundle) (*payd.WebAuthnChallenge, []byte) {
			_, state, _ := b.rp.BeginRegistration(ada, nil, payd.WebAuthnRegister, "ses_1")
			return state, []byte(`{"id":"AA","rawId":"AA","type":"public-key","response":{}}`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			state, resp := c.answer(t, b)
			_, err := b.rp.FinishRegistration(state, resp)
			wantCode(t, err, payd.ErrPasskeyFailed)
			if !strings.Contains(err.Error(), c.why) {
				t.Fatalf("refused for %v, want %q", err, c.why)
			}
		})
	}
}

// TestLoginFailures: every refused sign-in is passkey_failed, or
// passkey_unknown for a credential on no account or on another account.
func TestLoginFailures(t *testing.T) {
	cases := []struct {
		name, code, why string
		answer          func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte)
	}{
		{"WrongOrigin", payd.ErrPasskeyFailed, "validating origin", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			b.auth.Origin = "http://pay.example.com"
			return state, b.auth.Get(k, opts, 1)
		}},
		{"WrongRPID", payd.ErrPasskeyFailed, "RP Hash mismatch", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			return state, b.auth.Assert(k, passkeytest.ReadOptions(t, opts).PublicKey.Challenge, "evil.test", 1, k.Handle)
		}},
		{"ForeignChallenge", payd.ErrPasskeyFailed, "another ceremony's challenge", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			_, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			other, _, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			return state, b.auth.Get(k, other, 1)
		}},
		{"Expired", payd.ErrPasskeyFailed, "expired", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			b.clock.Advance(payd.WebAuthnChallengeTTL)
			return state, b.auth.Get(k, opts, 1)
		}},
		{"RegistrationState", payd.ErrPasskeyFailed, "started for", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			state.Purpose = payd.WebAuthnRegister
			return state, b.auth.Get(k, opts, 1)
		}},
		{"BadSignature", payd.ErrPasskeyFailed, "assertion signature", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			resp := b.auth.Get(k, opts, 1)
			var m map[string]any
			_ = json.Unmarshal(resp, &m)
			sig, _ := b64u.DecodeString(m["response"].(map[string]any)["signature"].(string))
			sig[len(sig)-1] ^= 1
			m["response"].(map[string]any)["signature"] = b64u.EncodeToString(sig)
			out, _ := json.Marshal(m)
			return state, out
		}},
		{"SignedByAnotherKey", payd.ErrPasskeyFailed, "assertion signature", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			impostor, _ := b.auth.Create(mustOpts(t, b), passkeytest.FlagUV|passkeytest.FlagBE)
			impostor.ID, impostor.Handle = k.ID, k.Handle // claims ada's credential
			return state, b.auth.Get(impostor, opts, 7)
		}},
		{"NoUserVerification", payd.ErrPasskeyFailed, "User verification required", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			k.Flags &^= passkeytest.FlagUV
			return state, b.auth.Get(k, opts, 1)
		}},
		{"CounterBackwards", payd.ErrPasskeyFailed, "did not advance", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			b.keys[string(k.ID)].SignCount = 10 // a clone used it up to 10
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			return state, b.auth.Get(k, opts, 1)
		}},
		{"CounterRepeated", payd.ErrPasskeyFailed, "did not advance", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			b.keys[string(k.ID)].SignCount = 4
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			return state, b.auth.Get(k, opts, 4)
		}},
		{"BackupEligibleChanged", payd.ErrPasskeyFailed, "Backup Eligible", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			k.Flags &^= passkeytest.FlagBE
			return state, b.auth.Get(k, opts, 1)
		}},
		{"UserHandleOfAnother", payd.ErrPasskeyFailed, "user handle", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			k.Handle = []byte("usr_bob")
			return state, b.auth.Get(k, opts, 1)
		}},
		{"UnknownCredential", payd.ErrPasskeyUnknown, "no account", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			delete(b.keys, string(k.ID)) // removed from the account
			opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
			return state, b.auth.Get(k, opts, 1)
		}},
		{"StepUpWithAnotherAccountsPasskey", payd.ErrPasskeyUnknown, "another account", func(t *testing.T, b *bundle, k *passkeytest.Key) (*payd.WebAuthnChallenge, []byte) {
			bob := User{ID: "usr_bob", Email: "bob@example.com"}
			b.register(t, bob, passkeytest.FlagUV)
			opts, state, _ := b.rp.BeginLogin(&bob, b.passkeysOf("usr_bob"), payd.WebAuthnStepUp, "ses_bob")
			return state, b.auth.Get(k, opts, 1) // ada's passkey, in bob's session
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			k, _ := b.register(t, ada, passkeytest.FlagUV|passkeytest.FlagBE)
			state, resp := c.answer(t, b, k)
			_, err := b.rp.FinishLogin(state, resp, b.lookup)
			wantCode(t, err, c.code)
			if !strings.Contains(err.Error(), c.why) {
				t.Fatalf("refused for %v, want %q", err, c.why)
			}
		})
	}
}

func mustOpts(t *testing.T, b *bundle) []byte {
	t.Helper()
	opts, _, err := b.rp.BeginRegistration(User{ID: "usr_imp", Email: "imp@example.com"}, nil, payd.WebAuthnRegister, "")
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// TestReplay: a response is good once, because its state is taken from the
// store once; finishing with a state of another ceremony fails.
func TestReplay(t *testing.T) {
	b := setup(t)
	k, _ := b.register(t, ada, passkeytest.FlagUV)
	opts, state, err := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	if err != nil {
		t.Fatal(err)
	}
	resp := b.auth.Get(k, opts, 1)
	used, err := b.rp.FinishLogin(state, resp, b.lookup)
	if err != nil {
		t.Fatal(err)
	}
	b.keys[string(k.ID)] = used
	// The store gave the state away; a replay presented with the next
	// ceremony's state is foreign to it.
	_, next, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	_, err = b.rp.FinishLogin(next, resp, b.lookup)
	wantCode(t, err, payd.ErrPasskeyFailed)
	_, err = b.rp.FinishLogin(nil, resp, b.lookup)
	wantCode(t, err, payd.ErrPasskeyFailed)
}

// TestLookupError: a store failure is passed on, not disguised.
func TestLookupError(t *testing.T) {
	b := setup(t)
	k, _ := b.register(t, ada, passkeytest.FlagUV)
	opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	boom := errors.New("database gone")
	_, err := b.rp.FinishLogin(state, b.auth.Get(k, opts, 1), func(_, _ []byte) (*payd.Passkey, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("FinishLogin = %v, want the lookup's error", err)
	}
}

func TestKnownTransports(t *testing.T) {
	got := knownTransports([]protocol.AuthenticatorTransport{"usb", "carrier-pigeon", "internal", "usb", "", "a,b", "hybrid"})
	if strings.Join(got, ",") != "usb,internal,hybrid" {
		t.Fatalf("knownTransports = %q", got)
	}
	if knownTransports(nil) != nil {
		t.Fatal("knownTransports(nil) is not nil")
	}
}

func TestChallengeHash(t *testing.T) {
	b := setup(t)
	opts, state, _ := b.rp.BeginLogin(nil, nil, payd.WebAuthnSignin, "")
	k, _ := b.register(t, ada, passkeytest.FlagUV)
	resp := b.auth.Get(k, opts, 1)
	if got, err := ChallengeHash(resp); err != nil || got != state.Hash {
		t.Fatalf("ChallengeHash = %q, %v; want %q", got, err, state.Hash)
	}
	for _, bad := range []string{``, `null`, `{}`, `[]`, `{"response":{"clientDataJSON":"!!"}}`,
		`{"response":{"clientDataJSON":"e30"}}`,    // {}
		`{"response":{"clientDataJSON":"bnVsbA"}}`, // null
	} {
		_, err := ChallengeHash([]byte(bad))
		wantCode(t, err, payd.ErrPasskeyFailed)
	}
}
