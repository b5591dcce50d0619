package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

// fakeCard is a card provider in memory: the test says how each session
// stands. Its webhook is a JSON CardReport signed by the header
// Fake-Signature: ok.
type fakeCard struct {
	mu       sync.Mutex
	n        int
	sessions map[string]payd.CardReport
	started  []payd.CardSessionRequest
}

func newFakeCard() *fakeCard { return &fakeCard{sessions: map[string]payd.CardReport{}} }

func (f *fakeCard) Name() string                             { return "fake" }
func (f *fakeCard) Delivers(money.Asset, money.Network) bool { return true }
func (f *fakeCard) Limits(money.Currency, string) payd.CardLimits {
	return payd.CardLimits{}
}
func (f *fakeCard) NeedsEmail() bool { return true }

func (f *fakeCard) Start(_ context.Context, req payd.CardSessionRequest) (payd.CardSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	id := "fs_" + string(rune('a'+f.n))
	f.sessions[id] = payd.CardReport{Session: id, Status: payd.CardAwaiting}
	f.started = append(f.started, req)
	return payd.CardSession{ID: id, RedirectURL: "https://provider.test/pay/" + id}, nil
}

func (f *fakeCard) Status(_ context.Context, id string) (payd.CardReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[id], nil
}

func (f *fakeCard) set(r payd.CardReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[r.Session] = r
}

func (f *fakeCard) Webhook(h http.Header, body []byte) ([]payd.CardReport, error) {
	if h.Get("Fake-Signature") != "ok" {
		return nil, payd.Errorf(payd.ErrInvalidSignature, "bad signature")
	}
	var r payd.CardReport
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, payd.Errorf(payd.ErrInvalidJSON, "bad body")
	}
	return []payd.CardReport{r}, nil
}

// TestCardSmoke walks one card payment through the seam: open, go to the
// provider, a decline, a retry, a charge by webhook, the delivery on the
// devnet and its confirmations, on both databases.
func TestCardSmoke(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		fake := newFakeCard()
		s.b.srv.opts.Card = fake
		s.loops = append(s.loops, watch.NewCardPoller(db, fake, s.b.clock, s.b.srv.log, watch.Options{Events: s.b.srv}).RunOnce)
		p := s.payment(10_000, nil)
		id := p["id"].(string)
		chk := s.c.data(s.checkoutReq("payment_id", id, "USDC", "polygon", map[string]any{"rail": "card", "email": "a@example.com"}), 201)
		card := chk["card"].(map[string]any)
		if card["status"] != "awaiting_payment" || card["amount"] != "97.00" || card["gross_amount"] != "100.00" || chk["fee_rate_bps"] != 300.0 {
			t.Fatalf("card checkout = %v", chk)
		}
		cid := chk["id"].(string)
		route := func(path string, n int) request {
			return request{method: "POST", path: "/checkouts/" + cid + "/card/" + path,
				body: jsonBody(map[string]any{"route": n}), header: s.idem()}
		}
		got := s.c.data(route("session", 1), 200)
		if got["card"].(map[string]any)["provider_url"] != "https://provider.test/pay/fs_b" {
			t.Fatalf("after session: %v", got["card"])
		}
		fake.set(payd.CardReport{Session: "fs_b", Status: payd.CardDeclined, DeclineCode: payd.CardInsufficientFunds})
		s.runLoops()
		got = s.getCheckout(cid)
		if c := got["card"].(map[string]any); c["status"] != "declined" || c["decline_code"] != "insufficient_funds" || got["status"] != "open" {
			t.Fatalf("after the decline: %v", got)
		}
		s.c.data(route("retry", 1), 200)
		s.c.data(route("session", 2), 200)
		hook := request{method: "POST", path: "/card-providers/fake/webhook", header: map[string]string{"Fake-Signature": "ok"},
			body: jsonBody(map[string]any{"Session": "fs_c", "Status": "processing", "Brand": "visa", "Last4": "4242"})}
		for range 2 { // a replay changes nothing
			if r := s.b.do(hook); r.status != 200 {
				t.Fatalf("webhook: %d %s", r.status, r.body)
			}
		}
		got = s.getCheckout(cid)
		if got["status"] != "processing" || got["card"].(map[string]any)["last4"] != "4242" {
			t.Fatalf("after the charge: %v", got)
		}
		s.send(map[string]any{"crypto": map[string]any{"network": "polygon", "asset": "USDC", "address": got["card"].(map[string]any)["address"]}}, "97.00")
		s.mine("polygon", 3)
		pay := s.getPayment(id)
		s.wantStatus(pay, "succeeded")
		rep := pay["reporting"].(map[string]any)
		if rep["fee"] != 300.0 || rep["net"] != 9700.0 || pay["settlement"].(map[string]any)["amount"] != "97.00" ||
			pay["method"].(map[string]any)["amount"] != "100.00" {
			t.Fatalf("payment = %v", pay)
		}
	})
}
