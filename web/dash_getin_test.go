package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The getting-in pages: sign-up with its emailed code, password reset,
// undoing an email change, accepting an invitation, the locks' sentences
// and the bot-check widgets.

// newVisitor is a browser on a fresh payd that nobody is signed in to.
func newVisitor(t *testing.T, vp viewport) *merchant {
	t.Helper()
	s := startPayd(t)
	m := &merchant{browser: newBrowser(t, vp), s: s, biz: s.biz["business_id"].(string)}
	m.watchConsole()
	return m
}

// emails lists the kept emails to an address, newest first.
func (s *paydServer) emails(to string) []map[string]any {
	s.t.Helper()
	status, b := s.call("GET", "/devnet/emails?to="+to, "", nil)
	if status != http.StatusOK {
		s.t.Fatalf("GET /devnet/emails: %d %s", status, b)
	}
	var env struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		s.t.Fatal(err)
	}
	return env.Data
}

// newest finds pattern's first group in the newest email to an address of
// type kind.
func (s *paydServer) newest(to, kind, pattern string) string {
	s.t.Helper()
	re := regexp.MustCompile(pattern)
	for _, e := range s.emails(to) {
		if e["type"] != kind {
			continue
		}
		if m := re.FindStringSubmatch(e["text"].(string)); m != nil {
			return m[1]
		}
		s.t.Fatalf("the %s email to %s holds no %s: %s", kind, to, pattern, e["text"])
	}
	s.t.Fatalf("no %s email to %s", kind, to)
	return ""
}

const (
	codePattern = `(?m)^\s*(\d{6})\s*$`
	linkPattern = `(/dashboard/\S+#token=[A-Za-z0-9_-]+)`
)

// fetchAPI calls the API from the page, with the browser's session.
func (m *merchant) fetchAPI(method, path string, body any) (int, string) {
	m.t.Helper()
	b, _ := json.Marshal(body)
	out := evalAs[string](m.browser, fmt.Sprintf(`fetch("/api/v1%s", {method: %q, headers: {"Content-Type": "application/json", "Service-Business": %q},
		body: %s}).then(r => r.text().then(t => r.status + " " + t))`, path, method, m.biz, strconv.Quote(string(b))))
	st, rest, _ := strings.Cut(out, " ")
	n, _ := strconv.Atoi(st)
	return n, rest
}

// openLink opens an emailed link afresh: a link that differs from the
// tab's address only by its fragment would not load the page again.
func (m *merchant) openLink(link string) {
	m.t.Helper()
	m.open(m.s.origin + "/dashboard/nothing-here")
	m.open(m.s.origin + link)
}

// otherCode is a 6-digit code that is not code.
func otherCode(code string) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%06d", (n+1)%1000000)
}

// TestDashboardGetInSignUp signs up from the sign-in page: the form, the
// code page, a wrong code, a resend too soon and one in time, a code too
// old, and the right code, which opens the page that makes a business.
func TestDashboardGetInSignUp(t *testing.T) {
	m := newVisitor(t, desktop)
	const email = "grace@example.com"
	m.open(m.s.origin + "/dashboard/sign-in")
	m.submit("#to-sign-up")
	if got := m.text("main h1"); got != "Create your payd account" {
		t.Fatalf("sign-up heading %q", got)
	}
	if got := m.attr("#to-sign-in", "href"); !strings.HasSuffix(got, "/dashboard/sign-in") {
		t.Fatalf("sign-in link %q", got)
	}
	m.review("sign-up")
	m.fill("#name", "Grace Hopper")
	m.fill("#email", email)
	m.fill("#password", "short")
	m.submit(`#signup-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "Password is too short: use at least 8 characters." {
		t.Fatalf("a short password: %q", got)
	}
	if !evalAs[bool](m.browser, `document.getElementById("password").getAttribute("aria-invalid") === "true"`) {
		t.Fatalf("a short password is not marked")
	}
	m.review("sign-up-refused")
	m.fill("#password", ownerPassword)
	m.submit(`#signup-form button[type="submit"]`)
	if got := m.text("main h1"); got != "Check your email" {
		t.Fatalf("code page heading %q (%s)", got, m.text("main"))
	}
	m.review("sign-up-code")
	code := m.s.newest(email, "signup_code", codePattern)
	m.fill("#code", otherCode(code))
	m.submit(`#verify-form button[type="submit"]`)
	if got := m.text("#form-error"); !strings.HasPrefix(got, "The code is wrong") {
		t.Fatalf("wrong code: %q", got)
	}
	m.review("sign-up-code-wrong")
	// A new code a minute after the last at the soonest.
	m.submit("#resend")
	if got := m.text("#form-error"); !strings.Contains(got, "Try again in") {
		t.Fatalf("resend too soon: %q", got)
	}
	m.s.advance(61)
	m.submit("#resend")
	if got := m.text("#flash"); got != "A new code is on its way. It replaces the one sent before." {
		t.Fatalf("resend: %q", got)
	}
	// A code older than 15 minutes.
	code = m.s.newest(email, "signup_code", codePattern)
	m.s.advance(16 * 60)
	m.fill("#code", code)
	m.submit(`#verify-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "This code is older than 15 minutes. Ask for a new one." {
		t.Fatalf("old code: %q", got)
	}
	m.submit("#resend")
	code = m.s.newest(email, "signup_code", codePattern)
	m.fill("#code", code)
	m.submit(`#verify-form button[type="submit"]`)
	if !strings.HasSuffix(m.location(), "/dashboard/businesses/new?done=signed_up") {
		t.Fatalf("after sign-up at %s", m.location())
	}
	if got := m.text("#flash"); got != "Welcome to payd. Your account is ready." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("details.account-menu summary"); !strings.Contains(got, "Grace Hopper") {
		t.Fatalf("signed in as %q", got)
	}
}

// TestDashboardGetInLockAndReset locks the password after wrong tries,
// with the wait said, then resets it from the emailed link and signs in
// with the new one.
func TestDashboardGetInLockAndReset(t *testing.T) {
	m := newMerchant(t, desktop)
	m.click("details.account-menu summary")
	m.submit("#sign-out")
	for i := 0; i < 5; i++ {
		m.fill("#email", m.email)
		m.fill("#password", "not the password "+strconv.Itoa(i))
		m.submit(`#signin-form button[type="submit"]`)
		if got := m.text("#form-error"); got != "The email address or password is not right." {
			t.Fatalf("try %d: %q", i, got)
		}
	}
	m.fill("#email", m.email)
	m.fill("#password", m.pw)
	m.submit(`#signin-form button[type="submit"]`)
	if got := m.text("#form-error"); !regexp.MustCompile(`^Too many tries\. Try again in \d+ seconds\.$`).MatchString(got) {
		t.Fatalf("locked: %q", got)
	}
	m.review("sign-in-locked")

	m.submit("#to-reset")
	if got := m.text("main h1"); got != "Reset your password" {
		t.Fatalf("reset heading %q", got)
	}
	if evalAs[bool](m.browser, `!document.getElementById("reset-choose").hidden`) {
		t.Fatal("without a link the new-password form shows")
	}
	m.review("reset")
	m.fill("#email", m.email)
	m.submit(`#reset-form button[type="submit"]`)
	if got := m.text("#reset-sent"); !strings.HasPrefix(got, "Check your email.") {
		t.Fatalf("sent: %q", got)
	}
	m.review("reset-sent")
	link := m.s.newest(m.email, "password_reset", linkPattern)
	// A link that does not work says so.
	m.openLink("/dashboard/reset#token=" + strings.Repeat("x", 43))
	m.run(chromedpWait("#new-password"))
	m.fill("#new-password", "another good passphrase 7")
	m.submit(`#confirm-form button[type="submit"]`)
	if got := m.text("#form-error"); !strings.Contains(got, "link was used, replaced by a newer one, or has expired") {
		t.Fatalf("bad link: %q", got)
	}
	m.review("reset-bad-link")
	m.openLink(link)
	m.run(chromedpWait("#new-password"))
	if evalAs[bool](m.browser, `!document.getElementById("reset-ask").hidden || !document.querySelector(".token-paste").hidden`) {
		t.Fatal("with a link the page still asks for an address or the token")
	}
	if strings.Contains(m.location(), "#token=") {
		t.Fatalf("the token stays in the address bar: %s", m.location())
	}
	m.review("reset-choose")
	m.fill("#new-password", "another good passphrase 7")
	m.submit(`#confirm-form button[type="submit"]`)
	if got := m.text("#flash"); !strings.HasPrefix(got, "Your password is changed") {
		t.Fatalf("reset: %q at %s", got, m.location())
	}
	m.signIn(m.email, "another good passphrase 7")
	if got := m.text("main h1"); got != "Ada's Books" {
		t.Fatalf("after reset: %q", got)
	}
}

// TestDashboardGetInEmailUndo undoes an email change from the alert sent
// to the old address.
func TestDashboardGetInEmailUndo(t *testing.T) {
	m := newMerchant(t, desktop)
	const moved = "ada.new@example.com"
	if st, b := m.fetchAPI("POST", "/me/email", map[string]any{"email": moved, "current_password": m.pw}); st != 202 && st != 200 {
		t.Fatalf("POST /me/email: %d %s", st, b)
	}
	code := m.s.newest(moved, "email_change_code", codePattern)
	if st, b := m.fetchAPI("POST", "/me/email/verify", map[string]any{"code": code}); st != 200 {
		t.Fatalf("POST /me/email/verify: %d %s", st, b)
	}
	link := m.s.newest(m.email, "email_change_alert", linkPattern)
	m.openLink(link)
	m.run(chromedpWait("#undo-form"))
	if got := m.text("main h1"); got != "Undo an email change" {
		t.Fatalf("heading %q", got)
	}
	m.review("email-undo")
	m.submit(`#undo-form button[type="submit"]`)
	if got := m.text("#undo-done"); got != "The change is undone: your account's address is ada@example.com again." {
		t.Fatalf("undone: %q", got)
	}
	m.review("email-undo-done")
	m.openLink(link)
	m.run(chromedpWait("#undo-form"))
	m.submit(`#undo-form button[type="submit"]`)
	if got := m.text("#form-error"); !strings.Contains(got, "link was used, replaced by a newer one, or has expired") {
		t.Fatalf("used link: %q", got)
	}
	m.review("email-undo-used")
}

// TestDashboardGetInInvitation follows an invitation while signed out:
// the page sends the person to sign up, the token travels along, and
// accepting opens the business's home.
func TestDashboardGetInInvitation(t *testing.T) {
	m := newMerchant(t, desktop)
	const bob = "bob@example.com"
	if st, b := m.fetchAPI("POST", "/team/invitations", map[string]any{"email": bob, "role": "developer"}); st != 201 && st != 200 {
		t.Fatalf("POST /team/invitations: %d %s", st, b)
	}
	link := m.s.newest(bob, "invitation", linkPattern)
	m.click("details.account-menu summary")
	m.submit("#sign-out")
	m.openLink(link)
	m.run(chromedpWait("#invite-sign-up"))
	if got := m.text("main h1"); got != "Join a team" {
		t.Fatalf("heading %q", got)
	}
	m.review("invitation-signed-out")
	// Sign-in keeps the token in its next field and passes it on to
	// sign-up, where the person goes on.
	m.submit("#invite-sign-in")
	if got := evalAs[string](m.browser, `document.querySelector("#signin-form input[name=next]").value`); !strings.HasPrefix(got, "/dashboard/invitations/accept#token=") {
		t.Fatalf("sign-in's next %q", got)
	}
	if strings.Contains(m.location(), "token") {
		t.Fatalf("the token is in the address: %s", m.location())
	}
	m.submit("#to-sign-up")
	m.fill("#name", "Bob")
	m.fill("#email", bob)
	m.fill("#password", ownerPassword)
	m.submit(`#signup-form button[type="submit"]`)
	m.fill("#code", m.s.newest(bob, "signup_code", codePattern))
	m.submit(`#verify-form button[type="submit"]`)
	m.run(chromedpWait("#accept-form"))
	if !strings.HasSuffix(m.location(), "/dashboard/invitations/accept?done=signed_up") {
		t.Fatalf("after sign-up at %s", m.location())
	}
	if evalAs[string](m.browser, `document.getElementById("token").value`) == "" {
		t.Fatal("the token did not come back")
	}
	m.review("invitation-accept")
	m.submit(`#accept-form button[type="submit"]`)
	if !strings.HasSuffix(m.location(), "/dashboard/"+m.biz+"/?done=invitation_accepted") {
		t.Fatalf("after accepting at %s", m.location())
	}
	if got := m.text("#flash"); got != "You joined the team." {
		t.Fatalf("flash %q", got)
	}
}

// TestDashboardGetInWidget renders the providers' widgets with
// --challenge-site-key, and their origins in the Content-Security-Policy
// of those pages only.
func TestDashboardGetInWidget(t *testing.T) {
	s := startPayd(t)
	get := func(path string) (string, string) {
		res, err := http.Get(s.origin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b), res.Header.Get("Content-Security-Policy")
	}
	_, plain := get("/dashboard/email-undo")
	for _, tt := range []struct{ provider, widget, origin, script string }{
		{"turnstile", `<div class="cf-turnstile" data-sitekey="0x4AAAAAAtest" data-action="%s">`, "https://challenges.cloudflare.com",
			`<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>`},
		{"hcaptcha", `<div class="h-captcha" data-sitekey="0x4AAAAAAtest">`, "https://hcaptcha.com https://*.hcaptcha.com",
			`<script src="https://js.hcaptcha.com/1/api.js" async defer></script>`},
	} {
		s.serve("--dev", "--challenge", tt.provider+":not-a-real-secret", "--challenge-site-key", "0x4AAAAAAtest")
		for path, form := range map[string]string{"/dashboard/sign-up": "signup", "/dashboard/sign-in": "signin", "/dashboard/reset": "reset"} {
			body, csp := get(path)
			w := tt.widget
			if strings.Contains(w, "%s") {
				w = fmt.Sprintf(w, form)
			}
			if !strings.Contains(body, w) || !strings.Contains(body, tt.script) || strings.Contains(body, "challenge_token") {
				t.Errorf("%s %s: no widget %s in\n%s", tt.provider, path, w, body)
			}
			if !strings.Contains(csp, "script-src 'self' "+tt.origin+";") || !strings.Contains(csp, "frame-src "+tt.origin) ||
				!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("%s %s: Content-Security-Policy %q", tt.provider, path, csp)
			}
			if tt.provider == "turnstile" && strings.Contains(csp, "hcaptcha") || tt.provider == "hcaptcha" && strings.Contains(csp, "cloudflare") {
				t.Errorf("%s %s: another provider allowed: %q", tt.provider, path, csp)
			}
		}
		if _, csp := get("/dashboard/email-undo"); csp != plain {
			t.Errorf("%s: a page without the widget allows more: %q", tt.provider, csp)
		}
	}
	if strings.Contains(plain, "cloudflare") || strings.Contains(plain, "hcaptcha") || strings.Contains(plain, "frame-src") {
		t.Errorf("plain policy %q", plain)
	}
}
