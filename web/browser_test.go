package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"payd/web/webtest"
)

// viewport is a screen size the pages are checked at.
type viewport struct {
	name          string
	width, height int64
	mobile        bool
}

var (
	phone      = viewport{"phone", 390, 844, true}
	smallPhone = viewport{"small-phone", 360, 740, true}
	desktop    = viewport{"desktop", 1280, 900, false}
)

// browser is one headless Chromium tab at a viewport.
type browser struct {
	t   *testing.T
	ctx context.Context
	vp  viewport
}

// newBrowser starts Chromium with the flags known to work here and opens a
// tab at the viewport.
func newBrowser(t *testing.T, vp viewport) *browser {
	t.Helper()
	ctx := webtest.Tab(t, chromedp.WindowSize(int(vp.width), int(vp.height)))
	b := &browser{t: t, ctx: ctx, vp: vp}
	b.run(chromedp.EmulateViewport(vp.width, vp.height, func(p *emulation.SetDeviceMetricsOverrideParams, tp *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = vp.mobile
		tp.Enabled = vp.mobile
	}))
	return b
}

// timezone sets the tab's time zone (an IANA name), as a customer's
// device far from UTC has it.
func (b *browser) timezone(id string) {
	b.t.Helper()
	b.run(func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
		return chromedp.Void{}, err
	})
}

// run runs steps, each group bounded by webtest.StepTimeout, and fails the
// test on error.
func (b *browser) run(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	webtest.Run(b.t, b.ctx, steps...)
}

// get runs one action that returns a value.
func get[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	return webtest.Get(b.t, b.ctx, a)
}

// open navigates to url.
func (b *browser) open(url string) { b.t.Helper(); b.run(chromedp.Navigate(url)) }

// text returns the text of the first node matching the CSS selector.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(get(b, chromedp.Text(chromedp.CSS(sel))))
}

// attr returns an attribute of the first node matching sel.
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	return get(b, chromedp.JavascriptAttribute[string](chromedp.CSS(sel), name))
}

// click clicks the first node matching sel.
func (b *browser) click(sel string) { b.t.Helper(); b.run(chromedp.Click(chromedp.CSS(sel))) }

// evalString evaluates a JavaScript expression, awaiting a promise.
func evalAs[T any](b *browser, expr string) T {
	b.t.Helper()
	return get(b, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// location is the tab's address.
func (b *browser) location() string { b.t.Helper(); return get(b, chromedp.Location()) }

// waitState waits until the live status shows state.
func (b *browser) waitState(state string) {
	b.t.Helper()
	b.run(chromedp.WaitVisible(chromedp.CSS(`#status-text[data-state="` + state + `"]`)))
}

// markPage and checkNoReload prove that a change came in without the page
// being loaded again: a value set on window survives only if it was not.
func (b *browser) markPage() { b.t.Helper(); evalAs[string](b, `window.__paydMark = "kept"`) }

func (b *browser) checkNoReload() {
	b.t.Helper()
	if v := evalAs[string](b, `String(window.__paydMark)`); v != "kept" {
		b.t.Fatalf("the page was reloaded (mark %q)", v)
	}
}

// screenshot writes a full-page PNG to $PAYD_WEB_ARTIFACTS, or to the
// test's temporary folder, and logs where.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("PAYD_WEB_ARTIFACTS")
	if dir == "" {
		dir = b.t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	png := get(b, chromedp.FullScreenshot(100))
	file := filepath.Join(dir, strings.NewReplacer("/", "-", " ", "-").Replace(b.t.Name())+"-"+name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", file)
}

// tool reads a JavaScript file named by an environment variable (the npm
// packages .ci/run installs). Outside CI a missing one skips that check.
func tool(t *testing.T, env string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; .ci/run installs it with npm", env)
		}
		t.Logf("%s is not set: check skipped", env)
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return string(b)
}

// checkA11y runs axe-core in the page and fails on any serious or
// critical violation. The script is evaluated through the DevTools
// protocol, which the page's Content-Security-Policy does not govern.
func (b *browser) checkA11y() {
	b.t.Helper()
	src := tool(b.t, "PAYD_AXE_JS")
	if src == "" {
		return
	}
	evalAs[int](b, src+";0")
	found := evalAs[[]string](b, `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`)
	for _, v := range found {
		b.t.Errorf("accessibility (%s): %s", b.vp.name, v)
	}
}

// decodeQR decodes the quote's QR code in the page with jsQR, drawing the
// image at the size the page shows it (scaled like image-rendering:
// pixelated), and returns the text it holds.
func (b *browser) decodeQR() string {
	b.t.Helper()
	src := tool(b.t, "PAYD_JSQR_JS")
	if src == "" {
		return ""
	}
	evalAs[int](b, src+";0")
	text := evalAs[string](b, `(() => {
		const img = document.getElementById("quote-qr");
		const c = document.createElement("canvas");
		const r0 = img.getBoundingClientRect();
		c.width = Math.round(r0.width); c.height = Math.round(r0.height);
		const x = c.getContext("2d");
		x.imageSmoothingEnabled = false;
		x.drawImage(img, 0, 0, c.width, c.height);
		const d = x.getImageData(0, 0, c.width, c.height);
		const r = jsQR(d.data, c.width, c.height);
		return r ? r.data : "";
	})()`)
	if text == "" {
		b.t.Fatal("the QR code did not decode")
	}
	return text
}

// chromedpWait waits until a node matching sel is visible.
func chromedpWait(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// chromedpReload reloads the page.
func chromedpReload() chromedp.Action[chromedp.Void] { return chromedp.Reload() }

// waitURL waits until the tab's address ends with suffix: a navigation
// that the page makes ends the step that is running, so each try is a
// step of its own and a failed one is tried again.
func (b *browser) waitURL(suffix string) {
	b.t.Helper()
	if !b.waitHref(`location.href.endsWith(` + strconv.Quote(suffix) + `)`) {
		b.t.Fatalf("the page did not go to …%s; it is at %s", suffix, b.location())
	}
}

// waitLeave waits until the tab's address no longer ends with suffix: a
// form that replaces the page must be seen to have left it before the
// new page's elements are waited for, or the old page's would answer.
func (b *browser) waitLeave(suffix string) {
	b.t.Helper()
	if !b.waitHref(`!location.href.endsWith(` + strconv.Quote(suffix) + `)`) {
		b.t.Fatalf("the page stayed at %s", b.location())
	}
}

// waitHref polls the JavaScript condition cond on the tab's address until
// it holds or the step's time is up.
func (b *browser) waitHref(cond string) bool {
	ctx, cancel := context.WithTimeout(b.ctx, webtest.StepTimeout)
	defer cancel()
	for ctx.Err() == nil {
		ok, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(2*time.Second)))
		if err == nil && ok {
			return true
		}
	}
	return false
}

// chromedpSendKeys types v into the node matching sel.
func chromedpSendKeys(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), v)
}

// checkNoThirdParty fails when the page loaded anything from another
// origin (the Resource Timing list holds every request of the page).
func (b *browser) checkNoThirdParty() {
	b.t.Helper()
	others := evalAs[[]string](b, `performance.getEntriesByType("resource").map(e => e.name)
		.filter(n => !n.startsWith(location.origin + "/") && !n.startsWith("data:"))`)
	if len(others) > 0 {
		b.t.Errorf("third-party requests: %v", others)
	}
}

// checkFits fails when the page is wider than the viewport, which on a
// phone means sideways scrolling.
func (b *browser) checkFits() {
	b.t.Helper()
	if w := evalAs[int](b, `document.documentElement.scrollWidth`); w > int(b.vp.width) {
		b.t.Errorf("the page is %d px wide on a %d px screen", w, b.vp.width)
	}
}
