package web

import (
	"strings"
	"testing"
	"time"
)

// TestCardCheckoutStates checks what the page says of a card checkout at
// each point of its route, and whether it keeps following it.
func TestCardCheckoutStates(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	m := messages{lang: "en", m: english}
	cases := []struct {
		name  string
		edit  func(c *checkout)
		state string
		says  string
		live  bool
		retry bool
	}{
		{"awaiting", func(c *checkout) {}, "card_awaiting", "secure card page", true, false},
		{"challenge", func(c *checkout) { c.Card.Status = "challenge" }, "card_challenge", "bank", true, false},
		{"processing", func(c *checkout) { c.Status, c.Card.Status = "processing", "processing" }, "card_processing", "on its way", true, false},
		{"delivered", func(c *checkout) { c.Status, c.Card.Status = "processing", "delivered"; c.Card.TxHash = str("0xab") },
			"delivered", "sent", true, false},
		{"confirming", func(c *checkout) {
			c.Status, c.Card.Status, c.Confirmations.Current = "processing", "delivered", 1
		}, "confirming", "1 of 2", true, false},
		{"succeeded", func(c *checkout) { c.Status, c.Card.Status = "completed", "delivered" }, "succeeded", "Paid", false, false},
		{"declined", func(c *checkout) {
			c.Card.Status, c.Card.DeclineMessage, c.Card.RoutesLeft = "declined", str("Insufficient funds."), 1
		}, "card_declined", "declined", false, true},
		{"failed", func(c *checkout) { c.Status, c.Card.Status = "failed", "declined" }, "card_failed", "no other attempt", false, false},
		{"expired", func(c *checkout) { c.Status = "expired" }, "expired", "ran out", false, false},
		{"review", func(c *checkout) { c.Status, c.ReviewReason = "expired", str("late_payment") }, "review", "checking", false, false},
	}
	for _, tc := range cases {
		c := &checkout{ID: "chk_1", Status: "open", Currency: "USD", ExpiresAt: now.Add(90 * time.Second), Rail: "card",
			Card: &cardTry{Status: "awaiting_payment", Route: 1, RoutesLeft: 2, Asset: "USDC", Network: "polygon", Amount: "24.25",
				RedirectURL: str("http://payd.test/pay/card/chk_1?route=1")}}
		c.Breakdown.Total = 2500
		c.Confirmations.Required = 2
		tc.edit(c)
		v := viewCheckout(m, c, now)
		if v.State != tc.state || !strings.Contains(v.StatusText, tc.says) || v.Live != tc.live || v.Card.CanRetry != tc.retry {
			t.Errorf("%s: %s %q live=%v retry=%v, want %s saying %q live=%v retry=%v", tc.name, v.State, v.StatusText,
				v.Live, v.Card.CanRetry, tc.state, tc.says, tc.live, tc.retry)
		}
		if v.TakesPayments || v.Total != "25.00 USD" {
			t.Errorf("%s: a card checkout shows no deposit (%v) and totals %q", tc.name, v.TakesPayments, v.Total)
		}
	}
	if v := viewCheckout(m, &checkout{Status: "open", Card: &cardTry{Status: "declined"}}, now); v.Card.Declined != "The card was declined." {
		t.Errorf("a decline without the provider's words says %q", v.Card.Declined)
	}
}

// FuzzCardPageFrom checks that /pay/card leads back only to a page path
// of this origin: /l/ or /p/ and a plain code, nothing else.
func FuzzCardPageFrom(f *testing.F) {
	for _, s := range []string{"/l/AbC123", "/p/x_y-z", "//evil.test/l/a", "/l/a?x=1", "/l/", "https://a/l/b", "/l/a\n", "/x/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, from string) {
		of, path, ok := pageFrom(from)
		if !ok {
			return
		}
		if path != from || !strings.HasPrefix(path, "/l/") && !strings.HasPrefix(path, "/p/") ||
			strings.ContainsAny(of.code, "/?#:\\.\n%") || of.code == "" || of.link != strings.HasPrefix(path, "/l/") {
			t.Fatalf("from %q read as %+v %q", from, of, path)
		}
	})
}
