package web_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The dashboard's browser tests: one payd serve --dev per test, a business
// made with the command line and its owner with `payd users create`,
// signed in through the sign-in page in Chromium. Each page a test visits
// is reviewed (review): axe-core in both themes with no violation of any
// impact, no console error, no sideways scrolling, and screenshots at 390
// and 1280 px in both themes ($PAYD_WEB_ARTIFACTS keeps them).

// ownerPassword is the owner's password in the dashboard tests.
const ownerPassword = "correct horse battery staple 9"

// merchant is a person signed in to the dashboard in a Chromium tab.
type merchant struct {
	*browser
	s      *paydServer
	biz    string // the business's ID
	email  string
	pw     string
	mu     sync.Mutex
	errors []string // console errors, exceptions and failed loads seen so far
}

// newMerchant starts payd, makes the business's owner and signs them in
// at viewport vp.
func newMerchant(t *testing.T, vp viewport) *merchant {
	t.Helper()
	return newMerchantOn(t, vp, startPayd(t))
}

// newMerchantOn is newMerchant on a payd already started.
func newMerchantOn(t *testing.T, vp viewport, s *paydServer) *merchant {
	t.Helper()
	m := &merchant{browser: newBrowser(t, vp), s: s, biz: s.biz["business_id"].(string),
		email: "ada@example.com", pw: ownerPassword}
	s.cliIn(m.pw+"\n", "users", "create", "--email", m.email, "--name", "Ada Lovelace", "--password-stdin",
		"--business", m.biz, "--role", "owner")
	m.watchConsole()
	m.signIn(m.email, m.pw)
	return m
}

// cliIn runs a payd command on the server's database with stdin.
func (s *paydServer) cliIn(stdin string, args ...string) []byte {
	s.t.Helper()
	args = append(args, "--database", s.db)
	var out, errb bytes.Buffer
	cmd := exec.Command(s.bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("payd %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// watchConsole keeps every console error, uncaught exception and browser
// log error (a blocked load, a CSP violation) the tab shows.
func (m *merchant) watchConsole() {
	err := chromedp.Listen(m.ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				msg = "console: " + strings.Join(parts, " ")
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			// A refused form's page answers with the refusal's status
			// (400, 403, 429) on purpose; the browser logs that as a
			// failed load of the document, which is not a fault. Any
			// other failed load (a script, a style, an image) is.
			document := e.Entry.Source == cdplog.EntrySourceNetwork && strings.Contains(e.Entry.URL, "/dashboard/")
			if e.Entry.Level == cdplog.EntryLevelError && !document {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			m.mu.Lock()
			m.errors = append(m.errors, msg)
			m.mu.Unlock()
		}
	})
	if err != nil {
		m.t.Fatal(err)
	}
}

// checkConsole fails on any console error seen since the last check.
func (m *merchant) checkConsole() {
	m.t.Helper()
	m.mu.Lock()
	errs := m.errors
	m.errors = nil
	m.mu.Unlock()
	for _, e := range errs {
		m.t.Errorf("browser error at %s: %s", m.location(), e)
	}
}

// signIn signs in through the sign-in page.
func (m *merchant) signIn(email, pw string) {
	m.t.Helper()
	m.open(m.s.origin + "/dashboard/sign-in")
	m.fill("#email", email)
	m.fill("#password", pw)
	m.click(`#signin-form button[type="submit"]`)
	m.waitLeave("/dashboard/sign-in")
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// fill replaces the value of the input matching sel with v.
func (m *merchant) fill(sel, v string) {
	m.t.Helper()
	evalAs[string](m.browser, `document.querySelector(`+strconv.Quote(sel)+`).value = ""`)
	m.run(
		chromedp.SendKeys(chromedp.CSS(sel), v))
}

// visit opens a page of the business (rest after /dashboard/{biz}) and
// waits for its heading.
func (m *merchant) visit(rest string) {
	m.t.Helper()
	m.open(m.s.origin + "/dashboard/" + m.biz + rest)
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// submit clicks the submit button matching sel, which leaves the page
// (a form post and its redirect), and waits for the next page's heading.
func (m *merchant) submit(sel string) {
	m.t.Helper()
	evalAs[string](m.browser, `window.__left = "no"`)
	m.click(sel)
	if !m.waitHref(`window.__left === undefined && document.readyState === "complete"`) {
		m.t.Fatalf("the form at %s did not go anywhere", m.location())
	}
	m.run(chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// theme sets the prefers-color-scheme the tab reports.
func (m *merchant) theme(scheme string) {
	m.t.Helper()
	m.run(func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return chromedp.Void{}, err
	})
}

// viewportOf makes the tab vp's size.
func (m *merchant) viewportOf(vp viewport) {
	m.t.Helper()
	m.run(chromedp.EmulateViewport(vp.width, vp.height, func(p *emulation.SetDeviceMetricsOverrideParams, tp *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = vp.mobile
		tp.Enabled = vp.mobile
	}))
	m.vp = vp
}

// review checks the page as it stands: at 390 and 1280 px, in the light
// and the dark theme, axe-core finds no violation of any impact, nothing
// is wider than the screen, and a screenshot is written; and no console
// error was seen. The tab returns to its own viewport after.
func (m *merchant) review(name string) {
	m.t.Helper()
	own := m.vp
	for _, vp := range []viewport{phone, desktop} {
		m.viewportOf(vp)
		for _, scheme := range []string{"light", "dark"} {
			m.theme(scheme)
			m.checkFits()
			m.checkAxe()
			m.screenshot(fmt.Sprintf("%s-%d-%s", name, vp.width, scheme))
		}
	}
	m.theme("")
	m.viewportOf(own)
	m.checkConsole()
}

// checkAxe runs axe-core and fails on any violation, whatever its impact.
func (m *merchant) checkAxe() {
	m.t.Helper()
	src := tool(m.t, "PAYD_AXE_JS")
	if src == "" {
		return
	}
	if !evalAs[bool](m.browser, `typeof axe !== "undefined"`) {
		evalAs[int](m.browser, src+";0")
	}
	found := evalAs[[]string](m.browser, `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.map(n => n.target.join(" ")).join(", ")))`)
	for _, v := range found {
		m.t.Errorf("accessibility (%s, %d px): %s", m.location(), m.vp.width, v)
	}
}
