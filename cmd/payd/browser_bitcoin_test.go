package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"payd/money"
	"payd/store/storetest"
)

// TestServeBitcoinPageInChromium is issue 16's browser check: payd serve
// without --dev, following btcd in regtest with static rates, takes a
// payment of a business made with business create --wallet generate
// through the hosted page in headless Chromium. The customer picks BTC on
// bitcoin, pays the address and amount the page shows, and the page turns
// to paid as btcd mines the two confirmations.
func TestServeBitcoinPageInChromium(t *testing.T) {
	path := chromiumBinary(t)
	b := startBTCServe(t, storetest.SQLiteDSN(t))
	pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.NoFirstRun)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser without a deadline
		t.Fatalf("start chromium: %v", err)
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("browser, %s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("browser, text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	state := func(s string) {
		t.Helper()
		step("waiting for "+s, chromedp.WaitVisible(chromedp.CSS(`#status-text[data-state="`+s+`"]`)))
	}

	step("choosing BTC on bitcoin", chromedp.Navigate(pay["url"].(string)),
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

// chromiumBinary finds Debian's Chromium as the web tests do: outside CI a
// machine without it skips the test; in CI (CI=true) that is a failure.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PAYD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; .ci/run installs it with apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); skipping the browser test")
	return ""
}
