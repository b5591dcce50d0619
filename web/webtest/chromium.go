// Package webtest starts headless Chromium for the browser tests of the
// hosted pages (web's own, and cmd/payd's end-to-end ones), with the flags
// known to work on these machines. Only tests import it.
package webtest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// StepTimeout bounds each browser step; the whole test has go test's.
const StepTimeout = 40 * time.Second

// Path finds Debian's Chromium ($PAYD_CHROMIUM first). Outside CI a
// machine without it skips the test; in CI (CI=true) that is a failure.
func Path(t testing.TB) string {
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

// Tab starts headless Chromium with the flags known to work here (no
// background networking, which this machine's closed network refuses) and
// more, and returns a tab's context, closed when t ends.
func Tab(t testing.TB, more ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.NoFirstRun)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, more...)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser without a deadline
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Run runs steps in the tab within StepTimeout and fails the test on error.
func Run(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Get runs one action that returns a value, within StepTimeout.
func Get[T any](t testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// VirtualAuthenticator gives the tab a platform authenticator that holds
// discoverable passkeys, verifies its user and answers at once: what the
// passkey tests sign up and sign in with.
func VirtualAuthenticator() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
				Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
				HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
			}})
		return chromedp.Void{}, err
	}
}

// FreePort returns a loopback port free a moment ago: passkeys need a
// public URL that names the port before the server listens on it.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
