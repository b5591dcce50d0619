package sandbox

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"payd"
	"payd/chain/devnet"
	"payd/clock"
	"payd/money"
	"payd/store/storetest"
	"payd/web/webtest"
)

// TestPagesInBrowser pays with the sandbox's card page in Chromium at
// 360 px, light and dark, with script switched off: the form has labels
// and landmarks, nothing overflows, a wrong number is shown as an error on
// the field, and a test card sends the customer back.
func TestPagesInBrowser(t *testing.T) {
	webtest.Path(t) // skips without Chromium
	db := storetest.OpenSQLite(t)
	clk := clock.NewOffset()
	dn, err := devnet.New(context.Background(), db, clk, "http://payd.test/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p, err := New(Options{Store: db, Clock: clk, PublicURL: srv.URL, Deliverer: dn, Log: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(PagePath, p.Handler())
	mux.HandleFunc("GET /back", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><title>Checkout</title><main><h1 id="back">Back at the checkout</h1></main>`))
	})
	backgrounds := map[string]string{}
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			sess, err := p.Start(context.Background(), payd.CardSessionRequest{CheckoutID: "chk_1", Route: 1, Amount: 10_000,
				Currency: "USD", Deliver: money.CoinAmount{Asset: money.USDC, Units: big.NewInt(97_000_000)},
				Network: money.Polygon, Address: polygonAddr, Email: "a@example.com", ReturnURL: srv.URL + "/back",
				ExpiresAt: clk.Now().Add(15 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := webtest.Tab(t, chromedp.WindowSize(360, 740))
			run := func(steps ...chromedp.Action[chromedp.Void]) { t.Helper(); webtest.Run(t, ctx, steps...) }
			eval := func(expr string) string {
				t.Helper()
				return webtest.Get(t, ctx, chromedp.Evaluate[string](expr))
			}
			run(chromedp.EmulateViewport(360, 740, func(p *emulation.SetDeviceMetricsOverrideParams, tp *emulation.SetTouchEmulationEnabledParams) {
				p.Mobile, tp.Enabled = true, true
			}), func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
				return chromedp.Void{}, err
			}, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
				return chromedp.Void{}, err
			}, chromedp.Navigate(sess.RedirectURL), chromedp.WaitVisible(chromedp.CSS("main h1")))
			checks := map[string]string{
				"one main and one h1":         `String(document.querySelectorAll("main").length === 1 && document.querySelectorAll("h1").length === 1)`,
				"every input has a label":     `String([...document.querySelectorAll("input")].every(i => i.labels.length === 1 && i.labels[0].textContent.trim() !== ""))`,
				"nothing overflows at 360 px": `String(document.documentElement.scrollWidth <= 360)`,
				"the charge is shown":         `String(document.querySelector(".charge").textContent.includes("100.00 USD"))`,
			}
			for what, expr := range checks {
				if got := eval(expr); got != "true" {
					t.Errorf("%s: %s", what, got)
				}
			}
			backgrounds[scheme] = eval(`getComputedStyle(document.body).backgroundColor`)
			run(chromedp.SendKeys(chromedp.CSS("#number"), "5555 5555 5555 4444"), chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[role="alert"]`)))
			if got := eval(`document.querySelector("#number").getAttribute("aria-invalid") + " " + document.querySelector("#number").getAttribute("aria-describedby")`); got != "true number-hint number-error" {
				t.Errorf("the wrong number's field: %s", got)
			}
			run(chromedp.Navigate(sess.RedirectURL), chromedp.WaitVisible(chromedp.CSS("#number")), chromedp.SendKeys(chromedp.CSS("#number"), "4242 4242 4242 4242"),
				chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#back")))
			if loc := webtest.Get(t, ctx, chromedp.Location()); loc != srv.URL+"/back" {
				t.Fatalf("after paying: at %s", loc)
			}
			if rep, err := p.Status(context.Background(), sess.ID); err != nil || rep.Status != payd.CardDelivered {
				t.Fatalf("after paying: %+v, %v", rep, err)
			}
		})
	}
	if backgrounds["light"] == backgrounds["dark"] {
		t.Errorf("light and dark share the background %s", backgrounds["light"])
	}
}
