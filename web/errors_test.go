package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// postForm submits a page's form as a browser without JavaScript would.
func postForm(t *testing.T, pageURL string, form url.Values) (int, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(pageURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestErrorsAsSentences checks that the public API's refusals reach the
// customer as plain sentences with the API's status, never as codes.
func TestErrorsAsSentences(t *testing.T) {
	s := startPayd(t)
	s.must("PATCH", "/checkout-settings", s.key, map[string]any{"collect_email": true})
	cust := s.must("POST", "/customers", s.key, map[string]any{"name": "Mallory", "email": "mallory@example.com"})
	s.must("PATCH", "/customers/"+cust["id"].(string), s.key, map[string]any{"blocked": true})
	link := s.link(nil)
	page := link["url"].(string)
	form := func(email string) url.Values {
		return url.Values{"option": {"BTC/bitcoin"}, "email": {email}, "idempotency_key": {"web_" + strings.Repeat("k", 20) + email}}
	}
	cases := []struct {
		name   string
		email  string
		status int
		want   string
		code   string
	}{
		{"email required", "", 400, "Please enter your email address.", "email_required"},
		{"invalid email", "not-an-email", 400, "Please enter a valid email address", "invalid_email"},
		{"blocked customer", "mallory@example.com", 403, "Payments with this email address are not accepted", "customer_blocked"},
	}
	for _, c := range cases {
		status, body := postForm(t, page, form(c.email))
		if status != c.status || !strings.Contains(body, c.want) || strings.Contains(body, c.code) {
			t.Errorf("%s: %d, want %d with %q and no %q:\n%s", c.name, status, c.status, c.want, c.code, body)
		}
	}
	// Another site's page cannot submit the form.
	req, _ := http.NewRequest("POST", page, strings.NewReader(form("ada@example.com").Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site form: %d, want 403", res.StatusCode)
	}

	// The email field is there, labelled, and keeps what was typed.
	if _, body := postForm(t, page, form("mallory@example.com")); !strings.Contains(body, `<label for="email">`) ||
		!strings.Contains(body, `value="mallory@example.com"`) {
		t.Errorf("email field missing or emptied:\n%s", body)
	}

	// Checkouts paused by the operator (the pause is read within a second
	// of the service clock).
	s.cli("pause", "checkouts")
	s.advance(2)
	if status, body := postForm(t, page, form("ada@example.com")); status != 503 ||
		!strings.Contains(body, "Payments are paused for a moment") || strings.Contains(body, "temporarily_unavailable") {
		t.Errorf("paused: %d\n%s", status, body)
	}
	s.cli("resume", "checkouts")
	s.advance(2)
	if status, _ := postForm(t, page, form("ada@example.com")); status != http.StatusSeeOther {
		t.Errorf("after resume: %d, want 303", status)
	}

	// A payment the business canceled says so.
	pay := s.payment(nil)
	s.must("POST", "/payments/"+pay["id"].(string)+"/cancel", s.key, map[string]any{})
	res, err = http.Get(pay["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "canceled by the business") || strings.Contains(string(body), `name="option"`) {
		t.Errorf("canceled payment: %d\n%s", res.StatusCode, body)
	}

	// A payment past its expires_at says so.
	created, err := time.Parse(time.RFC3339, pay["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	exp := s.payment(map[string]any{"expires_at": created.Add(time.Hour).Format(time.RFC3339)})
	s.advance(3700)
	s.waitPayment(exp["id"].(string), "expired")
	res, err = http.Get(exp["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "This payment request has expired") || strings.Contains(string(body), `name="option"`) {
		t.Errorf("expired payment: %d\n%s", res.StatusCode, body)
	}

	// The blocked customer's sentence as a browser shows it.
	b := newBrowser(t, phone)
	b.open(page)
	b.click(`input[name="option"][value="BTC/bitcoin"]`)
	b.run(chromedpSendKeys(`#email`, "mallory@example.com"))
	b.click(`form.choose button[type="submit"]`)
	b.run(chromedpWait(`.error`))
	if got := b.text(".error"); !strings.Contains(got, "not accepted by this business") {
		t.Fatalf("error shown as %q", got)
	}
	b.screenshot("blocked")
	b.checkA11y()
}
