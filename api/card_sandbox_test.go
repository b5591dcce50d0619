package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"payd"
	"payd/card/sandbox"
	"payd/chain/devnet"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

// sandboxShop is a shop whose card provider is the sandbox, delivering on
// the shop's devnet, its pages on a loopback server of their own.
type sandboxShop struct {
	*shop
	pages *httptest.Server
	http  *http.Client
}

func newSandboxShop(t *testing.T, db *store.DB) *sandboxShop {
	s := newShop(t, db)
	sb, err := sandbox.New(sandbox.Options{Store: db, Clock: s.b.clock, PublicURL: s.b.srv.opts.PublicURL,
		Deliverer: s.b.srv.opts.Devnet.(*devnet.Devnet), Log: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	// As payd serve wires it: the page tells the server at once.
	sb.Notify = func(ctx context.Context, session string) {
		if err := s.b.srv.PollCard(ctx, session); err != nil {
			t.Errorf("PollCard(%s): %v", session, err)
		}
	}
	s.b.srv.opts.Card = sb
	s.loops = append(s.loops, watch.NewCardPoller(db, sb, s.b.clock, s.b.srv.log, watch.Options{Events: s.b.srv}).RunOnce)
	pages := httptest.NewServer(sb.Handler())
	t.Cleanup(pages.Close)
	return &sandboxShop{shop: s, pages: pages,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// open makes a payment of 100.00 USD and its card checkout delivering
// USDC on polygon; it returns the payment and checkout ids.
func (s *sandboxShop) open() (string, string) {
	s.t.Helper()
	p := s.payment(10_000, nil)
	chk := s.c.data(s.checkoutReq("payment_id", p["id"].(string), "USDC", "polygon",
		map[string]any{"rail": "card", "email": "ada@example.com"}), 201)
	return p["id"].(string), chk["id"].(string)
}

// route posts to one of a card checkout's routes for route n.
func (s *sandboxShop) route(cid, action string, n int) map[string]any {
	s.t.Helper()
	return s.c.data(request{method: "POST", path: "/checkouts/" + cid + "/card/" + action,
		body: jsonBody(map[string]any{"route": n}), header: s.idem()}, 200)
}

// goPay opens route n's sandbox session and returns its page's path.
func (s *sandboxShop) goPay(cid string, n int) string {
	s.t.Helper()
	card := s.route(cid, "session", n)["card"].(map[string]any)
	u, _ := card["provider_url"].(string)
	path, ok := strings.CutPrefix(u, "http://payd.test"+sandbox.PagePath)
	if !ok || !strings.HasPrefix(path, "cs_") {
		s.t.Fatalf("provider_url = %v", card["provider_url"])
	}
	return sandbox.PagePath + path
}

// submit posts a form to a sandbox page over HTTP and returns the status
// and the Location it redirects to.
func (s *sandboxShop) submit(path string, form url.Values) (int, string) {
	s.t.Helper()
	res, err := s.http.PostForm(s.pages.URL+path, form)
	if err != nil {
		s.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

// pay submits a card number and expects to be sent back to the checkout.
func (s *sandboxShop) pay(cid, path, number string) {
	s.t.Helper()
	code, loc := s.submit(path, url.Values{"number": {number}, "expiry": {"12/34"}, "cvc": {"123"}, "name": {"Ada"}})
	if code != http.StatusSeeOther || !strings.HasSuffix(loc, "?checkout="+cid) {
		s.t.Fatalf("paying with %s: %d %q", number, code, loc)
	}
}

// card is the checkout's card attempt as the API shows it now.
func (s *sandboxShop) card(cid string) (map[string]any, map[string]any) {
	s.t.Helper()
	chk := s.getCheckout(cid)
	return chk, chk["card"].(map[string]any)
}

// wantCard fails unless the checkout's card attempt has these fields.
func (s *sandboxShop) wantCard(cid string, want map[string]any) map[string]any {
	s.t.Helper()
	chk, card := s.card(cid)
	for k, v := range want {
		if card[k] != v {
			s.t.Fatalf("card.%s = %v, want %v (checkout %v)", k, card[k], v, chk)
		}
	}
	return chk
}

// settle mines the delivery's confirmations and checks that the payment
// succeeded at 300 bps and the coin reached the wallet.
func (s *sandboxShop) settle(pid, cid, session string, before string) {
	s.t.Helper()
	chk := s.wantCard(cid, map[string]any{"status": "delivered", "brand": "visa", "last4": "4242", "country": "US",
		"provider_reference": session})
	if chk["card"].(map[string]any)["tx_hash"] == nil || chk["status"] != "processing" {
		s.t.Fatalf("delivered checkout = %v", chk)
	}
	s.mine("polygon", 3)
	pay := s.getPayment(pid)
	s.wantStatus(pay, "succeeded")
	rep := pay["reporting"].(map[string]any)
	if pay["fee_rate_bps"] != 300.0 || rep["fee"] != 300.0 || rep["net"] != 9700.0 ||
		pay["settlement"].(map[string]any)["amount"] != "97.00" {
		s.t.Fatalf("payment = %v", pay)
	}
	var moves []string // the card_updated entries of the last route, in order
	for _, e := range pay["events"].([]any) {
		if e := e.(map[string]any); e["type"] == "card_updated" {
			if d := e["data"].(map[string]any); d["provider_reference"] == session || d["status"] == "awaiting_payment" {
				moves = append(moves, d["status"].(string))
			}
		}
	}
	if !slices.Contains(moves, "processing") || moves[len(moves)-1] != "delivered" {
		s.t.Fatalf("card_updated entries %v (payment %v)", moves, pay)
	}
	m := pay["method"].(map[string]any)["card"].(map[string]any)
	if m["provider"] != "sandbox" || m["last4"] != "4242" || m["provider_reference"] != session {
		s.t.Fatalf("method.card = %v", m)
	}
	if after := s.holding("USDC", "polygon").String(); after != addCoins(s.t, before, "97.00") {
		s.t.Fatalf("USDC holdings went from %s to %s", before, after)
	}
}

// sessionOf is a page path's session id.
func sessionOf(path string) string { return strings.TrimPrefix(path, sandbox.PagePath) }

// TestCardSandbox drives every test card of the sandbox provider through
// the API and the sandbox's pages over HTTP, on both databases, to the
// coin in the wallet.
func TestCardSandbox(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newSandboxShop(t, db)
		t.Run("Pays", func(t *testing.T) {
			before := s.holding("USDC", "polygon").String()
			pid, cid := s.open()
			page := s.goPay(cid, 1)
			s.pay(cid, page, "4242 4242 4242 4242")
			s.settle(pid, cid, sessionOf(page), before)
		})
		t.Run("DeclineRetryPay", func(t *testing.T) {
			before := s.holding("USDC", "polygon").String()
			pid, cid := s.open()
			page := s.goPay(cid, 1)
			s.pay(cid, page, "4000000000000002")
			chk := s.wantCard(cid, map[string]any{"status": "declined", "decline_code": "card_declined", "routes_left": 2.0,
				"last4": "0002"})
			if chk["status"] != "open" {
				t.Fatalf("declined checkout = %v", chk)
			}
			s.route(cid, "retry", 1)
			page = s.goPay(cid, 2)
			s.pay(cid, page, "4242424242424242")
			s.settle(pid, cid, sessionOf(page), before)
		})
		t.Run("InsufficientFunds", func(t *testing.T) {
			_, cid := s.open()
			s.pay(cid, s.goPay(cid, 1), "4000000000009995")
			s.wantCard(cid, map[string]any{"status": "declined", "decline_code": "insufficient_funds"})
		})
		t.Run("ChallengeComplete", func(t *testing.T) {
			before := s.holding("USDC", "polygon").String()
			pid, cid := s.open()
			page := s.goPay(cid, 1)
			if code, loc := s.submit(page, url.Values{"number": {"4000000000003220"}}); code != 303 || loc != page {
				t.Fatalf("challenge card: %d %q", code, loc)
			}
			s.wantCard(cid, map[string]any{"status": "challenge"})
			if code, loc := s.submit(page+"/challenge", url.Values{"result": {"complete"}}); code != 303 ||
				!strings.HasSuffix(loc, "?checkout="+cid) {
				t.Fatalf("complete: %d %q", code, loc)
			}
			s.wantCard(cid, map[string]any{"status": "delivered", "last4": "3220", "brand": "visa",
				"provider_reference": sessionOf(page)})
			s.mine("polygon", 3)
			pay := s.getPayment(pid)
			s.wantStatus(pay, "succeeded")
			if after := s.holding("USDC", "polygon").String(); after != addCoins(t, before, "97.00") {
				t.Fatalf("USDC holdings went from %s to %s", before, after)
			}
		})
		t.Run("ChallengeFail", func(t *testing.T) {
			_, cid := s.open()
			page := s.goPay(cid, 1)
			s.submit(page, url.Values{"number": {"4000000000003220"}})
			s.submit(page+"/challenge", url.Values{"result": {"fail"}})
			s.wantCard(cid, map[string]any{"status": "declined", "decline_code": "challenge_failed"})
		})
		t.Run("Delayed", func(t *testing.T) {
			before := s.holding("USDC", "polygon").String()
			pid, cid := s.open()
			page := s.goPay(cid, 1)
			s.pay(cid, page, "4000000000000077")
			s.wantCard(cid, map[string]any{"status": "processing", "last4": "0077", "tx_hash": nil})
			s.advance(29) // the poller runs: not due yet
			s.wantCard(cid, map[string]any{"status": "processing", "tx_hash": nil})
			s.advance(1) // due: the poll delivers
			s.wantCard(cid, map[string]any{"status": "delivered"})
			s.mine("polygon", 3)
			s.wantStatus(s.getPayment(pid), "succeeded")
			if after := s.holding("USDC", "polygon").String(); after != addCoins(t, before, "97.00") {
				t.Fatalf("USDC holdings went from %s to %s", before, after)
			}
		})
		t.Run("UnknownNumber", func(t *testing.T) {
			pid, cid := s.open()
			page := s.goPay(cid, 1)
			events := len(s.getPayment(pid)["events"].([]any))
			for _, n := range []string{"5555555555554444", "4242424242424241", "1234", ""} {
				if code, _ := s.submit(page, url.Values{"number": {n}}); code != http.StatusUnprocessableEntity {
					t.Fatalf("number %q: %d", n, code)
				}
			}
			s.runLoops()
			s.wantCard(cid, map[string]any{"status": "awaiting_payment", "last4": nil})
			if got := len(s.getPayment(pid)["events"].([]any)); got != events {
				t.Fatalf("events went from %d to %d", events, got)
			}
			s.pay(cid, page, "4242424242424242") // the page still takes a test card
			s.wantCard(cid, map[string]any{"status": "delivered"})
		})
		t.Run("Solana", func(t *testing.T) {
			// Deposits on solana share an address and differ by their
			// Solana Pay reference, which the delivery carries.
			before := s.holding("USDC", "solana").String()
			p := s.payment(10_000, nil)
			chk := s.c.data(s.checkoutReq("payment_id", p["id"].(string), "USDC", "solana",
				map[string]any{"rail": "card", "email": "ada@example.com"}), 201)
			cid := chk["id"].(string)
			s.pay(cid, s.goPay(cid, 1), "4242424242424242")
			s.wantCard(cid, map[string]any{"status": "delivered"})
			s.mine("solana", 3)
			s.wantStatus(s.getPayment(p["id"].(string)), "succeeded")
			if after := s.holding("USDC", "solana").String(); after != addCoins(t, before, "97.00") {
				t.Fatalf("USDC holdings on solana went from %s to %s", before, after)
			}
		})
		t.Run("PausedCard", func(t *testing.T) {
			ctx := context.Background()
			p := s.payment(10_000, nil)
			must(t, db.SetPause(ctx, payd.Pause{Name: payd.PauseCard, PausedAt: s.b.clock.Now()}))
			s.advance(2)
			s.c.call(s.checkoutReq("payment_id", p["id"].(string), "USDC", "polygon",
				map[string]any{"rail": "card", "email": "ada@example.com"}), 503, "temporarily_unavailable")
			must(t, db.DeletePause(ctx, payd.PauseCard))
			s.advance(2)
			s.c.data(s.checkoutReq("payment_id", p["id"].(string), "USDC", "polygon",
				map[string]any{"rail": "card", "email": "ada@example.com"}), 201)
		})
	})
}

// addCoins is a + b, decimal strings of USDC.
func addCoins(t *testing.T, a, b string) string {
	t.Helper()
	x, err := money.ParseCoinAmount(money.USDC, a)
	must(t, err)
	y, err := money.ParseCoinAmount(money.USDC, b)
	must(t, err)
	return x.Add(y).String()
}
