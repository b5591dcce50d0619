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
	for _, f := range []string{"view.go", "page.go", "link_show.go", "payment_show.go", "messages.go"} {
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
