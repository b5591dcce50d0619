package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// stepUpIfAsked answers the dashboard's password question when a change
// asks for it (the session's proof is older than 15 minutes).
func (m *merchant) stepUpIfAsked() {
	m.t.Helper()
	if m.text("main h1") == "Confirm it is you" {
		m.fill("#stepup-password", m.pw)
		m.submit(`#stepup-form button[type="submit"]`)
	}
}

// pageHTML is the page's whole markup.
func (m *merchant) pageHTML() string {
	m.t.Helper()
	return evalAs[string](m.browser, `document.documentElement.outerHTML`)
}

// TestDashboardAPIKeys makes a restricted key on the Developers page: its
// secret is shown once and does exactly what its permissions say; rolling
// shows a new secret while the old one works on for its overlap;
// revoking ends a key at once.
func TestDashboardAPIKeys(t *testing.T) {
	m := newMerchant(t, desktop)
	m.visit("/")
	m.click(`nav.side a[href$="/developers"]`)
	m.run(chromedpWait("#key-form"))
	if got := m.text("main h1"); got != "API keys" {
		t.Fatalf("developers heading %q", got)
	}
	m.review("api-keys")

	m.fill("#key-name", "Shop server")
	m.click("#kind-restricted")
	m.click("#perm-links-write")
	m.click("#perm-payments-read")
	m.submit(`#key-form button[type="submit"]`)
	m.stepUpIfAsked()
	secret := m.text("#secret-value")
	if !strings.HasPrefix(secret, "rk_") {
		t.Fatalf("secret shown %q", secret)
	}
	if got := evalAs[string](m.browser, `document.querySelector("#secret button[data-copy]").dataset.copy`); got != secret {
		t.Fatalf("copy button copies %q", got)
	}
	m.review("api-key-created")

	// The key does what it may and nothing else.
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/links", nil, 200},
		{"POST", "/links", map[string]any{"name": "Tea", "amount": 500, "currency": "USD"}, 201},
		{"GET", "/payments", nil, 200},
		{"GET", "/customers", nil, 403},
		{"GET", "/wallet", nil, 403},
	} {
		if got, b := m.s.call(c.method, c.path, secret, c.body); got != c.want {
			t.Fatalf("%s %s with the new key: %d, want %d: %s", c.method, c.path, got, c.want, b)
		}
	}

	// Never shown again.
	m.visit("/developers")
	if strings.Contains(m.pageHTML(), secret) {
		t.Fatal("the secret is shown again on the keys page")
	}
	row := `#keys tr:has(a[href*="/developers/keys/"]):first-child`
	if got := m.text(row); !strings.Contains(got, "Shop server") || !strings.Contains(got, "Payments: read") ||
		!strings.Contains(got, "Payment links: write") || !strings.Contains(got, "Active") {
		t.Fatalf("new key's row: %q", got)
	}
	m.click(row + ` a`)
	m.run(chromedpWait("#roll-form"))
	keyPage := m.location()
	if strings.Contains(m.pageHTML(), secret) {
		t.Fatal("the secret is shown again on the key's page")
	}
	m.review("api-key")
	m.fill("#key-name", "Shop server (EU)")
	m.submit(`#rename-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("main h1"); got != "Shop server (EU)" || m.text("#flash") != "The key is renamed." {
		t.Fatalf("after renaming: %q, %q", got, m.text("#flash"))
	}

	// Roll, 16 minutes after signing in: the password is asked again
	// first. A new secret, shown once; the old one works for 24 hours.
	m.s.advance(16 * 60)
	m.submit(`#roll-form button[type="submit"]`)
	if got := m.text("main h1"); got != "Confirm it is you" {
		t.Fatalf("rolling a key asked no password: %q", got)
	}
	m.review("api-key-stepup")
	m.stepUpIfAsked()
	rolled := m.text("#secret-value")
	if !strings.HasPrefix(rolled, "rk_") || rolled == secret {
		t.Fatalf("rolled secret %q", rolled)
	}
	if got := m.text("#old-key"); !strings.Contains(got, "keeps working until") {
		t.Fatalf("old key notice %q", got)
	}
	m.review("api-key-rolled")
	for _, k := range []string{secret, rolled} {
		if got, b := m.s.call("GET", "/links", k, nil); got != 200 {
			t.Fatalf("after the roll: %d %s", got, b)
		}
	}

	// Revoke the old one: it stops at once; the new one works on.
	m.open(keyPage)
	m.run(chromedpWait("#revoke-form"))
	if got := m.text("#key-state"); !strings.HasPrefix(got, "Rolled, works until") {
		t.Fatalf("rolled key state %q", got)
	}
	m.click("#revoke-confirm")
	m.submit(`#revoke-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The key is revoked: it no longer works." {
		t.Fatalf("flash %q", got)
	}
	if got, _ := m.s.call("GET", "/links", secret, nil); got != 401 {
		t.Fatalf("revoked key: %d", got)
	}
	if got, _ := m.s.call("GET", "/links", rolled, nil); got != 200 {
		t.Fatalf("rolled key after revoking the old one: %d", got)
	}
	if got := m.text("#keys"); !strings.Contains(got, "Ended") {
		t.Fatalf("keys after revoking: %q", got)
	}
	m.review("api-keys-after")
}

// hookReceiver is a local webhook endpoint that answers 500 until told
// otherwise, and keeps what it received.
type hookReceiver struct {
	*httptest.Server
	ok       atomic.Bool
	mu       sync.Mutex
	received []http.Header
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		h.received = append(h.received, r.Header.Clone())
		h.mu.Unlock()
		if !h.ok.Load() {
			http.Error(w, "not today", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("thanks"))
	}))
	t.Cleanup(h.Close)
	return h
}

// TestDashboardWebhooks adds an endpoint that fails, sees the failed
// delivery with its attempt in the log and the endpoint marked failing,
// fixes the endpoint and resends, then turns it off, rotates its secret
// and deletes it.
func TestDashboardWebhooks(t *testing.T) {
	m := newMerchant(t, desktop)
	hook := newHookReceiver(t)
	m.visit("/developers")
	m.click(`nav.subnav a[href$="/developers/webhooks"]`)
	m.run(chromedpWait("#hook-form"))
	m.review("webhooks-empty")

	// No event chosen: refused beside the form, what was typed kept.
	m.fill("#hook-url", hook.URL+"/payd")
	m.submit(`#hook-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#form-error"); got != "Choose the events to send, or every event." {
		t.Fatalf("refusal %q", got)
	}
	if got := evalAs[string](m.browser, `document.getElementById("hook-url").value`); got != hook.URL+"/payd" {
		t.Fatalf("URL after the refusal %q", got)
	}
	m.review("webhooks-refused")
	m.fill("#hook-desc", "Order system")
	m.click("#event-payment-succeeded")
	m.click("#event-link-created")
	m.submit(`#hook-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#secret-value"); !strings.HasPrefix(got, "whsec_") {
		t.Fatalf("signing secret shown %q", got)
	}
	hookPage := strings.TrimSuffix(evalAs[string](m.browser, `document.getElementById("test-form").action`), "/test")
	m.review("webhook-created")

	// A test event meets the failing endpoint.
	m.submit(`#test-form button[type="submit"]`)
	if got := m.text("#delivery-status"); !strings.Contains(got, "failed") {
		t.Fatalf("test delivery status %q", got)
	}
	if got := m.text("#attempts tbody"); !strings.Contains(got, "HTTP 500") {
		t.Fatalf("attempts %q", got)
	}
	if got := m.text("#payload"); !strings.Contains(got, `"type": "payment.succeeded"`) {
		t.Fatalf("payload %q", got)
	}
	if got := m.text("#headers"); !strings.Contains(strings.ToLower(got), "webhook-signature") {
		t.Fatalf("request headers %q", got)
	}
	delivery := m.location()
	m.review("delivery-failed")

	// The endpoint shows it is failing, on its page and in the list.
	m.open(hookPage)
	m.run(chromedpWait("#failing"))
	if got := m.text("#deliveries"); !strings.Contains(got, "failed") || !strings.Contains(got, "HTTP 500") {
		t.Fatalf("delivery log %q", got)
	}
	m.review("webhook-failing")
	m.visit("/developers/webhooks")
	if got := m.text("#hooks"); !strings.Contains(got, "Failing") {
		t.Fatalf("endpoint list %q", got)
	}
	m.review("webhooks")

	// Fixed, resent, delivered.
	hook.ok.Store(true)
	m.open(delivery)
	m.run(chromedpWait("#resend-form"))
	m.submit(`#resend-form button[type="submit"]`)
	if got := m.text("#flash"); got != "Resent: the endpoint answered with success." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("#delivery-status"); !strings.Contains(got, "succeeded") {
		t.Fatalf("status after resend %q", got)
	}
	if n := evalAs[int](m.browser, `document.querySelectorAll("#attempts tbody tr").length`); n != 2 {
		t.Fatalf("%d attempts after the resend", n)
	}
	if got := m.text("#attempts tbody tr:last-child"); !strings.Contains(got, "HTTP 200") || !strings.Contains(got, "manual") {
		t.Fatalf("second attempt %q", got)
	}
	m.review("delivery-resent")
	hook.mu.Lock()
	if len(hook.received) != 2 || hook.received[1].Get("Webhook-Signature") == "" {
		t.Fatalf("the endpoint received %d requests: %v", len(hook.received), hook.received)
	}
	hook.mu.Unlock()
	m.open(hookPage)
	m.run(chromedpWait("#hook-health"))
	if got := m.text("#hook-health"); got != "Delivering" {
		t.Fatalf("health after the resend %q", got)
	}

	// Off and on, a new secret, and gone.
	m.submit(`#disable-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#hook-state"); !strings.HasPrefix(got, "Off") {
		t.Fatalf("state after turning off %q", got)
	}
	m.submit(`#enable-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#hook-state"); !strings.HasPrefix(got, "On") {
		t.Fatalf("state after turning on %q", got)
	}
	confirmAll(m)
	m.submit(`#rotate-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#secret-value"); !strings.HasPrefix(got, "whsec_") {
		t.Fatalf("rotated secret %q", got)
	}
	m.review("webhook-rotated")
	m.open(hookPage)
	m.run(chromedpWait("#delete-form"))
	m.click("#delete-confirm")
	m.submit(`#delete-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#flash"); got != "The endpoint is deleted." {
		t.Fatalf("flash %q", got)
	}
	if n := evalAs[int](m.browser, `document.querySelectorAll("#hooks").length`); n != 0 {
		t.Fatal("the deleted endpoint is still listed")
	}
}

// TestDashboardWallet shows the generated wallet's networks and, after a
// paid payment, its holdings and their value; a business without a wallet
// is told how to attach one.
func TestDashboardWallet(t *testing.T) {
	m := newMerchant(t, desktop)
	s := m.s
	pay := s.payment(map[string]any{"amount": 1250})
	chk := s.must("POST", "/checkouts", "", map[string]any{"payment_id": pay["id"], "rail": "crypto", "asset": "USDC", "network": "polygon"},
		"Idempotency-Key", "wallet-test-1")
	s.send(chk, chk["crypto"].(map[string]any)["amount"].(string))
	required := int(chk["confirmations"].(map[string]any)["required"].(float64))
	s.mine("polygon", required)
	s.waitPayment(pay["id"].(string), "succeeded")

	m.visit("/")
	m.click(`nav.side a[href$="/wallet"]`)
	m.run(chromedpWait("#holdings"))
	if got := m.text("main h1"); got != "Wallet" {
		t.Fatalf("wallet heading %q", got)
	}
	w := s.must("GET", "/wallet", s.key, nil)
	for _, n := range []string{"Bitcoin", "Ethereum", "Polygon", "Solana", "Tron"} {
		if got := m.text("#net-" + n); got != n {
			t.Fatalf("network %s heading %q", n, got)
		}
	}
	page := m.pageHTML()
	for n, x := range w["networks"].(map[string]any) {
		addr := x.(map[string]any)["first_address"].(string)
		if !strings.Contains(page, addr) {
			t.Fatalf("the %s first address %s is not shown", n, addr)
		}
	}
	total := int(w["total_usd"].(float64))
	if total == 0 {
		t.Fatal("the paid payment left no holdings")
	}
	want := fmt.Sprintf("%d.%02d USD", total/100, total%100)
	if got := m.text("#wallet-total"); got != want {
		t.Fatalf("total %q, want %q", got, want)
	}
	if got := m.text("#holdings"); !strings.Contains(got, "USDC") || !strings.Contains(got, "Polygon") {
		t.Fatalf("holdings %q", got)
	}
	m.review("wallet")

	// A business without a wallet.
	var biz struct {
		BusinessID string `json:"business_id"`
	}
	if err := json.Unmarshal(s.cli("business", "create", "--name", "Bare Shop", "--email", "owner@example.com", "--json"), &biz); err != nil {
		t.Fatal(err)
	}
	s.cli("users", "add", "--email", m.email, "--business", biz.BusinessID, "--role", "owner")
	m.open(s.origin + "/dashboard/" + biz.BusinessID + "/wallet")
	m.run(chromedpWait("#wallet-form"))
	m.review("wallet-none")
	// Ada's Books' key is refused: one key, one business.
	zpub := w["networks"].(map[string]any)["bitcoin"].(map[string]any)["account_key"].(string)
	m.fill("#key-bitcoin", zpub)
	m.submit(`#wallet-form button[type="submit"]`)
	m.stepUpIfAsked()
	if got := m.text("#form-error"); got == "" || evalAs[string](m.browser, `document.getElementById("key-bitcoin").getAttribute("aria-invalid")`) != "true" {
		t.Fatalf("refusal %q", got)
	}
	m.review("wallet-refused")
}
