package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payd/money"
	"payd/store/storetest"
	"payd/web/webtest"
)

// TestServeBitcoinPageInChromium is issue 16's browser check: payd serve
// without --dev, following btcd in regtest with static rates, takes a
// payment of a business made with business create --wallet generate
// through the hosted page in headless Chromium. The customer picks BTC on
// bitcoin, pays the address and amount the page shows, and the page turns
// to paid as btcd mines the two confirmations.
func TestServeBitcoinPageInChromium(t *testing.T) {
	ctx := webtest.Tab(t)
	b := startBTCServe(t, storetest.SQLiteDSN(t))
	pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
	text := func(sel string) string {
		t.Helper()
		return strings.TrimSpace(webtest.Get(t, ctx, chromedp.Text(chromedp.CSS(sel))))
	}
	state := func(s string) {
		t.Helper()
		webtest.Run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#status-text[data-state="`+s+`"]`)))
	}

	// Choosing BTC on bitcoin:
	webtest.Run(t, ctx, chromedp.Navigate(pay["url"].(string)),
		chromedp.Click(chromedp.CSS(`input[name="option"][value="BTC/bitcoin"]`)),
		chromedp.Click(chromedp.CSS(`form.choose button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#quote-address`)))
	addr, shown := text("#quote-address"), text("#quote-amount")
	amount, err := money.ParseCoinAmount(money.BTC, shown)
	if !strings.HasPrefix(addr, "bcrt1q") || err != nil {
		t.Fatalf("the page shows %q to pay to %q (%v)", shown, addr, err)
	}
	tx := b.node.Send(addr, amount.Units.Int64())
	state("detected")
	b.node.Mine(1)
	state("confirming")
	b.node.Mine(1)
	state("succeeded")

	got := b.api.call(200, "GET", "/payments/"+pay["id"].(string), nil)
	method := got["method"].(map[string]any)
	if got["status"] != "succeeded" || method["tx_hash"] != tx || method["amount"] != shown {
		t.Fatalf("payment paid through the page: %v", got)
	}
}
