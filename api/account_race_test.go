package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// gatedHasher holds one Verify, once it has answered, until released:
// a sign-in that is checking its password while something else commits.
type gatedHasher struct {
	payd.PasswordHasher
	gate chan chan struct{}
}

func (g *gatedHasher) Verify(ctx context.Context, pw, enc string) (bool, bool, error) {
	ok, re, err := g.PasswordHasher.Verify(ctx, pw, enc)
	select {
	case release := <-g.gate:
		<-release
	default:
	}
	return ok, re, err
}

// signInDuring signs in as email with the test password from a new
// browser, holds that sign-in inside Verify (its password checked) while
// during runs, then lets it finish: the browser and the sign-in's answer.
func (g *gatedHasher) signInDuring(t *testing.T, b *bundle, email string, during func()) (*browser, *response) {
	t.Helper()
	release := make(chan struct{})
	g.gate <- release
	br := newBrowser(t, b)
	done := make(chan *response)
	tok := b.token(t, "signin")
	go func() {
		done <- br.do(request{method: "POST", path: "/sessions", header: map[string]string{"Service-Challenge": tok},
			body: fmt.Sprintf(`{"email":%q,"password":%q}`, email, testPassword)})
	}()
	for len(g.gate) > 0 { // until the sign-in's Verify holds the gate
	}
	during()
	close(release)
	return br, <-done
}

// TestSigninDoesNotOutliveAReset: a sign-in whose password was checked
// before a reset committed gets no session; the reset ended them all.
func TestSigninDoesNotOutliveAReset(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		g := &gatedHasher{PasswordHasher: testHasher, gate: make(chan chan struct{}, 1)}
		b := setupWith(t, db, func(o *Options) { o.Passwords = g })
		owner := newBrowser(t, b)
		owner.signUp("ada@example.com")
		owner.askReset("ada@example.com", http.StatusAccepted)
		token := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		attacker, r := g.signInDuring(t, b, "ada@example.com", func() {
			owner.call(request{method: "POST", path: "/password-resets/confirm",
				body: fmt.Sprintf(`{"token":%q,"password":%q}`, token, "a brand new passphrase 42")}, http.StatusOK)
		})
		if r.status != http.StatusBadRequest {
			t.Fatalf("sign-in checked before the reset: %d %s, want invalid_credentials", r.status, r.body)
		}
		attacker.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
	})
}

// TestSecureCookieNames: under an https public URL every cookie payd sets
// carries the __Host- prefix and is read back under that name.
func TestSecureCookieNames(t *testing.T) {
	s := &Server{opts: Options{PublicURL: "https://pay.example"}}
	for _, base := range []string{sessionCookie, signupCookie, deviceCookie, passkeyCookie, twoFactorCookie} {
		rec := httptest.NewRecorder()
		s.setCookie(rec, base, "abc123", 300)
		req := httptest.NewRequest("POST", "/", nil)
		for _, c := range rec.Result().Cookies() {
			if c.Name != "__Host-"+base || !c.Secure || !c.HttpOnly || c.Path != "/" {
				t.Errorf("cookie %+v", c)
			}
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
		if got := cookie(req, s.cookieName(base)); got != "abc123" {
			t.Errorf("%s read back as %q", base, got)
		}
	}
}

// TestSigninAfterTwoFactorTurnedOn: a sign-in whose password was checked
// before two-step sign-in was turned on gets the second step, not a
// session.
func TestSigninAfterTwoFactorTurnedOn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		g := &gatedHasher{PasswordHasher: testHasher, gate: make(chan chan struct{}, 1)}
		b := setupWith(t, db, func(o *Options) { o.Passwords = g })
		owner := newBrowser(t, b)
		owner.signUp("ada@example.com")
		secret := owner.twoFactor(`{"action":"setup"}`, http.StatusOK)["data"].(map[string]any)["secret"].(string)
		attacker, r := g.signInDuring(t, b, "ada@example.com", func() {
			owner.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, owner.authCode(secret)), http.StatusOK)
		})
		if r.status != http.StatusOK || r.json(t)["data"].(map[string]any)["kind"] != "two_factor_challenge" {
			t.Fatalf("sign-in checked before two-step was on: %d %s, want the two-step challenge", r.status, r.body)
		}
		attacker.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
	})
}

// TestPatchBusinessNeedsTheField: a PATCH without referral_code does not
// clear the referrer.
func TestPatchBusinessNeedsTheField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ada := newBrowser(t, b)
		ada.signUp("ada@example.com")
		shop := ada.call(request{method: "POST", path: "/businesses", body: `{"name":"Ada's Books"}`}, http.StatusCreated)["data"].(map[string]any)
		bo := newBrowser(t, b)
		bo.signUp("bo@example.com")
		mine := bo.call(request{method: "POST", path: "/businesses", body: fmt.Sprintf(`{"name":"Bo's","referral_code":%q}`, shop["referral_code"])},
			http.StatusCreated)["data"].(map[string]any)
		bo.biz = mine["id"].(string)
		bo.call(request{method: "PATCH", path: "/business", body: `{}`}, http.StatusBadRequest, payd.ErrInvalidRequest)
		got := bo.call(request{method: "PATCH", path: "/business", body: `{"referral_code":null}`}, http.StatusOK)["data"].(map[string]any)
		if got["referred_by"] != nil {
			t.Fatalf("null did not clear the referrer: %v", got)
		}
	})
}
