package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"payd/clock"
	"payd/store/storetest"
)

// startPaydOn starts payd serve --dev on the database dsn (the sandbox
// card provider is its default) with a business and a wallet.
func startPaydOn(t *testing.T, dsn string) *paydServer {
	t.Helper()
	s := &paydServer{t: t, bin: paydBinary(t), db: dsn}
	s.serve("--dev")
	s.biz = s.newBusiness("Ada's Books")
	s.key = s.biz["secret_key"].(string)
	return s
}

// TestCardSandboxInBrowser walks every test card of the contract through
// the hosted page and the sandbox's card page of a real `payd serve --dev`,
// on SQLite and PostgreSQL. One checkout: declined, Try again, insufficient
// funds, Try again, paid with 4242 at once. Another: the challenge step
// failed, Try again, then the card that pays after 30 seconds of the
// service clock: charged and on its way until the test clock moves, then
// delivered on the devnet, confirmed and paid. Each payment carries the
// 300 bps fee and its net, and the coin is in the wallet.
func TestCardSandboxInBrowser(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLiteDSN}, {"postgres", storetest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			s := startPaydOn(t, db.dsn(t))
			link := s.link(map[string]any{"amount": 5000})
			m := customer(t, s, desktop)

			id := sandboxPay(t, m, s, link["url"].(string), "4000 0000 0000 0002")
			m.waitState("card_declined")
			if k := s.cardOf(id); k["decline_code"] != "card_declined" || k["route"] != 1.0 {
				t.Fatalf("after the declined card: %s", jsonOf(k))
			}
			m.review("sandbox-declined")
			sandboxRetry(t, m, s, "4000000000009995")
			m.waitState("card_declined")
			if got := m.text(`#card-declined`); !strings.Contains(got, "insufficient funds") {
				t.Fatalf("insufficient funds shown as %q", got)
			}
			sandboxRetry(t, m, s, "4242 4242 4242 4242")
			k := waitCard(t, s, id, "delivered")
			if k["route"] != 3.0 || k["last4"] != "4242" || k["brand"] != "visa" {
				t.Fatalf("the third route: %s", jsonOf(k))
			}
			s.mine(k["network"].(string), s.required(id))
			m.waitState("succeeded")
			checkCardPaid(t, s, id, k)

			id = sandboxPay(t, m, s, link["url"].(string), "4000000000003220")
			m.run(chromedpWait(`button[value=fail]`))
			m.review("sandbox-challenge")
			m.click(`button[value=fail]`)
			m.waitState("card_declined")
			if k := s.cardOf(id); k["decline_code"] != "challenge_failed" {
				t.Fatalf("after the failed challenge: %s", jsonOf(k))
			}
			sandboxRetry(t, m, s, "4000000000000077")
			m.waitState("card_processing")
			if k := s.cardOf(id); k["status"] != "processing" || k["route"] != 2.0 || k["last4"] != "0077" {
				t.Fatalf("after the delayed card: %s", jsonOf(k))
			}
			s.advance(31)
			k = waitCard(t, s, id, "delivered")
			s.mine(k["network"].(string), s.required(id))
			m.waitState("succeeded")
			m.review("sandbox-paid")
			checkCardPaid(t, s, id, k)
		})
	}
}

// sandboxPay opens the page at url, chooses card and pays with number on
// the sandbox's card page; it returns the checkout's id, read from the
// sandbox page's address-independent source: the newest payment's.
func sandboxPay(t *testing.T, m *merchant, s *paydServer, url, number string) string {
	t.Helper()
	m.open(url)
	m.run(chromedpWait(`#pay-card`))
	m.run(chromedpSendKeys(`#card-email`, "grace@example.com"))
	m.click(`#pay-card`)
	onSandbox(t, m, s)
	id := s.newestCheckout()
	sandboxSubmit(t, m, number)
	return id
}

// sandboxRetry clicks Try again and pays the new route with number.
func sandboxRetry(t *testing.T, m *merchant, s *paydServer, number string) {
	t.Helper()
	m.click(`#card-retry`)
	onSandbox(t, m, s)
	sandboxSubmit(t, m, number)
}

// sandboxSubmit types number on the sandbox's card page and submits it.
func sandboxSubmit(t *testing.T, m *merchant, number string) {
	t.Helper()
	evalAs[string](m.browser, `window.__left = "no"`)
	m.fill(`#number`, number)
	m.click(`form button[type=submit]`)
	if !m.waitHref(`window.__left === undefined && document.readyState === "complete"`) {
		t.Fatalf("the sandbox's form did not go on; at %s", m.location())
	}
}

// newestCheckout is the checkout of the business's newest payment.
func (s *paydServer) newestCheckout() string {
	s.t.Helper()
	_, b := s.call("GET", "/payments?limit=1", s.key, nil)
	var list struct {
		Data []struct {
			CheckoutID string `json:"checkout_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || len(list.Data) != 1 {
		s.t.Fatalf("GET /payments?limit=1: %v: %s", err, b)
	}
	return list.Data[0].CheckoutID
}

// required is how many confirmations the checkout's network needs.
func (s *paydServer) required(id string) int {
	return int(s.checkout(id)["confirmations"].(map[string]any)["required"].(float64))
}

// checkCardPaid checks a card payment that succeeded: the 300 bps fee and
// its net, the settlement into the deposit, and the coin in the wallet.
func checkCardPaid(t *testing.T, s *paydServer, id string, k map[string]any) {
	t.Helper()
	chk := s.checkout(id)
	pay := s.must("GET", "/payments/"+chk["payment_id"].(string), s.key, nil)
	rep := pay["reporting"].(map[string]any)
	if pay["status"] != "succeeded" || pay["fee_rate_bps"] != 300.0 || rep["fee"] != 150.0 || rep["net"] != 4850.0 {
		t.Fatalf("payment %s", jsonOf(pay))
	}
	if st := pay["settlement"].(map[string]any); st["amount"] != k["amount"] || st["address"] != k["address"] {
		t.Fatalf("settlement %s, card %s", jsonOf(st), jsonOf(k))
	}
	w := s.must("GET", "/wallet", s.key, nil)
	for _, h := range w["holdings"].([]any) {
		h := h.(map[string]any)
		if h["asset"] == k["asset"] && h["network"] == k["network"] {
			return
		}
	}
	t.Fatalf("the wallet holds no %s on %s: %s", k["asset"], k["network"], jsonOf(w["holdings"]))
}

// onSandbox waits for the sandbox's card page.
func onSandbox(t *testing.T, m *merchant, s *paydServer) {
	t.Helper()
	if !m.waitHref(`location.href.startsWith(` + jsString(s.origin+"/sandbox/card/") + `)`) {
		t.Fatalf("not sent to the sandbox's card page; at %s", m.location())
	}
	m.run(chromedpWait(`#number`))
}

// waitCard waits until the checkout's card has status, and returns it.
func waitCard(t *testing.T, s *paydServer, id, status string) map[string]any {
	t.Helper()
	clk := clock.Real{}
	for end := clk.Now().Add(20 * time.Second); clk.Now().Before(end); <-clk.NewTimer(100 * time.Millisecond).C() {
		if k := s.cardOf(id); k["status"] == status {
			return k
		}
	}
	t.Fatalf("the card of %s never became %s: %s", id, status, jsonOf(s.cardOf(id)))
	return nil
}
