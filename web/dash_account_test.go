package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	otptotp "github.com/pquerna/otp/totp"

	"payd/clock"
	"payd/web/webtest"
)

// TestDashboardAccountProfile changes the name, the email address (with
// the code emailed to the new one), the password and the theme on the
// profile page.
func TestDashboardAccountProfile(t *testing.T) {
	m := newMerchant(t, desktop)
	m.open(m.s.origin + "/dashboard/account")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	m.review("account-profile")

	m.fill("#name", "Ada King")
	m.submit(`#name-form button[type="submit"]`)
	if got := m.text("#flash"); got != "Your name is saved." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("details.account-menu summary"); !strings.Contains(got, "Ada King") {
		t.Fatalf("account menu %q", got)
	}

	m.fill("#new-email", "ada.king@example.com")
	m.fill("#email-password", m.pw)
	m.submit(`#email-form button[type="submit"]`)
	m.run(chromedp.WaitVisible(chromedp.CSS("#email-code")))
	m.review("account-email-code")
	m.fill("#email-code", m.s.emailCode("ada.king@example.com"))
	m.submit(`#email-verify-form button[type="submit"]`)
	if got := m.text("#flash"); got != "Your email address is changed." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("#current-email"); got != "ada.king@example.com" {
		t.Fatalf("email now %q", got)
	}

	m.fill("#current-password", m.pw)
	m.fill("#new-password", "a different horse battery 7")
	m.submit(`#password-form button[type="submit"]`)
	if got := m.text("#flash"); !strings.HasPrefix(got, "Your password is changed.") {
		t.Fatalf("flash %q", got)
	}

	m.click("#theme-dark")
	m.submit(`#theme-form button[type="submit"]`)
	if got := evalAs[string](m.browser, `document.documentElement.dataset.theme || ""`); got != "dark" {
		t.Fatalf("theme %q after choosing dark", got)
	}
	m.review("account-profile-dark")
}

// emailCode is the 6-digit code of the newest email to address (dev
// emails).
func (s *paydServer) emailCode(address string) string {
	s.t.Helper()
	status, b := s.call("GET", "/devnet/emails?to="+address, "", nil)
	var out struct {
		Data []struct {
			Text string `json:"text"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); status != 200 || err != nil || len(out.Data) == 0 {
		s.t.Fatalf("emails to %s: %d %s", address, status, b)
	}
	code := regexp.MustCompile(`(?m)^\s*(\d{6})\s*$`).FindStringSubmatch(out.Data[0].Text)
	if code == nil {
		s.t.Fatalf("no code in %q", out.Data[0].Text)
	}
	return code[1]
}

// apiSignIn signs in through the API with a dev bot-check token, as
// another device would, and returns a client holding that session.
func (s *paydServer) apiSignIn(email, pw string) *http.Client {
	s.t.Helper()
	tok := s.must("POST", "/devnet/challenges", "", map[string]string{"form": "signin"})["token"].(string)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	b, _ := json.Marshal(map[string]string{"email": email, "password": pw})
	req, _ := http.NewRequest("POST", s.api+"/sessions", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Service-Challenge", tok)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
	res, err := c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("API sign-in: %d", res.StatusCode)
	}
	return c
}

// TestDashboardAccountSecurity ends another session, turns two-step
// sign-in on with a code computed here, keeps the recovery codes, and
// signs in again with the password and a code.
func TestDashboardAccountSecurity(t *testing.T) {
	m := newMerchant(t, desktop)
	other := m.s.apiSignIn(m.email, m.pw)
	m.open(m.s.origin + "/dashboard/account/security")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	if n := evalAs[int](m.browser, `document.querySelectorAll("#sessions tbody tr").length`); n != 2 {
		t.Fatalf("%d sessions listed", n)
	}
	if got := m.text("#sessions tbody tr:not(.current) td"); got != "Firefox on Linux" {
		t.Fatalf("other device %q", got)
	}
	m.review("account-security")
	m.submit(`#sessions tbody tr:not(.current) button[type="submit"]`)
	if got := m.text("#flash"); got != "That session is signed out." {
		t.Fatalf("flash %q", got)
	}
	res, err := other.Get(m.s.api + "/me")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the ended session still answers %d", res.StatusCode)
	}

	m.submit(`#twostep-setup-form button[type="submit"]`)
	if !strings.HasPrefix(m.attr(".setup-qr img.qr", "src"), "data:image/png;base64,") {
		t.Fatal("no QR code on the setup page")
	}
	m.review("account-two-step-setup")
	secret := strings.ReplaceAll(m.text("#totp-secret"), " ", "")
	m.fill("#enable-code", "000000")
	m.submit(`#twostep-enable-form button[type="submit"]`)
	if m.text("#form-error") == "" || m.text("#totp-secret") == "" {
		t.Fatal("a wrong code did not keep the setup page with a refusal")
	}
	code, err := otptotp.GenerateCode(secret, clock.Real{}.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.fill("#enable-code", code)
	m.submit(`#twostep-enable-form button[type="submit"]`)
	if n := evalAs[int](m.browser, `document.querySelectorAll("#recovery-codes li").length`); n != 10 {
		t.Fatalf("%d recovery codes shown", n)
	}
	if !strings.HasPrefix(m.attr(`a[download]`, "href"), "data:text/plain") {
		t.Fatal("no download of the recovery codes")
	}
	m.review("account-recovery-codes")
	recovery := m.text("#recovery-codes li")

	m.click("details.account-menu summary")
	m.submit("#sign-out")
	m.fill("#email", m.email)
	m.fill("#password", m.pw)
	m.submit(`#signin-form button[type="submit"]`)
	// The code of the next step: the one just used to turn it on is spent.
	code, _ = otptotp.GenerateCode(secret, clock.Real{}.Now().Add(30*time.Second))
	m.fill("#code", code)
	m.submit(`#twostep-form button[type="submit"]`)
	if !strings.HasSuffix(m.location(), "/dashboard/"+m.biz+"/") {
		t.Fatalf("after two-step sign-in at %s", m.location())
	}
	m.open(m.s.origin + "/dashboard/account/security")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	if got := m.text("#codes-left"); got != "10 of 10 recovery codes left." {
		t.Fatalf("codes left %q", got)
	}
	m.review("account-security-on")

	// A recovery code makes a new set; one of the new set turns it off.
	m.fill("#codes-code", recovery)
	m.submit(`#codes-form button[type="submit"]`)
	if got := m.text("#flash"); !strings.HasPrefix(got, "New recovery codes are made") {
		t.Fatalf("flash %q", got)
	}
	fresh := m.text("#recovery-codes li")
	m.open(m.s.origin + "/dashboard/account/security")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	m.click(`details.disclose summary`)
	m.fill("#off-password", m.pw)
	m.fill("#off-code", fresh)
	confirmAll(m)
	m.submit(`#twostep-off-form button[type="submit"]`)
	if got := m.text("#flash"); got != "Two-step sign-in is off." {
		t.Fatalf("flash %q", got)
	}
}

// confirmAll answers yes to the page's confirmations (data-confirm).
func confirmAll(m *merchant) { evalAs[bool](m.browser, `window.confirm = () => true, true`) }

// TestDashboardAccountPasskeys runs payd at http://localhost:PORT (WebAuthn
// wants a domain name) with a virtual authenticator in Chromium: adds a
// passkey, renames it, signs out and signs in with it.
func TestDashboardAccountPasskeys(t *testing.T) {
	port := webtest.FreePort(t)
	s := startPaydWith(t, "--addr", "127.0.0.1:"+strconv.Itoa(port), "--public-url", fmt.Sprintf("http://localhost:%d", port))
	m := newMerchantOn(t, desktop, s)
	m.run(webtest.VirtualAuthenticator())
	m.open(m.s.origin + "/dashboard/account/security")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	m.fill("#passkey-name", "Test laptop")
	m.submit(`#passkey-new-form button[type="submit"]`)
	m.run(chromedp.WaitEnabled(chromedp.CSS("#passkey-create")))
	m.review("account-passkey-new")
	m.submit("#passkey-create")
	if got := m.text("#flash"); got != "The passkey is added." {
		t.Fatalf("flash %q (error %q)", got, evalAs[string](m.browser, `(document.getElementById("passkey-error")||{}).textContent||""`))
	}
	if got := m.text("#passkeys tbody td"); !strings.Contains(got, "Test laptop") {
		t.Fatalf("passkey listed as %q", got)
	}
	m.click("#passkeys details.disclose summary")
	m.fill(`#passkeys .rename-form input[name="name"]`, "Ada's laptop")
	m.submit(`#passkeys .rename-form button[type="submit"]`)
	if got := m.text("#passkeys tbody td"); !strings.Contains(got, "Ada's laptop") {
		t.Fatalf("renamed passkey listed as %q", got)
	}
	m.review("account-passkeys")

	m.click("details.account-menu summary")
	m.submit("#sign-out")
	m.run(chromedp.WaitVisible(chromedp.CSS("#passkey-signin-button")))
	m.review("sign-in-passkey")
	m.click("#passkey-signin-button")
	m.waitLeave("/dashboard/sign-in?done=signed_out")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	if !strings.HasSuffix(m.location(), "/dashboard/"+m.biz+"/") {
		t.Fatalf("after passkey sign-in at %s", m.location())
	}
	// Signing in with the passkey proved the session for 15 minutes;
	// after that, deleting it asks again, and the passkey answers.
	m.open(m.s.origin + "/dashboard/account/security")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
	if got := m.text("#passkeys tbody td:nth-child(3)"); got == "Never" {
		t.Fatal("the passkey's last use is not shown")
	}
	m.s.advance(16 * 60)
	confirmAll(m)
	m.submit(`#passkeys form[action$="/delete"] button[type="submit"]`)
	m.run(chromedp.WaitVisible(chromedp.CSS("#passkey-stepup-button")))
	m.review("step-up-passkey")
	m.submit("#passkey-stepup-button")
	if got := m.text("#flash"); got != "The passkey is deleted." {
		t.Fatalf("flash %q", got)
	}
	m.run(chromedp.WaitVisible(chromedp.CSS("#no-passkeys")))
}

// TestDashboardTeam invites someone, changes a member's role and
// withdraws the invitation.
func TestDashboardTeam(t *testing.T) {
	m := newMerchant(t, desktop)
	m.s.cliIn(m.pw+"\n", "users", "create", "--email", "bob@example.com", "--name", "Bob Babbage", "--password-stdin",
		"--business", m.biz, "--role", "developer")
	m.visit("/team")
	m.review("team")
	m.fill("#invite-email", "cleo@example.com")
	evalAs[string](m.browser, `document.getElementById("invite-role").value = "viewer"`)
	m.submit(`#invite-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The invitation is sent." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("#invitations tbody tr"); !strings.Contains(got, "cleo@example.com") || !strings.Contains(got, "viewer") {
		t.Fatalf("invitation row %q", got)
	}
	bob := evalAs[string](m.browser, `[...document.querySelectorAll("#members tbody tr")].find(r => r.textContent.includes("bob@example.com")).dataset.user`)
	evalAs[string](m.browser, `document.getElementById("role-`+bob+`").value = "admin"`)
	m.submit(`tr[data-user="` + bob + `"] .role-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The role is changed." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text(`tr[data-user="` + bob + `"] td.role`); got != "admin" {
		t.Fatalf("Bob's role %q", got)
	}
	m.review("team-changed")
	m.submit(`#invitations form button[type="submit"]`)
	if got := m.text("#flash"); got != "The invitation is withdrawn." {
		t.Fatalf("flash %q", got)
	}
	m.run(chromedp.WaitVisible(chromedp.CSS("#no-invitations")))
}
