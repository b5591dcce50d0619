package web_test

import (
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

// TestCardSandboxInBrowser walks the contract's test cards through the
// hosted page and the sandbox's card page of a real `payd serve --dev`, on
// SQLite and PostgreSQL: a declined card, Try again, then the card that
// pays after 30 seconds of the service clock: the page says charged and on
// its way until the test clock moves, the sandbox then delivers the coin
// on the devnet, the network confirms it and the page shows it paid; the
// payment carries the 300 bps fee and its net, and the coin is in the
// wallet.
func TestCardSandboxInBrowser(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLiteDSN}, {"postgres", storetest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			s := startPaydOn(t, db.dsn(t))
			link := s.link(map[string]any{"amount": 5000})
			m := customer(t, s, desktop)
			m.open(link["url"].(string))
			m.run(chromedpWait(`#pay-card`))
			m.run(chromedpSendKeys(`#card-email`, "grace@example.com"))
			m.click(`#pay-card`)
			onSandbox(t, m, s)
			m.fill(`#number`, "4000 0000 0000 0002")
			m.click(`form button[type=submit]`)
			m.waitState("card_declined")
			loc := m.location()
			id := loc[strings.Index(loc, "checkout=")+len("checkout="):]
			if k := s.cardOf(id); k["decline_code"] != "card_declined" || k["route"] != 1.0 {
				t.Fatalf("after the declined card: %s", jsonOf(k))
			}
			m.review("sandbox-declined")

			m.click(`#card-retry`)
			onSandbox(t, m, s)
			m.fill(`#number`, "4000000000000077")
			m.click(`form button[type=submit]`)
			m.waitState("card_processing")
			if k := s.cardOf(id); k["status"] != "processing" || k["route"] != 2.0 || k["last4"] != "0077" {
				t.Fatalf("after the delayed card: %s", jsonOf(k))
			}
			s.advance(31)
			k := waitCard(t, s, id, "delivered")
			req := s.checkout(id)["confirmations"].(map[string]any)["required"].(float64)
			s.mine(k["network"].(string), int(req))
			m.waitState("succeeded")
			m.review("sandbox-paid")

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
			found := false
			for _, h := range w["holdings"].([]any) {
				h := h.(map[string]any)
				found = found || h["asset"] == k["asset"] && h["network"] == k["network"] && h["amount"] == k["amount"]
			}
			if !found {
				t.Fatalf("the wallet does not hold the %s %s delivered: %s", k["amount"], k["asset"], jsonOf(w["holdings"]))
			}
		})
	}
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
