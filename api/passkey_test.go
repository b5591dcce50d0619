package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/passkey/passkeytest"
	"payd/store"
	"payd/store/storetest"
)

// The passkey routes through the real server, with the software
// authenticator of package passkeytest standing in for the browser's.

// send posts v as JSON to path and checks the answer as call does.
func (br *browser) send(method, path string, v any, status int, code ...string) map[string]any {
	br.t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		br.t.Fatal(err)
	}
	return br.call(request{method: method, path: path, body: string(body)}, status, code...)
}

// noContent sends req and wants 204.
func (br *browser) noContent(req request) {
	br.t.Helper()
	if r := br.do(req); r.status != http.StatusNoContent {
		br.t.Fatalf("%s %s: got %d %s, want 204", req.method, req.path, r.status, r.body)
	}
}

// options asks path for a ceremony's options and returns them as the
// authenticator reads them: {"publicKey": {...}}.
func (br *browser) options(path string) []byte {
	br.t.Helper()
	data := br.call(request{method: "POST", path: path, body: `{}`}, http.StatusOK)["data"].(map[string]any)
	raw, err := json.Marshal(map[string]any{"publicKey": data["publicKey"]})
	if err != nil {
		br.t.Fatal(err)
	}
	return raw
}

// addPasskey registers a new credential of a to br's account.
func (br *browser) addPasskey(a *passkeytest.Authenticator, name string) (*passkeytest.Key, map[string]any) {
	br.t.Helper()
	k, answer := a.Create(br.options("/me/passkeys/registration/options"), passkeytest.FlagUV)
	pk := br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(answer), "name": name},
		http.StatusCreated)["data"].(map[string]any)
	return k, pk
}

// passkeySignIn signs br in with k.
func (br *browser) passkeySignIn(a *passkeytest.Authenticator, k *passkeytest.Key, status int, code ...string) map[string]any {
	br.t.Helper()
	answer := a.Get(k, br.options("/passkeys/authentication/options"), 1)
	return br.send("POST", "/passkeys/authentication/verify", map[string]any{"credential": json.RawMessage(answer)}, status, code...)
}

// signUpWithoutPassword signs br up with a passkey sign-up: no password.
func (br *browser) signUpWithoutPassword(email string) map[string]any {
	br.t.Helper()
	tok := br.b.token(br.t, "signup")
	br.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": tok},
		body: fmt.Sprintf(`{"email":%q,"name":"Bo"}`, email)}, http.StatusAccepted)
	code := br.b.lastCode(br.t, email)
	return br.call(request{method: "POST", path: "/accounts/verify",
		body: fmt.Sprintf(`{"email":%q,"code":%q}`, email, code)}, http.StatusCreated)["data"].(map[string]any)
}

func newAuthenticator(t *testing.T) *passkeytest.Authenticator {
	return &passkeytest.Authenticator{T: t, Origin: "http://payd.test"}
}

func TestPasskeyRegisterAndSignIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := newAuthenticator(t)
		br := newBrowser(t, b)
		u := br.signUp("ada@example.com")
		k, pk := br.addPasskey(a, "  Laptop ")
		if pk["name"] != "Laptop" || pk["last_used_at"] != nil || !payd.HasPrefix(pk["id"].(string), payd.PrefixPasskey) {
			t.Fatalf("new passkey = %v", pk)
		}
		// An answer is good once.
		opts := br.options("/me/passkeys/registration/options")
		_, answer := a.Create(opts, passkeytest.FlagUV)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(answer)}, http.StatusCreated)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(answer)},
			http.StatusBadRequest, payd.ErrPasskeyFailed)
		// The same credential again, on a fresh ceremony: passkey_exists.
		o := passkeytest.ReadOptions(t, br.options("/me/passkeys/registration/options"))
		again := a.Attest(k, o.PublicKey.Challenge, o.PublicKey.RP.ID)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(again)}, http.StatusConflict, payd.ErrPasskeyExists)
		// A ceremony started in another session is not finished here.
		other := newBrowser(t, b)
		other.signIn("ada@example.com", testPassword, http.StatusCreated)
		_, foreign := a.Create(other.options("/me/passkeys/registration/options"), passkeytest.FlagUV)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(foreign)}, http.StatusBadRequest, payd.ErrPasskeyFailed)
		// Garbage is passkey_failed; a missing credential invalid_request.
		br.send("POST", "/me/passkeys", map[string]any{"credential": map[string]any{"id": "x"}}, http.StatusBadRequest, payd.ErrPasskeyFailed)
		br.send("POST", "/me/passkeys", map[string]any{}, http.StatusBadRequest, payd.ErrInvalidRequest)

		list := br.call(request{method: "GET", path: "/me/passkeys"}, http.StatusOK)["data"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["id"] != pk["id"] {
			t.Fatalf("GET /me/passkeys = %v", list)
		}
		id := pk["id"].(string)
		if got := br.send("PATCH", "/me/passkeys/"+id, map[string]any{"name": "Phone"}, http.StatusOK)["data"].(map[string]any); got["name"] != "Phone" {
			t.Fatalf("renamed = %v", got)
		}
		br.send("PATCH", "/me/passkeys/"+id, map[string]any{"name": " "}, http.StatusBadRequest, payd.ErrInvalidRequest)
		br.send("PATCH", "/me/passkeys/pky_nope", map[string]any{"name": "x"}, http.StatusNotFound, payd.ErrNotFound)
		other.send("PATCH", "/me/passkeys/"+id, map[string]any{"name": "x"}, http.StatusOK) // same account, other session

		// Sign in with the passkey in a new browser: a session like a
		// password's, method passkey, and the passkey's use recorded.
		br2 := newBrowser(t, b)
		ses := br2.passkeySignIn(a, k, http.StatusCreated)["data"].(map[string]any)
		if ses["method"] != "passkey" || ses["proven_until"] == nil || ses["user"].(map[string]any)["id"] != u["id"] {
			t.Fatalf("passkey sign-in = %v", ses)
		}
		if br2.cookie(sessionCookie) == "" || br2.cookie(passkeyCookie) != "" {
			t.Fatal("passkey sign-in did not set the session cookie or kept the binding cookie")
		}
		br2.call(request{method: "GET", path: "/me"}, http.StatusOK)
		list = br.call(request{method: "GET", path: "/me/passkeys"}, http.StatusOK)["data"].([]any)
		if list[0].(map[string]any)["last_used_at"] == nil {
			t.Fatalf("last_used_at not set after sign-in: %v", list[0])
		}
		// The options are bound to the browser that asked: another one
		// without the binding cookie cannot use the answer.
		answer = a.Get(k, br2.options("/passkeys/authentication/options"), 1)
		newBrowser(t, b).send("POST", "/passkeys/authentication/verify", map[string]any{"credential": json.RawMessage(answer)},
			http.StatusBadRequest, payd.ErrPasskeyFailed)
		// Another site's form cannot sign a browser in.
		answer = a.Get(k, br2.options("/passkeys/authentication/options"), 1)
		body, _ := json.Marshal(map[string]any{"credential": json.RawMessage(answer)})
		br2.call(request{method: "POST", path: "/passkeys/authentication/verify", body: string(body),
			header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden, payd.ErrCrossSiteRequest)
		// Expired options.
		opts = br2.options("/passkeys/authentication/options")
		b.clock.Advance(payd.WebAuthnChallengeTTL)
		br2.send("POST", "/passkeys/authentication/verify", map[string]any{"credential": json.RawMessage(a.Get(k, opts, 1))},
			http.StatusBadRequest, payd.ErrPasskeyFailed)
		// A credential on no account.
		stray, _ := a.Create(br.options("/me/passkeys/registration/options"), passkeytest.FlagUV)
		br2.passkeySignIn(a, stray, http.StatusBadRequest, payd.ErrPasskeyUnknown)
		// No user verification: a passkey must stand in for the second step too.
		k.Flags &^= passkeytest.FlagUV
		br2.passkeySignIn(a, k, http.StatusBadRequest, payd.ErrPasskeyFailed)
		k.Flags |= passkeytest.FlagUV
		// A counter that went backwards (a cloned authenticator).
		k.Counter = 0
		br2.passkeySignIn(a, k, http.StatusBadRequest, payd.ErrPasskeyFailed)
		if logs := b.logs.String(); !strings.Contains(logs, "passkey answer refused") {
			t.Fatal("a refused passkey answer was not logged with its reason")
		}
	})
}

func TestPasskeyStepUp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := newAuthenticator(t)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		// An account without passkeys cannot step up with one.
		br.call(request{method: "POST", path: "/sessions/current/step-up/options", body: `{}`}, http.StatusConflict, payd.ErrNoPasskeys)
		k, _ := br.addPasskey(a, "Laptop")

		// Adding a passkey is a sensitive change.
		b.clock.Advance(16 * time.Minute)
		br.call(request{method: "POST", path: "/me/passkeys/registration/options", body: `{}`}, http.StatusForbidden, payd.ErrStepUpRequired)
		br.send("POST", "/sessions/current/step-up", map[string]any{}, http.StatusBadRequest, payd.ErrInvalidRequest)
		opts := br.options("/sessions/current/step-up/options")
		if al := passkeytest.ReadOptions(t, opts).PublicKey.Allow; len(al) != 1 {
			t.Fatalf("step-up allows %v, want the one passkey", al)
		}
		answer := a.Get(k, opts, 1)
		br.send("POST", "/sessions/current/step-up", map[string]any{"password": testPassword, "passkey": json.RawMessage(answer)},
			http.StatusBadRequest, payd.ErrInvalidRequest)
		ses := br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(answer)}, http.StatusOK)["data"].(map[string]any)
		if ses["proven_until"] == nil {
			t.Fatalf("passkey step-up answered %v without proven_until", ses)
		}
		br.options("/me/passkeys/registration/options")
		// The answer was spent.
		br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(answer)}, http.StatusBadRequest, payd.ErrPasskeyFailed)
		// A sign-in's options cannot prove a step-up.
		answer = a.Get(k, br.options("/passkeys/authentication/options"), 1)
		br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(answer)}, http.StatusBadRequest, payd.ErrPasskeyFailed)
		// Another account's passkey cannot prove this session's step-up.
		bo := newBrowser(t, b)
		bo.signUp("bo@example.com")
		kb, _ := bo.addPasskey(a, "Bo's")
		answer = a.Get(kb, br.options("/sessions/current/step-up/options"), 1)
		br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(answer)}, http.StatusBadRequest, payd.ErrPasskeyUnknown)
		// A step-up begun in one session is not finished in another.
		answer = a.Get(kb, bo.options("/sessions/current/step-up/options"), 1)
		br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(answer)}, http.StatusBadRequest, payd.ErrPasskeyFailed)
		// The password still works.
		br.send("POST", "/sessions/current/step-up", map[string]any{"password": testPassword}, http.StatusOK)
	})
}

func TestPasskeySignupAndRemoval(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := newAuthenticator(t)
		br := newBrowser(t, b)
		u := br.signUpWithoutPassword("bo@example.com")
		if u["has_password"] != false {
			t.Fatalf("passkey sign-up = %v", u)
		}
		// The session fresh from sign-up carries a proof: the first passkey
		// goes on at once.
		k, pk := br.addPasskey(a, "Phone")
		id := pk["id"].(string)
		br.call(request{method: "DELETE", path: "/me/passkeys/" + id}, http.StatusConflict, payd.ErrLastSignInMethod)
		br.call(request{method: "DELETE", path: "/me/passkeys/pky_nope"}, http.StatusNotFound, payd.ErrNotFound)
		// Signed out, the passkey signs the account in.
		br.noContent(request{method: "DELETE", path: "/sessions/current"})
		br.passkeySignIn(a, k, http.StatusCreated)
		k2, pk2 := br.addPasskey(a, "Laptop")
		// Removing is a sensitive change.
		b.clock.Advance(16 * time.Minute)
		br.call(request{method: "DELETE", path: "/me/passkeys/" + id}, http.StatusForbidden, payd.ErrStepUpRequired)
		br.send("POST", "/sessions/current/step-up", map[string]any{"passkey": json.RawMessage(
			a.Get(k2, br.options("/sessions/current/step-up/options"), 1))}, http.StatusOK)
		br.noContent(request{method: "DELETE", path: "/me/passkeys/" + id})
		br.call(request{method: "DELETE", path: "/me/passkeys/" + pk2["id"].(string)}, http.StatusConflict, payd.ErrLastSignInMethod)
		// A removed passkey signs nobody in.
		newBrowser(t, b).passkeySignIn(a, k, http.StatusBadRequest, payd.ErrPasskeyUnknown)
	})
}

func TestPasskeyLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		a := newAuthenticator(t)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		for i := 0; i < payd.MaxPasskeys-1; i++ {
			br.addPasskey(a, fmt.Sprintf("Key %d", i))
		}
		// Two windows on, the registrations so far no longer count (spec
		// 8.2's limit is a sliding window); a new proof is needed.
		b.clock.Advance(20 * time.Minute)
		br.send("POST", "/sessions/current/step-up", map[string]any{"password": testPassword}, http.StatusOK)
		// Two ceremonies at once: the second to finish finds the account full.
		_, first := a.Create(br.options("/me/passkeys/registration/options"), passkeytest.FlagUV)
		_, second := a.Create(br.options("/me/passkeys/registration/options"), passkeytest.FlagUV)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(first)}, http.StatusCreated)
		br.send("POST", "/me/passkeys", map[string]any{"credential": json.RawMessage(second)}, http.StatusConflict, payd.ErrPasskeyLimit)
		br.call(request{method: "POST", path: "/me/passkeys/registration/options", body: `{}`}, http.StatusConflict, payd.ErrPasskeyLimit)
		// Registration shares one budget of 20 per 10 minutes per address.
		r := br.do(request{method: "POST", path: "/me/passkeys/registration/options", body: `{}`})
		for r.status != http.StatusTooManyRequests {
			r = br.do(request{method: "POST", path: "/me/passkeys/registration/options", body: `{}`})
		}
		if code, _ := r.errorCode(t); code != payd.ErrRateLimited || r.header.Get("Retry-After") == "" {
			t.Fatalf("over the budget: %d %s", r.status, r.body)
		}
	})
}

func TestPasskeyCeremoniesReaped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.options("/passkeys/authentication/options")
		br.options("/passkeys/authentication/options")
		rp := NewReaper(db, b.clock, slog.New(slog.DiscardHandler), time.Minute)
		if err := rp.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(payd.WebAuthnChallengeTTL)
		if err := rp.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n, err := db.DeleteExpiredWebAuthnChallenges(t.Context(), b.clock.Now().Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("after the reaper, %d ceremonies (%v) were left", n, err)
		}
	})
}

func TestPasskeysUnavailable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupWith(t, db, func(o *Options) { o.Passkeys = nil })
		br := newBrowser(t, b)
		br.call(request{method: "POST", path: "/passkeys/authentication/options", body: `{}`},
			http.StatusServiceUnavailable, payd.ErrTemporarilyUnavailable)
	})
}
