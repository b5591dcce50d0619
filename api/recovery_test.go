package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

var linkLine = regexp.MustCompile(`(?m)^https?://\S+#token=([0-9A-Za-z]+)$`)

// lastLink reads the token of the newest emailed link of kind to the
// address from GET /devnet/emails.
func (b *bundle) lastLink(t *testing.T, to, kind string) string {
	t.Helper()
	r := b.do(request{method: "GET", path: "/devnet/emails?to=" + url.QueryEscape(to)})
	if r.status != http.StatusOK {
		t.Fatalf("GET /devnet/emails: %d %s", r.status, r.body)
	}
	for _, e := range r.json(t)["data"].([]any) {
		m := e.(map[string]any)
		if m["type"] != kind {
			continue
		}
		if l := linkLine.FindStringSubmatch(m["text"].(string)); l != nil {
			return l[1]
		}
	}
	t.Fatalf("no %s link emailed to %s: %s", kind, to, r.body)
	return ""
}

// countKind counts the emails of kind to the address.
func countKind(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// askReset asks for a reset link for email.
func (br *browser) askReset(email string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/password-resets", header: map[string]string{"Service-Challenge": br.b.token(br.t, "reset")},
		body: fmt.Sprintf(`{"email":%q}`, email)}, status, code...)
}

func (br *browser) checkReset(token string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/password-resets/check", body: fmt.Sprintf(`{"token":%q}`, token)}, status, code...)
}

func (br *browser) confirmReset(token, password string, status int, code ...string) *response {
	br.t.Helper()
	req := request{method: "POST", path: "/password-resets/confirm", body: fmt.Sprintf(`{"token":%q,"password":%q}`, token, password)}
	r := br.do(req)
	if r.status != status {
		br.t.Fatalf("confirm: got %d %s, want %d", r.status, r.body, status)
	}
	if len(code) > 0 {
		if got, _ := r.errorCode(br.t); got != code[0] {
			br.t.Fatalf("confirm: got %s, want %s", r.body, code[0])
		}
	}
	return r
}

const nextPassword = "purple giraffe umbrella"

func TestPasswordReset(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		other := newBrowser(t, b)
		other.signIn("ada@example.com", testPassword, http.StatusCreated)
		anon := newBrowser(t, b)

		// The bot check; an unknown address answers alike and gets nothing.
		// (From another IP: the 5 an hour of spec 8.2 are for what follows.)
		b.srv.opts.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		elsewhere := map[string]string{"X-Forwarded-For": "198.51.100.7"}
		anon.call(request{method: "POST", path: "/password-resets", body: `{"email":"ada@example.com"}`, header: elsewhere},
			http.StatusBadRequest, payd.ErrChallengeFailed)
		elsewhere["Service-Challenge"] = b.token(t, "reset")
		anon.call(request{method: "POST", path: "/password-resets", body: `{"email":"nobody@example.com"}`, header: elsewhere},
			http.StatusAccepted)
		if got := b.emails(t, "nobody@example.com"); len(got) != 0 {
			t.Fatalf("an unknown address was sent %v", got)
		}
		anon.askReset("ADA@example.com", http.StatusAccepted)
		first := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		got := anon.checkReset(first, http.StatusOK)["data"].(map[string]any)
		if got["email"] != "ada@example.com" {
			t.Fatalf("check = %v", got)
		}
		anon.checkReset("nope", http.StatusBadRequest, payd.ErrInvalidToken)
		// A newer link replaces the older.
		anon.askReset("ada@example.com", http.StatusAccepted)
		second := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		anon.checkReset(first, http.StatusBadRequest, payd.ErrInvalidToken)
		anon.checkReset(second, http.StatusOK)
		// At most 3 links an hour: the 4th request answers alike and sends nothing.
		anon.askReset("ada@example.com", http.StatusAccepted)
		third := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		anon.askReset("ada@example.com", http.StatusAccepted)
		if n := countKind(b.emails(t, "ada@example.com"), payd.EmailPasswordReset); n != 3 {
			t.Fatalf("%d reset links sent in an hour, want 3", n)
		}
		if b.lastLink(t, "ada@example.com", payd.EmailPasswordReset) != third {
			t.Fatal("the 4th request of the hour sent a link")
		}
		// POST /password-resets: 5 an hour per IP (spec 8.2).
		anon.askReset("ada@example.com", http.StatusAccepted)
		r := anon.do(request{method: "POST", path: "/password-resets", header: map[string]string{"Service-Challenge": b.token(t, "reset")},
			body: `{"email":"ada@example.com"}`})
		if code, _ := r.errorCode(t); code != payd.ErrRateLimited || r.header.Get("Retry-After") == "" {
			t.Fatalf("6th request in an hour: %d %s", r.status, r.body)
		}

		// The confirm: a weak password is refused and the link still works.
		anon.confirmReset(third, "password1", http.StatusBadRequest, payd.ErrWeakPassword)
		// A disabled, locked password works again after the reset.
		u, err := db.UserByEmail(t.Context(), "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		u.PasswordDisabled = true
		if err := db.SaveUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		now := b.clock.Now()
		lockHour := func(int) time.Duration { return time.Hour }
		device := "pwdev:" + u.ID + ":" + payd.SecretHash(br.cookie(deviceCookie))
		for _, sub := range []string{"pw:ada@example.com", device} {
			if _, _, err := db.TryAttempt(t.Context(), sub, now, now.Add(time.Hour), lockHour); err != nil {
				t.Fatal(err)
			}
		}
		anon.signIn("ada@example.com", testPassword, http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		br.signIn("ada@example.com", testPassword, http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		r = anon.confirmReset(third, nextPassword, http.StatusOK)
		if d := r.json(t)["data"].(map[string]any); d["email"] != "ada@example.com" || d["has_password"] != true {
			t.Fatalf("confirm = %s", r.body)
		}
		// Every session ended; the link is used; the new password signs in.
		br.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		other.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		anon.confirmReset(third, nextPassword, http.StatusBadRequest, payd.ErrInvalidToken)
		anon.checkReset(third, http.StatusBadRequest, payd.ErrInvalidToken)
		anon.signIn("ada@example.com", testPassword, http.StatusBadRequest, payd.ErrInvalidCredentials)
		anon.signIn("ada@example.com", nextPassword, http.StatusCreated)
		br.signIn("ada@example.com", nextPassword, http.StatusCreated) // its browser's lock is gone too

		// A link works an hour.
		b.clock.Advance(2 * time.Hour)
		anon.askReset("ada@example.com", http.StatusAccepted)
		late := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		b.clock.Advance(payd.ResetTTL)
		anon.checkReset(late, http.StatusBadRequest, payd.ErrInvalidToken)
		anon.confirmReset(late, "another long password", http.StatusBadRequest, payd.ErrInvalidToken)
	})
}

func TestPasswordResetWithoutMail(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupWith(t, db, func(o *Options) { o.Mail = false })
		newBrowser(t, b).askReset("ada@example.com", http.StatusServiceUnavailable, payd.ErrEmailUnavailable)
	})
}

func TestChangePassword(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		other := newBrowser(t, b)
		other.signIn("ada@example.com", testPassword, http.StatusCreated)
		change := func(current, password string, status int, code ...string) map[string]any {
			t.Helper()
			return br.call(request{method: "POST", path: "/me/password",
				body: fmt.Sprintf(`{"current_password":%q,"password":%q}`, current, password)}, status, code...)
		}
		r := br.do(request{method: "POST", path: "/me/password", body: fmt.Sprintf(`{"current_password":"wrong one","password":%q}`, nextPassword)})
		if code, field := r.errorCode(t); code != payd.ErrInvalidCredentials || field != "current_password" {
			t.Fatalf("wrong current password: %d %s", r.status, r.body)
		}
		change(testPassword, "password1", http.StatusBadRequest, payd.ErrWeakPassword)
		change(testPassword, nextPassword, http.StatusOK)
		// The other sessions end; this one stays.
		other.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		br.call(request{method: "GET", path: "/me"}, http.StatusOK)
		other.signIn("ada@example.com", nextPassword, http.StatusCreated)
		// Wrong current passwords lock per session (spec 8.3).
		for range 4 {
			change("wrong one", "another long password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		}
		r = br.do(request{method: "POST", path: "/me/password", body: `{"current_password":"wrong one","password":"another long password"}`})
		if code, _ := r.errorCode(t); code != payd.ErrInvalidCredentials {
			t.Fatalf("5th wrong: %d %s", r.status, r.body)
		}
		r = br.do(request{method: "POST", path: "/me/password", body: fmt.Sprintf(`{"current_password":%q,"password":"another long password"}`, nextPassword)})
		if code, _ := r.errorCode(t); code != payd.ErrTooManyAttempts || r.header.Get("Retry-After") != "60" {
			t.Fatalf("after 5 wrong: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
		}
		// A sensitive change: the proof lapses after 15 minutes.
		b.clock.Advance(payd.ProofTTL + time.Minute)
		change(nextPassword, "another long password", http.StatusForbidden, payd.ErrStepUpRequired)
		// A disabled password proves nothing.
		other.call(request{method: "POST", path: "/sessions/current/step-up", body: fmt.Sprintf(`{"password":%q}`, nextPassword)}, http.StatusOK)
		u, _ := db.UserByEmail(t.Context(), "ada@example.com")
		u.PasswordDisabled = true
		if err := db.SaveUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		other.call(request{method: "POST", path: "/me/password", body: fmt.Sprintf(`{"current_password":%q,"password":"another long password"}`, nextPassword)},
			http.StatusForbidden, payd.ErrPasswordResetRequired)
		// An undone email change holds new passwords back, here too.
		hold := b.clock.Now().Add(time.Hour)
		u, _ = db.UserByEmail(t.Context(), "ada@example.com")
		u.ResetHoldUntil = &hold
		if err := db.SaveUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		r = other.do(request{method: "POST", path: "/me/password", body: fmt.Sprintf(`{"current_password":%q,"password":"another long password"}`, nextPassword)})
		if code, _ := r.errorCode(t); code != payd.ErrResetOnHold || r.header.Get("Retry-After") == "" {
			t.Fatalf("on hold: %d %s", r.status, r.body)
		}

		// A passkey-only account sets its first password with step-up alone.
		pk := newBrowser(t, b)
		pk.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": b.token(t, "signup")},
			body: `{"email":"cy@example.com","name":"Cy"}`}, http.StatusAccepted)
		pk.call(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":"cy@example.com","code":%q}`, b.lastCode(t, "cy@example.com"))},
			http.StatusCreated)
		me := pk.call(request{method: "POST", path: "/me/password", body: fmt.Sprintf(`{"password":%q}`, nextPassword)}, http.StatusOK)
		if me["data"].(map[string]any)["has_password"] != true {
			t.Fatalf("first password: %v", me)
		}
		newBrowser(t, b).signIn("cy@example.com", nextPassword, http.StatusCreated)
	})
}
