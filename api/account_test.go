package api

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// browser is a person's browser against the test server: it keeps
// cookies and sends the public URL's Origin on unsafe methods, as a
// browser on the dashboard does.
type browser struct {
	t   *testing.T
	b   *bundle
	jar *cookiejar.Jar
	// biz, when set, is sent as Service-Business.
	biz string
}

func newBrowser(t *testing.T, b *bundle) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, b: b, jar: jar}
}

// do sends req with the browser's cookies and headers and keeps the
// cookies the answer sets.
func (br *browser) do(req request) *response {
	br.t.Helper()
	hr, err := http.NewRequest(req.method, br.b.base+req.path, strings.NewReader(req.body))
	if err != nil {
		br.t.Fatal(err)
	}
	if req.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.method != http.MethodGet {
		hr.Header.Set("Origin", "http://payd.test")
	}
	if br.biz != "" {
		hr.Header.Set("Service-Business", br.biz)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	u, _ := url.Parse(br.b.base)
	for _, c := range br.jar.Cookies(u) {
		hr.AddCookie(c)
	}
	r := br.b.send(hr)
	br.jar.SetCookies(u, (&http.Response{Header: r.header}).Cookies())
	return r
}

// call sends req and checks the status and, for errors, the code.
func (br *browser) call(req request, status int, code ...string) map[string]any {
	br.t.Helper()
	r := br.do(req)
	if r.status != status {
		br.t.Fatalf("%s %s: got %d %s, want %d", req.method, req.path, r.status, r.body, status)
	}
	if len(code) > 0 {
		if got, _ := r.errorCode(br.t); got != code[0] {
			br.t.Fatalf("%s %s: got %s, want %s: %s", req.method, req.path, got, code[0], r.body)
		}
	}
	return r.json(br.t)
}

// cookie returns the value of the browser's named cookie.
func (br *browser) cookie(name string) string {
	u, _ := url.Parse(br.b.base)
	for _, c := range br.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// token gets a dev bot-check token for form.
func (b *bundle) token(t *testing.T, form string) string {
	t.Helper()
	r := b.do(request{method: "POST", path: "/devnet/challenges", body: `{"form":"` + form + `"}`})
	if r.status != http.StatusCreated {
		t.Fatalf("POST /devnet/challenges: %d %s", r.status, r.body)
	}
	return r.json(t)["data"].(map[string]any)["token"].(string)
}

var codeLine = regexp.MustCompile(`(?m)^(\d{6})$`)

// lastCode reads the newest emailed code to the address from GET /devnet/emails.
func (b *bundle) lastCode(t *testing.T, to string) string {
	t.Helper()
	r := b.do(request{method: "GET", path: "/devnet/emails?to=" + url.QueryEscape(to)})
	if r.status != http.StatusOK {
		t.Fatalf("GET /devnet/emails: %d %s", r.status, r.body)
	}
	for _, e := range r.json(t)["data"].([]any) {
		if m := codeLine.FindStringSubmatch(e.(map[string]any)["text"].(string)); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no code emailed to %s: %s", to, r.body)
	return ""
}

// emails lists the email types sent to the address, newest first.
func (b *bundle) emails(t *testing.T, to string) []string {
	t.Helper()
	r := b.do(request{method: "GET", path: "/devnet/emails?to=" + url.QueryEscape(to)})
	var out []string
	for _, e := range r.json(t)["data"].([]any) {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

const testPassword = "correct horse battery"

// signUp starts and finishes a sign-up in br and returns the user.
func (br *browser) signUp(email string) map[string]any {
	br.t.Helper()
	tok := br.b.token(br.t, "signup")
	br.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": tok},
		body: fmt.Sprintf(`{"email":%q,"password":%q,"name":"Ada"}`, email, testPassword)}, http.StatusAccepted)
	code := br.b.lastCode(br.t, email)
	return br.call(request{method: "POST", path: "/accounts/verify",
		body: fmt.Sprintf(`{"email":%q,"code":%q}`, email, code)}, http.StatusCreated)["data"].(map[string]any)
}

// signIn signs br in with a password.
func (br *browser) signIn(email, password string, status int, code ...string) map[string]any {
	br.t.Helper()
	tok := br.b.token(br.t, "signin")
	return br.call(request{method: "POST", path: "/sessions", header: map[string]string{"Service-Challenge": tok},
		body: fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)}, status, code...)
}

// newShop creates a business for the signed-in browser and acts for it.
func (br *browser) newShop(name string) string {
	br.t.Helper()
	id := br.call(request{method: "POST", path: "/businesses", body: fmt.Sprintf(`{"name":%q}`, name)},
		http.StatusCreated)["data"].(map[string]any)["id"].(string)
	br.biz = id
	return id
}

func TestSignupAndSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		u := br.signUp("ada@example.com")
		if u["email"] != "ada@example.com" || u["has_password"] != true || !payd.HasPrefix(u["id"].(string), payd.PrefixUser) {
			t.Fatalf("new user = %v", u)
		}
		if br.cookie(sessionCookie) == "" || br.cookie(deviceCookie) == "" {
			t.Fatal("verify did not set the session and device cookies")
		}
		me := br.call(request{method: "GET", path: "/me"}, http.StatusOK)["data"].(map[string]any)
		if me["id"] != u["id"] {
			t.Fatalf("GET /me = %v", me)
		}
		// Business routes need Service-Business with a session.
		br.call(request{method: "GET", path: "/payments"}, http.StatusBadRequest, payd.ErrBusinessRequired)
		biz := br.newShop("Ada's Shop")
		br.call(request{method: "GET", path: "/payments"}, http.StatusOK)
		list := br.call(request{method: "GET", path: "/businesses"}, http.StatusOK)["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["role"] != "owner" {
			t.Fatalf("GET /businesses = %v", list)
		}
		// A change made with a session names the person as its actor.
		cst := br.call(request{method: "POST", path: "/customers", body: `{"email":"c@example.com"}`}, http.StatusCreated)
		var actor string
		evs, err := db.EventsOf(t.Context(), biz, cst["data"].(map[string]any)["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			actor = e.Actor.Kind + ":" + e.Actor.ID
		}
		if actor != "user:"+u["id"].(string) {
			t.Fatalf("customer event actor = %q, want the user", actor)
		}
		// Another person's business is forbidden.
		other := b.newBusiness(false)
		br.biz = other.biz.ID
		br.call(request{method: "GET", path: "/payments"}, http.StatusForbidden, payd.ErrBusinessForbidden)
		br.biz = biz
		// An unsafe request from another site is refused, cookie or not.
		br.call(request{method: "POST", path: "/customers", body: `{"email":"d@example.com"}`,
			header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden, payd.ErrCrossSiteRequest)
		br.call(request{method: "POST", path: "/customers", body: `{"email":"d@example.com"}`,
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden, payd.ErrCrossSiteRequest)
		// Dashboard-only routes refuse API keys.
		tb := b.newBusiness(false)
		r := b.do(request{method: "GET", path: "/sessions", key: tb.live})
		if r.status != http.StatusForbidden {
			t.Fatalf("GET /sessions with a key: %d %s", r.status, r.body)
		}

		// Step-up: a fresh sign-in carries a proof for 15 minutes.
		br.call(request{method: "POST", path: "/webhooks", body: `{"url":"http://127.0.0.1:9/h","event_types":["payment.succeeded"]}`}, http.StatusCreated)
		b.clock.Advance(16 * time.Minute)
		br.call(request{method: "POST", path: "/webhooks", body: `{"url":"http://127.0.0.1:9/h","event_types":["payment.succeeded"]}`},
			http.StatusForbidden, payd.ErrStepUpRequired)
		br.call(request{method: "POST", path: "/sessions/current/step-up", body: `{"password":"wrong password"}`},
			http.StatusBadRequest, payd.ErrInvalidCredentials)
		ses := br.call(request{method: "POST", path: "/sessions/current/step-up", body: fmt.Sprintf(`{"password":%q}`, testPassword)},
			http.StatusOK)["data"].(map[string]any)
		if ses["proven_until"] == nil {
			t.Fatalf("step-up answered %v without proven_until", ses)
		}
		br.call(request{method: "POST", path: "/webhooks", body: `{"url":"http://127.0.0.1:9/h","event_types":["payment.succeeded"]}`}, http.StatusCreated)

		// Sessions: a second browser, listed, ended from the first.
		br2 := newBrowser(t, b)
		s2 := br2.signIn("ADA@example.com", testPassword, http.StatusCreated)["data"].(map[string]any)
		all := br.call(request{method: "GET", path: "/sessions"}, http.StatusOK)["data"].([]any)
		if len(all) != 2 {
			t.Fatalf("GET /sessions listed %d, want 2", len(all))
		}
		cur := br.call(request{method: "GET", path: "/sessions/current"}, http.StatusOK)["data"].(map[string]any)
		br.call(request{method: "DELETE", path: "/sessions/" + cur["id"].(string)}, http.StatusConflict, payd.ErrCurrentSession)
		br.do(request{method: "DELETE", path: "/sessions/" + s2["id"].(string)})
		br2.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		// Idle for longer than SessionIdle ends a session.
		b.clock.Advance(payd.SessionIdle + time.Minute)
		br.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		// Signing out ends the session.
		br.signIn("ada@example.com", testPassword, http.StatusCreated)
		if r := br.do(request{method: "DELETE", path: "/sessions/current"}); r.status != http.StatusNoContent {
			t.Fatalf("sign out: %d %s", r.status, r.body)
		}
		br.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
	})
}

func TestSignupCodes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		start := func(br *browser, email, password string) {
			t.Helper()
			pw := ""
			if password != "" {
				pw = fmt.Sprintf(`,"password":%q`, password)
			}
			br.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": b.token(t, "signup")},
				body: fmt.Sprintf(`{"email":%q,"name":"Bo"%s}`, email, pw)}, http.StatusAccepted)
		}
		verify := func(br *browser, email, code string, status int, errCode ...string) {
			t.Helper()
			br.call(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":%q,"code":%q}`, email, code)}, status, errCode...)
		}
		// The bot check: missing, reused, or from another form.
		br.call(request{method: "POST", path: "/accounts", body: `{"email":"bo@example.com","password":"correct horse battery"}`},
			http.StatusBadRequest, payd.ErrChallengeFailed)
		signin := b.token(t, "signin")
		br.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": signin},
			body: `{"email":"bo@example.com","password":"correct horse battery"}`}, http.StatusBadRequest, payd.ErrChallengeFailed)
		// Weak passwords say which rule failed.
		r := br.do(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": b.token(t, "signup")},
			body: `{"email":"bo@example.com","password":"password1"}`})
		if code, _ := r.errorCode(t); code != payd.ErrWeakPassword || !strings.Contains(string(r.body), "too common") {
			t.Fatalf("weak password: %d %s", r.status, r.body)
		}

		start(br, "bo@example.com", testPassword)
		code := b.lastCode(t, "bo@example.com")
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		// A new code only a minute after the last.
		br.call(request{method: "POST", path: "/accounts/verify/resend", body: `{"email":"bo@example.com"}`},
			http.StatusTooManyRequests, payd.ErrTooManyEmails)
		// Five wrong tries, then the code is locked until a new one is sent.
		for range payd.CodeTries {
			verify(br, "bo@example.com", wrong, http.StatusBadRequest, payd.ErrInvalidCode)
		}
		verify(br, "bo@example.com", code, http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		b.clock.Advance(time.Minute)
		br.call(request{method: "POST", path: "/accounts/verify/resend", body: `{"email":"bo@example.com"}`}, http.StatusAccepted)
		code2 := b.lastCode(t, "bo@example.com")
		// The code is good 15 minutes.
		b.clock.Advance(payd.CodeTTL)
		verify(br, "bo@example.com", code2, http.StatusBadRequest, payd.ErrCodeExpired)
		br.call(request{method: "POST", path: "/accounts/verify/resend", body: `{"email":"bo@example.com"}`}, http.StatusAccepted)
		code3 := b.lastCode(t, "bo@example.com")
		// Another browser needs the password too.
		other := newBrowser(t, b)
		verify(other, "bo@example.com", code3, http.StatusBadRequest, payd.ErrPasswordRequired)
		other.call(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":"bo@example.com","code":%q,"password":"not the password"}`, code3)},
			http.StatusBadRequest, payd.ErrInvalidCredentials)
		other.call(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":"bo@example.com","code":%q,"password":%q}`, code3, testPassword)},
			http.StatusCreated)
		// Signing up again with a taken address answers alike and emails a notice.
		start(newBrowser(t, b), "BO@example.com", testPassword)
		if got := b.emails(t, "bo@example.com"); got[0] != payd.EmailAccountExists {
			t.Fatalf("emails after a sign-up of a taken address: %v", got)
		}

		// A passkey sign-up (no password) is finished only where it began.
		pk := newBrowser(t, b)
		start(pk, "cy@example.com", "")
		verify(newBrowser(t, b), "cy@example.com", b.lastCode(t, "cy@example.com"), http.StatusBadRequest, payd.ErrSignupBrowserRequired)
		u := pk.call(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":"cy@example.com","code":%q}`, b.lastCode(t, "cy@example.com"))},
			http.StatusCreated)["data"].(map[string]any)
		if u["has_password"] != false {
			t.Fatalf("passkey sign-up user = %v", u)
		}

		// A sign-up is good a day.
		start(br, "di@example.com", testPassword)
		b.clock.Advance(payd.VerificationTTL)
		verify(br, "di@example.com", "123456", http.StatusBadRequest, payd.ErrVerificationExpired)

		// Ten wrong codes a day per address, across sign-ups.
		ev := newBrowser(t, b)
		for i := range payd.SignupWrongPerDay {
			if i%4 == 0 {
				start(ev, "ed@example.com", testPassword)
			}
			verify(ev, "ed@example.com", "999999", http.StatusBadRequest, payd.ErrInvalidCode)
		}
		r = ev.do(request{method: "POST", path: "/accounts/verify", body: `{"email":"ed@example.com","code":"999999"}`})
		if code, _ := r.errorCode(t); code != payd.ErrTooManyAttempts || r.header.Get("Retry-After") == "" {
			t.Fatalf("11th wrong code of the day: %d %s", r.status, r.body)
		}
	})
}

func TestSigninLocks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		owner := newBrowser(t, b)
		owner.signUp("fa@example.com") // this browser has signed in before
		attacker := newBrowser(t, b)
		// Unknown email, password-less account and wrong password answer alike.
		attacker.signIn("nobody@example.com", "whatever pass", http.StatusBadRequest, payd.ErrInvalidCredentials)
		for i := 1; i <= 5; i++ {
			attacker.signIn("fa@example.com", "wrong password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		}
		r := attacker.do(request{method: "POST", path: "/sessions", header: map[string]string{"Service-Challenge": b.token(t, "signin")},
			body: fmt.Sprintf(`{"email":"fa@example.com","password":%q}`, testPassword)})
		if code, _ := r.errorCode(t); code != payd.ErrTooManyAttempts || r.header.Get("Retry-After") != "60" {
			t.Fatalf("6th try: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
		}
		// The owner's browser keeps its own count and signs in meanwhile,
		// which clears the count (spec 8.3).
		owner.signIn("fa@example.com", testPassword, http.StatusCreated)
		// The locks grow: 10 failures lock 5 minutes, 15 fifteen, 20 an hour.
		for i := 1; i <= 10; i++ {
			if i == 6 {
				b.clock.Advance(time.Minute)
			}
			attacker.signIn("fa@example.com", "wrong password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		}
		r = attacker.do(request{method: "POST", path: "/sessions", header: map[string]string{"Service-Challenge": b.token(t, "signin")},
			body: `{"email":"fa@example.com","password":"wrong password"}`})
		if r.header.Get("Retry-After") != "300" {
			t.Fatalf("after 10: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
		}
		// After 100 failures the password stops working until reset.
		for n := 10; n < payd.PasswordDisableAfter; n++ {
			b.clock.Advance(time.Hour)
			attacker.signIn("fa@example.com", "wrong password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		}
		// A wrong password still answers invalid_credentials: only someone
		// who knows the password learns that it is disabled.
		b.clock.Advance(time.Hour)
		attacker.signIn("fa@example.com", "wrong password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		b.clock.Advance(time.Hour)
		attacker.signIn("fa@example.com", testPassword, http.StatusForbidden, payd.ErrPasswordResetRequired)
		// ... for everyone: the owner's browser too.
		owner.signIn("fa@example.com", testPassword, http.StatusForbidden, payd.ErrPasswordResetRequired)
		// An unknown address locks alike, so locks tell nothing.
		for n := 0; n < 5; n++ {
			attacker.signIn("ghost@example.com", "wrong password", http.StatusBadRequest, payd.ErrInvalidCredentials)
		}
		attacker.signIn("ghost@example.com", "wrong password", http.StatusTooManyRequests, payd.ErrTooManyAttempts)
	})
}

// TestLocksHoldUnderConcurrency: a burst of concurrent guesses gets no
// more tries than the locks of spec 8.3 allow, for passwords and for
// sign-up codes.
func TestLocksHoldUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		newBrowser(t, b).signUp("ga@example.com")
		const burst = 12
		statuses := func(reqs func(i int) *response) map[int]int {
			out := map[int]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range burst {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := reqs(i)
					mu.Lock()
					out[r.status]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			return out
		}
		tokens := make([]string, burst)
		for i := range tokens {
			tokens[i] = b.token(t, "signin")
		}
		got := statuses(func(i int) *response {
			return newBrowser(t, b).do(request{method: "POST", path: "/sessions", header: map[string]string{"Service-Challenge": tokens[i]},
				body: `{"email":"ga@example.com","password":"wrong password"}`})
		})
		// Each of the 5 tries let through is checked (400), or, when the
		// hasher is busy (as it can be under -race), answered 503: either
		// way it used up its try. The rest are refused by the lock.
		if got[http.StatusBadRequest]+got[http.StatusServiceUnavailable] != 5 || got[http.StatusTooManyRequests] != burst-5 {
			t.Fatalf("%d concurrent wrong passwords: %v, want 5 let through and the rest refused", burst, got)
		}

		br := newBrowser(t, b)
		br.call(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": b.token(t, "signup")},
			body: `{"email":"ha@example.com","password":"correct horse battery"}`}, http.StatusAccepted)
		wrong := "000000"
		if b.lastCode(t, "ha@example.com") == wrong {
			wrong = "111111"
		}
		got = statuses(func(int) *response {
			return br.do(request{method: "POST", path: "/accounts/verify", body: `{"email":"ha@example.com","code":"` + wrong + `"}`})
		})
		if got[http.StatusBadRequest] != payd.CodeTries || got[http.StatusTooManyRequests] != burst-payd.CodeTries {
			t.Fatalf("%d concurrent wrong codes: %v, want %d compared and the rest refused", burst, got, payd.CodeTries)
		}
	})
}

// TestSignupTellsNothing: a sign-up for a taken address goes through the
// same answers as one for a new address: start, resend, wrong codes.
func TestSignupTellsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		newBrowser(t, b).signUp("taken@example.com")
		b.clock.Advance(time.Hour)
		for _, email := range []string{"taken@example.com", "fresh@example.com"} {
			br := newBrowser(t, b)
			r1 := br.do(request{method: "POST", path: "/accounts", header: map[string]string{"Service-Challenge": b.token(t, "signup")},
				body: fmt.Sprintf(`{"email":%q,"password":"correct horse battery"}`, email)})
			r2 := br.do(request{method: "POST", path: "/accounts/verify/resend", body: fmt.Sprintf(`{"email":%q}`, email)})
			b.clock.Advance(time.Minute)
			r3 := br.do(request{method: "POST", path: "/accounts/verify/resend", body: fmt.Sprintf(`{"email":%q}`, email)})
			var last *response
			for range payd.CodeTries + 1 {
				last = br.do(request{method: "POST", path: "/accounts/verify", body: fmt.Sprintf(`{"email":%q,"code":"999999"}`, email)})
			}
			got := []int{r1.status, r2.status, r3.status, last.status}
			if want := []int{202, 429, 202, 429}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: statuses %v, want %v", email, got, want)
			}
		}
		if got := b.emails(t, "taken@example.com"); len(got) < 2 || got[0] != payd.EmailAccountExists || got[1] != payd.EmailAccountExists {
			t.Fatalf("a taken address is sent notices, not codes: %v", got)
		}
	})
}
