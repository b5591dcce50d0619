package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// customer is a person paying in a Chromium tab, reviewed as the
// dashboard's pages are (review: axe-core in both themes at 390 and 1280
// px, no console error, nothing wider than the screen).
func customer(t *testing.T, s *paydServer, vp viewport) *merchant {
	t.Helper()
	m := &merchant{browser: newBrowser(t, vp), s: s}
	m.watchConsole()
	return m
}

// payByCard chooses card on an open page with email and submits; the
// browser ends on the test provider's card page.
func payByCard(t *testing.T, m *merchant, prov *testCard, email string) {
	t.Helper()
	m.run(chromedpWait(`#pay-card`))
	m.run(chromedpSendKeys(`#card-email`, email))
	m.click(`#pay-card`)
	onProvider(t, m, prov)
}

// onProvider waits for the test provider's card page.
func onProvider(t *testing.T, m *merchant, prov *testCard) {
	t.Helper()
	if !m.waitHref(`location.href.startsWith(` + jsString(prov.page.URL+"/session/") + `)`) {
		m.checkConsole()
		t.Fatalf("not sent to the card provider's page; at %s: %s", m.location(), evalAs[string](m.browser, `document.body.innerText`))
	}
	m.run(chromedpWait(`#provider-pay`))
}

func jsString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestCardPayOnLinkPage walks the card path of a link's page on a phone:
// the choice shows the card total with the processing fee passed on;
// Pay by card opens a card checkout and goes through /pay/card to the
// provider's page; paid there, the customer is back on the page, which
// follows the route live: charged (on its way), then the coin delivered on
// the devnet and confirmed, then paid with the card receipt.
func TestCardPayOnLinkPage(t *testing.T) {
	s, prov := startCardPayd(t)
	s.must("PATCH", "/checkout-settings", s.key, map[string]any{"fee_payer": "customer"})
	link := s.link(nil)
	pub := s.must("GET", "/public/links/"+link["code"].(string), "", nil)
	offer := pub["card"].([]any)[0].(map[string]any)
	total := offer["total"].(map[string]any)["amount"].(float64)
	if offer["available"] != true || offer["breakdown"].(map[string]any)["processing_fee"] == nil {
		t.Fatalf("card offer %s", jsonOf(offer))
	}
	m := customer(t, s, phone)
	m.open(link["url"].(string))
	m.run(chromedpWait(`#pay-card`))
	if got := m.text(`#card-total`); !strings.Contains(got, "25.75 USD") || total != 2575 {
		t.Fatalf("card total shown as %q (offer total %v)", got, total)
	}
	if got := m.text(`#card-fee`); !strings.Contains(got, "0.75 USD") {
		t.Fatalf("processing fee shown as %q", got)
	}
	m.review("choose")

	m.run(chromedpSendKeys(`#card-email`, "grace@example.com"))
	m.click(`#pay-card`)
	onProvider(t, m, prov)
	req := prov.session("tcs_1")
	if req.Amount != 2575 || req.Email != "grace@example.com" || !strings.HasPrefix(req.ReturnURL, link["url"].(string)+"?checkout=chk_") {
		t.Fatalf("session opened with %+v", req)
	}
	if got := m.text("h1"); got != "Pay 25.75 USD" {
		t.Fatalf("provider page says %q", got)
	}
	m.click(`#provider-pay`)
	m.waitURL(req.ReturnURL[len(s.origin):])
	m.waitState("card_processing")
	id := req.CheckoutID
	if got := m.text(`#status-text`); !strings.Contains(got, "charged") || !strings.Contains(got, "on its way") {
		t.Fatalf("processing status %q", got)
	}
	if got := m.text(`#card-charged`); got != "Charged to Visa ending in 4242." {
		t.Fatalf("card line %q", got)
	}
	if k := s.cardOf(id); k["status"] != "processing" || k["last4"] != "4242" {
		t.Fatalf("after the page's refresh the card is %s", jsonOf(k))
	}
	m.review("processing")

	m.markPage()
	s.deliverCard(id)
	m.waitState("succeeded")
	m.checkNoReload()
	if got := m.text(`#receipt-amount`); got != "25.75 USD" {
		t.Fatalf("receipt total %q", got)
	}
	if got := m.text(`#receipt-card`); got != "Visa ending in 4242" {
		t.Fatalf("receipt card %q", got)
	}
	s.waitPayment(s.checkout(id)["payment_id"].(string), "succeeded")
	m.review("succeeded")
	m.run(chromedpReload())
	m.waitState("succeeded")
}

// TestCardDeclineThenRetry is declined on the first route: back on the
// page, the provider's reason and "Try again" (with the tries left); Try
// again opens the second route's session, which pays.
func TestCardDeclineThenRetry(t *testing.T) {
	s, prov := startCardPayd(t)
	link := s.link(nil)
	m := customer(t, s, desktop)
	m.open(link["url"].(string))
	payByCard(t, m, prov, "grace@example.com")
	m.click(`#provider-decline`)
	m.waitState("card_declined")
	if got := m.text(`#card-declined`); !strings.Contains(got, testDecline) {
		t.Fatalf("decline shown as %q", got)
	}
	if got := m.text(`#card-routes-left`); got != "You can try 2 more times." {
		t.Fatalf("tries left %q", got)
	}
	m.review("declined")
	id := prov.session("tcs_1").CheckoutID
	m.click(`#card-retry`)
	onProvider(t, m, prov)
	if got := prov.session("tcs_2"); got.CheckoutID != id || got.Route != 2 {
		t.Fatalf("second session %+v", got)
	}
	m.click(`#provider-pay`)
	m.waitState("card_processing")
	if k := s.cardOf(id); k["route"] != 2.0 || k["status"] != "processing" {
		t.Fatalf("card %s", jsonOf(k))
	}
	s.deliverCard(id)
	m.waitState("succeeded")
	m.review("paid-second-route")
}

// TestCardDeclinedWithoutScript goes the card path with JavaScript off:
// the forms, the redirects, the declined state rendered by the server,
// Try again, an out-of-date card page link, a card page left unpaid (Go to
// the card page), and "Refresh status" until paid.
func TestCardDeclinedWithoutScript(t *testing.T) {
	s, prov := startCardPayd(t)
	link := s.link(nil)
	m := customer(t, s, phone)
	noScript(m, true)
	m.open(link["url"].(string))
	payByCard(t, m, prov, "grace@example.com")
	id := prov.session("tcs_1").CheckoutID
	m.click(`#provider-decline`)
	m.waitState("card_declined")
	if got := m.text(`#card-declined`); !strings.Contains(got, testDecline) {
		t.Fatalf("decline shown as %q", got)
	}
	if evalAs[bool](m.browser, `document.documentElement.classList.contains("js")`) {
		t.Fatal("the page's script ran")
	}
	reviewNoScript(m, "declined-noscript")
	m.click(`#card-retry`)
	onProvider(t, m, prov)

	// The first route's card page is out of date now.
	code := link["code"].(string)
	m.open(s.origin + "/pay/card/" + id + "?route=1&from=/l/" + code)
	m.run(chromedpWait(`#back`))
	if got := m.text(`main [role="alert"]`); !strings.Contains(got, "out of date") {
		t.Fatalf("stale route page says %q", got)
	}
	if got := m.attr(`#back`, "href"); got != s.origin+"/l/"+code+"?checkout="+id {
		t.Fatalf("back link %q", got)
	}
	// The page answers with the API's status, 409, which the console
	// reports as a failed load: that one is expected.
	m.mu.Lock()
	m.errors = nil
	m.mu.Unlock()
	reviewNoScript(m, "stale-route")

	// Back on the page without paying: the route waits, with a way back
	// to the card page and a refresh link.
	m.click(`#back`)
	m.waitState("card_awaiting")
	if m.text(`.refresh a`) != "Refresh status" {
		t.Fatal("no refresh link without script")
	}
	reviewNoScript(m, "awaiting-noscript")
	m.click(`#card-go`)
	onProvider(t, m, prov)
	m.click(`#provider-pay`)
	m.waitState("card_processing")
	s.deliverCard(id)
	s.waitCheckout(id, func(c map[string]any) bool { return c["status"] == "completed" })
	m.click(`.refresh a`)
	m.waitState("succeeded")
	reviewNoScript(m, "paid-noscript")
}

// noScript turns the tab's JavaScript off (or on again).
func noScript(m *merchant, off bool) {
	m.t.Helper()
	m.run(func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return chromedp.Void{}, err
	})
}

// reviewNoScript reviews a page loaded without JavaScript: axe-core needs
// script, so it is turned on for the review (the page's own script, not
// run at load, stays off) and off again after.
func reviewNoScript(m *merchant, name string) {
	m.t.Helper()
	if evalAs[bool](m.browser, `document.documentElement.classList.contains("js")`) {
		m.t.Fatal("the page's script ran")
	}
	noScript(m, false)
	m.review(name)
	noScript(m, true)
}

// TestCardOnPaymentPage pays a payment made with the API by card on its
// page (/p/), and the paid page goes on to the payment's success_url; a
// link whose total is under the card minimum says why card is not offered.
func TestCardOnPaymentPage(t *testing.T) {
	s, prov := startCardPayd(t)
	small := s.link(map[string]any{"amount": 300})
	res, err := http.Get(small["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `id="card-unavailable"`) || strings.Contains(string(body), `id="pay-card"`) ||
		!strings.Contains(string(body), "from 5.00 USD to 10000.00 USD") {
		t.Fatalf("a 3.00 USD link's card choice:\n%s", body)
	}
	p := s.payment(map[string]any{"success_url": prov.page.URL + "/thanks"})
	m := customer(t, s, phone)
	m.open(p["url"].(string))
	payByCard(t, m, prov, "grace@example.com")
	req := prov.session("tcs_1")
	if req.Amount != 4200 || !strings.HasPrefix(req.ReturnURL, p["url"].(string)+"?checkout=") {
		t.Fatalf("session %+v", req)
	}
	m.click(`#provider-pay`)
	m.waitState("card_processing")
	s.deliverCard(req.CheckoutID)
	m.waitURL("/thanks")
	m.run(chromedpWait(`#thanks`))
	s.waitPayment(p["id"].(string), "succeeded")
}
