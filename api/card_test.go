package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
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
		// Card payments in the listing filters and the metrics.
		if ids := s.c.list(s.biz.live, "/payments?rail=card", 10); len(ids) != 1 || ids[0] != id {
			t.Fatalf("GET /payments?rail=card = %v", ids)
		}
		if ids := s.c.list(s.biz.live, "/payments?rail=crypto", 10); len(ids) != 0 {
			t.Fatalf("GET /payments?rail=crypto = %v", ids)
		}
		m := s.c.data(request{method: "GET", path: "/metrics", key: s.biz.live}, 200)
		byCard := m["totals"].(map[string]any)["by_rail"].(map[string]any)["card"].(map[string]any)
		if byCard["payments"] != 1.0 || byCard["volume"].(map[string]any)["amount"] != 10000.0 ||
			m["totals"].(map[string]any)["fees"].(map[string]any)["amount"] != 300.0 {
			t.Fatalf("metrics = %v", m["totals"])
		}
	})
}

// cardShop is a shop with the in-memory provider, opening card checkouts.
type cardShop struct {
	*shop
	fake *fakeCard
}

func newCardShop(t *testing.T, db *store.DB) *cardShop {
	s := newShop(t, db)
	fake := newFakeCard()
	s.b.srv.opts.Card = fake
	s.loops = append(s.loops, watch.NewCardPoller(db, fake, s.b.clock, s.b.srv.log, watch.Options{Events: s.b.srv}).RunOnce)
	return &cardShop{shop: s, fake: fake}
}

// openCard asks for a card checkout of the payment or link.
func (s *cardShop) openCard(target, id string, extra map[string]any) request {
	body := map[string]any{"rail": "card", "email": "card@example.com", "asset": nil, "network": nil}
	for k, v := range extra {
		body[k] = v
	}
	req := s.checkoutReq(target, id, "", "", body)
	return req
}

// cardAction is POST /checkouts/{id}/card/{action} for route.
func (s *cardShop) cardAction(id, action string, route int) request {
	return request{method: "POST", path: "/checkouts/" + id + "/card/" + action,
		body: jsonBody(map[string]any{"route": route}), header: s.idem()}
}

// session goes to the provider and returns the session id it opened.
func (s *cardShop) session(id string, route int) string {
	s.t.Helper()
	got := s.c.data(s.cardAction(id, "session", route), 200)
	u := got["card"].(map[string]any)["provider_url"].(string)
	return u[len("https://provider.test/pay/"):]
}

// TestCardErrors gives every card error of spec 7.4 its test, on both
// databases, through the API.
func TestCardErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newCardShop(t, db)
		ctx := context.Background()

		// The shape and the rules of opening: email, limits, coin, pause.
		p := s.payment(5000, nil)
		pid := p["id"].(string)
		s.c.call(s.openCard("payment_id", pid, map[string]any{"email": nil}), 400, "email_required", "email")
		s.c.call(s.openCard("payment_id", s.payment(400, nil)["id"].(string), nil), 400, "amount_out_of_range")
		s.c.call(s.openCard("payment_id", s.payment(1_000_100, nil)["id"].(string), nil), 400, "amount_out_of_range")
		s.c.call(s.openCard("payment_id", pid, map[string]any{"asset": "USDC", "network": "bitcoin"}), 400, "asset_unavailable")
		s.c.call(s.openCard("payment_id", pid, map[string]any{"country": "de"}), 400, "invalid_request", "country")
		must(t, db.SetPause(ctx, payd.Pause{Name: payd.PauseCard, PausedAt: s.b.clock.Now()}))
		s.advance(2)
		s.c.call(s.openCard("payment_id", pid, nil), 503, "temporarily_unavailable")
		must(t, db.DeletePause(ctx, payd.PauseCard))
		s.advance(2)

		chk := s.c.data(s.openCard("payment_id", pid, nil), 201)
		cid := chk["id"].(string)
		if c := chk["card"].(map[string]any); c["asset"] != "USDC" || c["route"] != 1.0 || c["routes_left"] != 2.0 {
			t.Fatalf("the default coin and first route: %v", c)
		}
		// wrong_rail: crypto-only actions on a card checkout, card actions on a crypto one.
		s.c.call(request{method: "POST", path: "/checkouts/" + cid + "/claim",
			body: jsonBody(map[string]any{"tx_hash": "0x" + strings.Repeat("ab", 32)})}, 409, "wrong_rail")
		s.c.call(request{method: "POST", path: "/checkouts/" + cid + "/remainder", body: jsonBody(map[string]any{}),
			header: s.idem()}, 409, "wrong_rail")
		crypto := s.checkout("payment_id", s.payment(2500, nil)["id"].(string), "USDC", "polygon")
		s.c.call(s.cardAction(crypto["id"].(string), "session", 1), 409, "wrong_rail")
		s.c.call(s.cardAction(crypto["id"].(string), "retry", 1), 409, "wrong_rail")

		// route_in_progress: the page may still succeed.
		sess := s.session(cid, 1)
		s.c.call(s.cardAction(cid, "retry", 1), 409, "route_in_progress")
		s.c.call(s.checkoutReq("payment_id", pid, "USDC", "polygon", nil), 409, "route_in_progress")
		s.c.call(request{method: "POST", path: "/checkouts/" + cid + "/cancel", body: jsonBody(map[string]any{})}, 409, "route_in_progress")
		// The business cannot cancel the payment while the card page may still take it.
		s.c.call(request{method: "POST", path: "/payments/" + pid + "/cancel", key: s.biz.live,
			body: jsonBody(map[string]any{})}, 409, "payment_in_flight")
		s.wantStatus(s.getPayment(pid), "pending")
		// stale_route: a page showing another attempt.
		s.c.call(s.cardAction(cid, "session", 2), 409, "stale_route")
		s.c.call(s.cardAction(cid, "refresh", 2), 409, "stale_route")

		// Declines until no route is left: no_route, then checkout_failed.
		for route := 1; route <= payd.CardMaxRoutes; route++ {
			if route > 1 {
				s.c.data(s.cardAction(cid, "retry", route-1), 200)
				sess = s.session(cid, route)
			}
			s.fake.set(payd.CardReport{Session: sess, Status: payd.CardDeclined, DeclineCode: payd.CardDeclinedGeneric})
			got := s.c.data(s.cardAction(cid, "refresh", route), 200)
			if c := got["card"].(map[string]any); c["status"] != "declined" {
				t.Fatalf("route %d after its decline: %v", route, got)
			}
			if route < payd.CardMaxRoutes {
				s.c.call(s.cardAction(cid, "session", route), 409, "checkout_not_awaiting")
			}
		}
		s.c.call(s.cardAction(cid, "retry", payd.CardMaxRoutes), 409, "no_route")
		s.c.call(s.cardAction(cid, "session", payd.CardMaxRoutes), 409, "checkout_failed")
		if got := s.getCheckout(cid); got["status"] != "failed" || got["failure_code"] != "card_declined" {
			t.Fatalf("after the last decline: %v", got)
		}

		// checkout_not_retryable and checkout_not_awaiting once charged;
		// payment_paid once the coin arrived.
		chk = s.c.data(s.openCard("payment_id", pid, nil), 201)
		cid = chk["id"].(string)
		sess = s.session(cid, 1)
		s.fake.set(payd.CardReport{Session: sess, Status: payd.CardProcessing})
		s.runLoops()
		s.c.call(s.cardAction(cid, "retry", 1), 409, "checkout_not_retryable")
		s.c.call(s.cardAction(cid, "session", 1), 409, "checkout_not_awaiting")
		s.c.call(s.checkoutReq("payment_id", pid, "USDC", "polygon", nil), 409, "checkout_not_supersedable")
		s.c.call(request{method: "POST", path: "/payments/" + pid + "/cancel", key: s.biz.live,
			body: jsonBody(map[string]any{})}, 409, "payment_in_flight")
		card := s.getCheckout(cid)["card"].(map[string]any)
		s.send(map[string]any{"crypto": map[string]any{"network": card["network"], "asset": card["asset"], "address": card["address"]}}, card["amount"].(string))
		s.mine(card["network"].(string), 3)
		s.wantStatus(s.getPayment(pid), "succeeded")
		s.c.call(s.cardAction(cid, "session", 1), 409, "payment_paid")
		s.c.call(s.openCard("payment_id", pid, nil), 409, "payment_paid")

		// checkout_expired: the quote ended before the customer paid.
		p = s.payment(3000, nil)
		chk = s.c.data(s.openCard("payment_id", p["id"].(string), nil), 201)
		s.advance(16 * 60)
		s.c.call(s.cardAction(chk["id"].(string), "session", 1), 410, "checkout_expired")
		s.c.call(s.cardAction(chk["id"].(string), "retry", 1), 410, "checkout_expired")
	})
}

// TestCardWebhookAnswers checks what the provider's webhook route answers:
// a bad signature changes nothing (400 invalid_signature), a report for a
// session payd does not follow changes nothing (200), another provider's
// name is not found.
func TestCardWebhookAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newCardShop(t, db)
		p := s.payment(5000, nil)
		chk := s.c.data(s.openCard("payment_id", p["id"].(string), nil), 201)
		sess := s.session(chk["id"].(string), 1)
		hook := func(sig string, rep map[string]any) request {
			return request{method: "POST", path: "/card-providers/fake/webhook", header: map[string]string{"Fake-Signature": sig},
				body: jsonBody(rep)}
		}
		s.c.call(hook("bad", map[string]any{"Session": sess, "Status": "processing"}), 400, "invalid_signature")
		if r := s.b.do(hook("ok", map[string]any{"Session": "fs_unknown", "Status": "processing"})); r.status != 200 {
			t.Fatalf("unknown session: %d %s", r.status, r.body)
		}
		if got := s.getCheckout(chk["id"].(string)); got["status"] != "open" || got["card"].(map[string]any)["status"] != "awaiting_payment" {
			t.Fatalf("after a bad signature and an unknown session: %v", got)
		}
		r := s.b.do(request{method: "POST", path: "/card-providers/other/webhook", body: jsonBody(map[string]any{})})
		if r.status != 404 {
			t.Fatalf("another provider: %d", r.status)
		}
		// Out of order: delivered first, then the older processing changes nothing.
		for _, st := range []string{"delivered", "processing"} {
			if r := s.b.do(hook("ok", map[string]any{"Session": sess, "Status": st, "TxHash": "0xfeed"})); r.status != 200 {
				t.Fatalf("%s: %d %s", st, r.status, r.body)
			}
		}
		got := s.getPayment(p["id"].(string))
		var updates []string
		for _, e := range got["events"].([]any) {
			if m := e.(map[string]any); m["type"] == "card_updated" {
				updates = append(updates, m["data"].(map[string]any)["status"].(string))
			}
		}
		if len(updates) != 1 || updates[0] != "delivered" {
			t.Fatalf("card_updated entries = %v, want [delivered]", updates)
		}
	})
}

// noCoinCard is a provider that delivers no coin at all.
type noCoinCard struct{ *fakeCard }

func (noCoinCard) Delivers(money.Asset, money.Network) bool { return false }

// TestCardOfferNeedsACoin: a public link offers card only when the
// provider delivers some coin the business accepts.
func TestCardOfferNeedsACoin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newCardShop(t, db)
		code := s.link(2500)["code"].(string)
		pub := s.c.data(request{method: "GET", path: "/public/links/" + code}, 200)
		if len(pub["card"].([]any)) != 1 {
			t.Fatalf("with a provider that delivers: %v", pub["accepted_rails"])
		}
		s.b.srv.opts.Card = noCoinCard{s.fake}
		pub = s.c.data(request{method: "GET", path: "/public/links/" + code}, 200)
		if len(pub["card"].([]any)) != 0 || slices.Contains(pub["accepted_rails"].([]any), any("card")) {
			t.Fatalf("with a provider that delivers nothing: %v %v", pub["accepted_rails"], pub["card"])
		}
		s.c.call(s.openCard("link_code", code, nil), 400, "asset_unavailable")
	})
}
