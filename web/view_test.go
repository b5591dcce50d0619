package web

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"payd/money"
)

// TestCheckoutStates names each checkout the way the page tells it.
func TestCheckoutStates(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	m := messages{lang: "en", m: english}
	cases := []struct {
		name  string
		edit  func(c *checkout)
		state string
		says  string
		live  bool
	}{
		{"open", func(c *checkout) {}, "open", "Waiting", true},
		{"detected", func(c *checkout) { c.Status = "processing" }, "detected", "detected", true},
		{"confirming", func(c *checkout) { c.Status = "processing"; c.Confirmations.Current = 1 }, "confirming", "1 of 2", true},
		{"succeeded", func(c *checkout) { c.Status = "completed" }, "succeeded", "Paid", false},
		{"overpaid", func(c *checkout) { c.Status = "completed"; c.Crypto.OverpaidAmount = str("0.1") }, "overpaid", "0.1 BTC more", false},
		{"underpaid", func(c *checkout) {
			c.Status = "underpaid"
			c.Crypto.ReceivedAmount, c.Crypto.RemainingAmount = "0.4", str("0.6")
			c.Crypto.RemainingPaymentURI = str("bitcoin:bc1qx?amount=0.6")
		}, "underpaid", "remaining 0.6 BTC", true},
		{"expired", func(c *checkout) { c.Status = "expired" }, "expired", "expired", false},
		{"expired short", func(c *checkout) { c.Status = "expired"; c.Crypto.ReceivedAmount = "0.4" }, "expired", "0.4 BTC received", false},
		{"canceled", func(c *checkout) { c.Status = "canceled" }, "canceled", "canceled", false},
		{"review", func(c *checkout) { c.Status = "expired"; c.ReviewReason = str("late_payment") }, "review", "checking", false},
	}
	for _, tc := range cases {
		c := &checkout{ID: "chk_1", Status: "open", Currency: "USD", ExpiresAt: now.Add(90 * time.Second),
			Crypto: &quote{Asset: "BTC", Network: "bitcoin", Amount: "1.0", Address: "bc1qx",
				PaymentURI: "bitcoin:bc1qx?amount=1.0", ReceivedAmount: "0.0"}}
		c.Confirmations.Required = 2
		tc.edit(c)
		v := viewCheckout(m, c, now)
		if v.State != tc.state || !strings.Contains(v.StatusText, tc.says) || v.Live != tc.live {
			t.Errorf("%s: %s %q live=%v, want %s saying %q live=%v", tc.name, v.State, v.StatusText, v.Live, tc.state, tc.says, tc.live)
		}
		if tc.state == "underpaid" && (v.Amount != "0.6" || string(v.PaymentURI) != "bitcoin:bc1qx?amount=0.6") {
			t.Errorf("underpaid asks for %s at %s, want the rest", v.Amount, v.PaymentURI)
		}
	}
}

func TestCountdown(t *testing.T) {
	for s, want := range map[int64]string{0: "0:00", 9: "0:09", 61: "1:01", 900: "15:00"} {
		if got := countdown(s); got != want {
			t.Errorf("countdown(%d) = %q, want %q", s, got, want)
		}
	}
}

// TestErrorSentences checks that no API code reaches the page as itself.
func TestErrorSentences(t *testing.T) {
	m := messages{lang: "en", m: english}
	for _, code := range []string{"link_archived", "link_not_found", "payment_expired", "customer_blocked",
		"temporarily_unavailable", "email_required", "invalid_email", "rate_limited", "something_new", ""} {
		s := m.errorText(code, "")
		if s == "" || strings.Contains(s, "_") || !strings.HasSuffix(s, ".") {
			t.Errorf("%q gives %q", code, s)
		}
	}
	if got := m.errorText("invalid_request", "email"); got != english["error.invalid_email"] {
		t.Errorf("a bad email gives %q", got)
	}
}

// TestCatalogueHasEveryKey finds every message key the templates and the
// Go code use and checks that English has it, and that every language has
// the same placeholders as English.
func TestCatalogueHasEveryKey(t *testing.T) {
	re := regexp.MustCompile(`\.T "([a-z_.A-Z]+)"|m\.T\("([a-z_.A-Z]+)"|T\("([a-z_]+\.[a-z_]+)"`)
	var src bytes.Buffer
	entries, _ := templateFS.ReadDir("templates")
	for _, e := range entries {
		b, _ := templateFS.ReadFile("templates/" + e.Name())
		src.Write(b)
	}
	for _, f := range []string{"view.go", "page.go", "card.go", "link_show.go", "payment_show.go", "messages.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	// Keys made from a prefix: every coin and network must be there.
	for _, a := range money.Assets {
		src.WriteString(`.T "asset.` + string(a) + `"`)
	}
	for _, n := range money.Networks {
		src.WriteString(`.T "network.` + string(n) + `"`)
	}
	for _, mt := range re.FindAllStringSubmatch(src.String(), -1) {
		key := mt[1] + mt[2] + mt[3]
		if strings.HasSuffix(key, ".") {
			continue // a prefix, completed at run time
		}
		if _, ok := english[key]; !ok {
			t.Errorf("message %q is used but not in the catalogue", key)
		}
	}
	for lang, msgs := range catalogue {
		for k, v := range msgs {
			if strings.Count(v, "%") != strings.Count(english[k], "%") {
				t.Errorf("%s %s: placeholders differ from English", lang, k)
			}
		}
	}
}

func TestLanguage(t *testing.T) {
	r, _ := http.NewRequest("GET", "/l/x", nil)
	r.Header.Set("Accept-Language", "xx-YY, en-GB;q=0.8")
	if got := language(r).Lang(); got != "en" {
		t.Errorf("language %q", got)
	}
}

// TestPossessive follows the rule docs/checkout-page.md records: an
// apostrophe alone after a final s.
func TestPossessive(t *testing.T) {
	m := messages{lang: "en", m: english}
	for name, want := range map[string]string{"Books": "Books'", "ADA BOOKS": "ADA BOOKS'", "Ada": "Ada's", "Ada's Books": "Ada's Books'"} {
		if got := m.Possessive(name); got != want {
			t.Errorf("Possessive(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestPageParts covers what issue 15 item 18 found missing: a heading for
// a payment without description, the receipt of a paid checkout, a new
// quote for the rest after an underpaid quote ends that promises contact
// only when an email was given, and times in UTC marked up for the
// customer's local time.
func TestPageParts(t *testing.T) {
	m := messages{lang: "en", m: english}
	p := basePage(m, "/p/x", "", "", 4200, "USD", offer{Business: business{Name: "Books"}})
	if p.Item != "Payment to Books" || !p.Untitled {
		t.Errorf("a payment without description is headed %q", p.Item)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	base := func() *checkout {
		return &checkout{ID: "chk_1", Status: "expired", Currency: "USD", ExpiresAt: now.Add(-time.Minute), UpdatedAt: now,
			Crypto: &quote{Asset: "BTC", Network: "bitcoin", Amount: "1.0", Address: "bc1qx<", ReceivedAmount: "0.4"}}
	}
	v := viewCheckout(m, base(), now)
	if !v.Partial || strings.Contains(v.StatusText, "contact") || strings.Contains(v.StatusText, "write to you") ||
		!strings.Contains(v.StatusText, "new quote for what is still due") {
		t.Errorf("short and ended, no email: partial=%v %q", v.Partial, v.StatusText)
	}
	c := base()
	c.Email = "ann@example.com"
	if v := viewCheckout(m, c, now); !v.Partial || !strings.Contains(v.StatusText, "ann@example.com") {
		t.Errorf("short and ended, with email: %q", v.StatusText)
	}
	c = base()
	c.Crypto.ReceivedAmount = "0.0"
	if v := viewCheckout(m, c, now); v.Partial || v.PaidAt != "" {
		t.Errorf("nothing received is no remainder: %+v", v)
	}
	c = base()
	c.Status, c.Crypto.ReceivedAmount, c.Crypto.TxHash = "completed", "1.0", str("ab12")
	v = viewCheckout(m, c, now)
	if v.TxHash != "ab12" || !strings.Contains(string(v.PaidAt), `<time datetime="2026-11-24T12:00:00Z"`) ||
		!strings.Contains(string(v.PaidAt), "24 November 2026, 12:00 UTC</time>") {
		t.Errorf("receipt: tx %q, date %s", v.TxHash, v.PaidAt)
	}
	c.Status = "open"
	c.ExpiresAt = now.Add(10 * time.Minute)
	if got := string(viewCheckout(m, c, now).EndsAt); got != `This quote ends at <time datetime="2026-11-24T12:10:00Z" data-local-label="%s your time">12:10 UTC</time>.` {
		t.Errorf("quote end = %s", got)
	}
}
