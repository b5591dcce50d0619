package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestUnderpaidThenRemainder sends too little: the page shows how much is
// still due (with a QR code of just that) without a reload; once the
// quote ends the business asks for the remainder, and its page address
// (?checkout=) opens a quote for the rest, which is paid.
func TestUnderpaidThenRemainder(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	b := newBrowser(t, smallPhone)
	b.open(link["url"].(string))
	b.checkFits()
	b.click(`input[name="option"][value="BTC/bitcoin"]`)
	b.click(`form.choose button[type="submit"]`)
	b.run(chromedpWait(`#quote-address`))
	chk := s.checkout(checkoutID(t, b.location()))
	q := chk["crypto"].(map[string]any)
	b.markPage()
	s.send(chk, "0.0001")
	s.mine("bitcoin", 2)
	b.waitState("underpaid")
	b.checkNoReload()
	after := s.checkout(chk["id"].(string))
	rest := after["crypto"].(map[string]any)["remaining_amount"].(string)
	if got := b.text("#quote-amount"); got != rest {
		t.Fatalf("amount still due shown as %q, want %q", got, rest)
	}
	if got := b.text("#status-text"); !strings.Contains(got, rest) {
		t.Fatalf("status %q does not say the %s still due", got, rest)
	}
	if uri := after["crypto"].(map[string]any)["remaining_payment_uri"].(string); b.decodeQR() != "" && b.decodeQR() != uri {
		t.Fatalf("QR code does not hold the remaining URI %q", uri)
	}
	if got := b.text("#quote-address"); got != q["address"] {
		t.Fatalf("the rest goes to %q, want the same address %q", got, q["address"])
	}
	b.screenshot("underpaid")
	b.checkFits()
	b.checkA11y()

	// The quote ends: the page says so, still without a reload.
	s.advance(16 * 60)
	b.waitState("expired")
	b.checkNoReload()
	if got := b.text("#status-text"); !strings.Contains(got, "0.0001") {
		t.Fatalf("expired status %q does not say what was received", got)
	}

	// The business asks for the rest; the customer opens the page it names.
	rem := s.must("POST", "/payments/"+chk["payment_id"].(string)+"/request-remainder", s.key, map[string]any{},
		"Idempotency-Key", "remainder-1")
	b.open(rem["url"].(string))
	b.run(chromedpWait(`#quote-address`))
	remChk := s.checkout(checkoutID(t, b.location()))
	if got, want := b.text("#quote-amount"), remChk["crypto"].(map[string]any)["amount"]; got != want {
		t.Fatalf("remainder amount %q, want %q", got, want)
	}
	if b.text("#remainder-note") == "" || evalAs[int](b, `document.querySelectorAll(".other").length`) != 0 {
		t.Fatal("a remainder's page must say so and offer no other coin")
	}
	b.screenshot("remainder")
	b.checkA11y()
	b.markPage()
	s.send(remChk, remChk["crypto"].(map[string]any)["amount"].(string))
	s.mine("bitcoin", 2)
	b.waitState("succeeded")
	b.checkNoReload()
}

// TestUnderpaidNewQuoteForRest sends too little on a phone and lets the
// quote end: the page says what arrived, asks nothing of an email it never
// collected, and its "Get a new quote for the rest" opens a quote for what
// is still due (not the whole price), which is paid; the paid page shows
// the receipt. Times show in UTC and in the device's zone (Berlin).
func TestUnderpaidNewQuoteForRest(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	b := newBrowser(t, phone)
	b.timezone("Europe/Berlin")
	b.open(link["url"].(string))
	b.click(`input[name="option"][value="USDC/polygon"]`)
	b.click(`form.choose button[type="submit"]`)
	b.run(chromedpWait(`#quote-address`))
	if got := b.text("#quote-ends"); !strings.Contains(got, " UTC") || !strings.Contains(got, "your time") {
		t.Fatalf("quote end %q, want UTC and the local time", got)
	}
	chk := s.checkout(checkoutID(t, b.location()))
	s.send(chk, "10.00")
	s.mine("polygon", 32)
	b.waitState("underpaid")
	b.screenshot("underpaid")
	s.advance(16 * 60)
	b.waitState("expired")
	status := b.text("#status-text")
	if !strings.Contains(status, "10.00 USDC") || strings.Contains(status, "contact") || strings.Contains(status, "write to you") {
		t.Fatalf("ended short: %q", status)
	}
	if got := b.text("#new-quote"); got != "Get a new quote for the rest" {
		t.Fatalf("the button says %q", got)
	}
	b.checkFits()
	b.checkA11y()
	b.screenshot("underpaid-ended")
	b.click("#new-quote")
	b.waitLeave(chk["id"].(string))
	b.run(chromedpWait(`#quote-address`))
	rest := s.checkout(checkoutID(t, b.location()))
	if rest["remainder"] != true || rest["amount"] != 1500.0 || rest["crypto"].(map[string]any)["amount"] != "15.00" ||
		rest["payment_id"] != chk["payment_id"] || b.text("#quote-amount") != "15.00" || b.text("#remainder-note") == "" {
		t.Fatalf("new quote after an underpaid one: %v (page asks %q)", rest, b.text("#quote-amount"))
	}
	b.screenshot("rest")
	s.send(rest, "15.00")
	s.mine("polygon", 32)
	b.waitState("succeeded")
	checkReceipt(t, b, s.checkout(rest["id"].(string)))
	if b.text("#receipt-remainder") == "" {
		t.Fatal("the receipt of a remainder does not say it covers only the rest")
	}
	b.checkA11y()
	b.screenshot("receipt")
}

// TestExpiredThenNewQuote lets a quote run out on the service clock: the
// page turns to expired without a reload and its button opens a fresh
// quote in the same coin. It is all done with the keyboard.
func TestExpiredThenNewQuote(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	b := newBrowser(t, desktop)
	b.open(link["url"].(string))
	// The eighth coin (ETH on ethereum) by arrow keys, sent with Enter.
	steps := []chromedp.Action[chromedp.Void]{chromedp.Focus(chromedp.CSS(`input[name="option"]`))}
	for range 7 {
		steps = append(steps, chromedp.KeyEvent(kb.ArrowDown))
	}
	b.run(append(steps, chromedp.KeyEvent(kb.Enter), chromedpWait(`#quote-address`))...)
	if got := b.text("#quote-network"); got != "Ethereum" || !strings.Contains(b.text(".warning"), "Ether (ETH)") {
		t.Fatalf("keyboard choice gave %q", got)
	}
	first := checkoutID(t, b.location())
	if got := b.text(".countdown"); !strings.HasPrefix(got, "14:") && !strings.HasPrefix(got, "15:") {
		t.Fatalf("countdown shows %q, want about 15 minutes", got)
	}
	b.markPage()
	s.advance(15*60 + 5)
	b.waitState("expired")
	b.checkNoReload()
	b.screenshot("expired")
	b.checkA11y()
	b.run(chromedp.Focus(chromedp.CSS(`#new-quote`)), chromedp.KeyEvent(kb.Enter))
	b.waitLeave(first)
	b.run(chromedpWait(`#quote-address`))
	second := checkoutID(t, b.location())
	if second == first {
		t.Fatal("the new quote is the old checkout")
	}
	c := s.checkout(second)
	if c["status"] != "open" || c["crypto"].(map[string]any)["asset"] != "ETH" {
		t.Fatalf("new quote: %v", c)
	}
	b.waitState("open")

	// The customer paid the first quote anyway, after its end: once
	// confirmed it waits for the business's review, and its page says so.
	old := s.checkout(first)
	s.send(old, old["crypto"].(map[string]any)["amount"].(string))
	s.mine("ethereum", 12)
	s.waitCheckout(first, func(c map[string]any) bool { return c["review_reason"] != nil })
	b.open(link["url"].(string) + "?checkout=" + first)
	b.waitState("review")
	b.screenshot("review")
	b.checkA11y()
}

// TestArchivedLink shows the not-found page, with a 404, for an archived
// link and for a code that never existed.
func TestArchivedLink(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	s.must("POST", "/links/"+link["id"].(string)+"/archive", s.key, map[string]any{})
	for _, u := range []string{link["url"].(string), s.origin + "/l/nosuchcode", s.origin + "/p/nosuchcode"} {
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.Contains(string(body), "Page not found") {
			t.Fatalf("%s: %d %s", u, res.StatusCode, body)
		}
		checkSecurityHeaders(t, res.Header)
	}
	b := newBrowser(t, phone)
	b.open(link["url"].(string))
	if got := b.text("h1"); got != "Page not found" {
		t.Fatalf("archived link shows %q", got)
	}
	b.screenshot("archived")
	b.checkA11y()
}

// TestForeignCheckout names, on one business's pages, a checkout that
// another business opened on its own link: neither the page nor its live
// part shows it, so nobody can put their deposit address on another's
// page, while the checkout's own page still does.
func TestForeignCheckout(t *testing.T) {
	s := startPayd(t)
	link, pay := s.link(nil), s.payment(nil)
	other := s.newBusiness("Mallory's Shop")
	theirs := s.must("POST", "/links", other["secret_key"].(string), map[string]any{"name": "Mallory's", "amount": 2500, "currency": "USD"})
	chk := s.must("POST", "/checkouts", "", map[string]any{"link_code": theirs["code"], "rail": "crypto", "asset": "BTC", "network": "bitcoin"},
		"Idempotency-Key", "foreign-checkout-1")
	id, address := chk["id"].(string), chk["crypto"].(map[string]any)["address"].(string)
	get := func(u string) (int, string) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for _, page := range []string{link["url"].(string), pay["url"].(string)} {
		if status, body := get(page + "?checkout=" + id); status != 200 || strings.Contains(body, address) {
			t.Fatalf("%s?checkout= of another business: %d, shows the address: %t", page, status, strings.Contains(body, address))
		}
		if status, body := get(page + "/status?checkout=" + id); status != 404 || strings.Contains(body, address) {
			t.Fatalf("%s/status?checkout= of another business: %d %s", page, status, body)
		}
	}
	if status, body := get(theirs["url"].(string) + "/status?checkout=" + id); status != 200 || !strings.Contains(body, address) {
		t.Fatalf("the checkout's own page: %d %s", status, body)
	}
	if status, _ := get(s.origin + "/l/" + strings.Repeat("x", 300) + "/status?checkout=" + id); status != 404 {
		t.Fatalf("the live part of a page no link can have: %d", status)
	}
	// The API answers the same: scoped to another page, not found.
	for _, q := range []string{"link_code=" + link["code"].(string), "payment_code=" + pay["code"].(string), "link_code=nosuchcode"} {
		if status, body := s.call("GET", "/checkouts/"+id+"?"+q, "", nil); status != 404 || !strings.Contains(string(body), `"not_found"`) {
			t.Fatalf("GET /checkouts/{id}?%s: %d %s", q, status, body)
		}
	}
	if got := s.must("GET", "/checkouts/"+id+"?link_code="+theirs["code"].(string), "", nil); got["id"] != id {
		t.Fatalf("scoped to its own link: %v", got)
	}
}

// checkSecurityHeaders checks the headers every page carries: a strict
// policy without inline code, no framing, no sniffing, no referrer.
func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy allows inline code: %q", csp)
	}
	for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if h.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, h.Get(k), v)
		}
	}
}

// TestAnotherCoin replaces an open quote with one in another coin: the
// same payment, the old checkout canceled as replaced, and its address
// (a stale tab, a reload) leading to the new one.
func TestAnotherCoin(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	b := newBrowser(t, phone)
	b.open(link["url"].(string))
	b.click(`input[name="option"][value="BTC/bitcoin"]`)
	b.click(`form.choose button[type="submit"]`)
	b.run(chromedpWait(`#quote-address`))
	first := s.checkout(checkoutID(t, b.location()))
	b.click(`details.other summary`)
	b.click(`details.other input[name="option"][value="USDC/polygon"]`)
	b.click(`details.other button[type="submit"]`)
	b.waitLeave(first["id"].(string))
	b.run(chromedpWait(`#quote-address`))
	second := s.checkout(checkoutID(t, b.location()))
	if second["id"] == first["id"] || second["payment_id"] != first["payment_id"] ||
		second["crypto"].(map[string]any)["asset"] != "USDC" || b.text("#quote-network") != "Polygon" {
		t.Fatalf("another coin gave %v after %v", second, first)
	}
	if old := s.checkout(first["id"].(string)); old["status"] != "canceled" || old["replaced_by"] != second["id"] {
		t.Fatalf("the first quote is %v, want canceled and replaced", old)
	}
	b.open(link["url"].(string) + "?checkout=" + first["id"].(string))
	b.run(chromedpWait(`#quote-address`))
	if got := checkoutID(t, b.location()); got != second["id"] {
		t.Fatalf("the old quote's address leads to %s, want %s", got, second["id"])
	}
}
