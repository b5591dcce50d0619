package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/hd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

// shop is a business with a wallet, on a server whose loops the test
// runs by hand (runLoops), so each step is deterministic.
type shop struct {
	t      *testing.T
	b      *bundle
	c      clTest
	biz    *testBusiness
	loops  []func(context.Context) error
	n      int
	wallet hd.Wallet
}

// newShop starts a server on db with short confirmation counts, and a
// business with a fresh wallet on every network.
func newShop(t *testing.T, db *store.DB) *shop { return newShopOf(t, db, false) }

// newShopOf is newShop for a live business when live is true.
func newShopOf(t *testing.T, db *store.DB, live bool) *shop {
	b := setup(t, db)
	b.srv.opts.Confirmations = map[money.Network]int{money.Bitcoin: 2, money.Ethereum: 3, money.Polygon: 3,
		money.Solana: 3, money.Tron: 3}
	// Each checkout comes from its own address through a trusted proxy, so
	// the per-IP limit (tested on its own) never trips the other tests.
	b.srv.opts.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	s := &shop{t: t, b: b, c: clTest{t, b}, biz: b.newBusiness(live)}
	w := newHDWallet(t)
	s.wallet = w
	keys := map[string]any{}
	for _, k := range w.Keys() {
		keys[string(k.Network())] = k.String()
	}
	s.c.data(postWallet(s.biz.live, jsonBody(map[string]any{"keys": keys})), 201)
	for _, n := range b.srv.opts.Networks {
		s.loops = append(s.loops, watch.NewWatcher(db, n, b.clock, b.srv.log, watch.Options{Events: b.srv}).RunOnce)
	}
	s.loops = append(s.loops, watch.NewExpirer(db, b.clock, b.srv.log, watch.Options{Events: b.srv}).RunOnce)
	return s
}

// runLoops runs every watcher and the expirer once.
func (s *shop) runLoops() {
	s.t.Helper()
	for _, run := range s.loops {
		if err := run(context.Background()); err != nil {
			s.t.Fatal(err)
		}
	}
}

// idem returns a fresh Idempotency-Key header.
func (s *shop) idem() map[string]string {
	s.n++
	return map[string]string{"Idempotency-Key": fmt.Sprintf("k-%d", s.n)}
}

// payment creates a payment of amount USD cents.
func (s *shop) payment(amount int64, extra map[string]any) map[string]any {
	body := map[string]any{"amount": amount, "currency": "USD"}
	for k, v := range extra {
		body[k] = v
	}
	return s.c.data(payPost(s.biz.live, body), 201)
}

// checkout opens a checkout; target is link_code or payment_id.
func (s *shop) checkout(target, id, asset, network string) map[string]any {
	return s.c.data(s.checkoutReq(target, id, asset, network, nil), 201)
}

func (s *shop) checkoutReq(target, id, asset, network string, extra map[string]any) request {
	body := map[string]any{target: id, "rail": "crypto", "asset": asset, "network": network}
	for k, v := range extra {
		body[k] = v
	}
	h := s.idem()
	h["X-Forwarded-For"] = fmt.Sprintf("10.1.%d.%d", s.n/250, s.n%250)
	return request{method: "POST", path: "/checkouts", body: jsonBody(body), header: h}
}

// send pays amount of the checkout's coin to its deposit on the devnet.
func (s *shop) send(chk map[string]any, amount string) string {
	q := chk["crypto"].(map[string]any)
	body := map[string]any{"network": q["network"], "asset": q["asset"], "to": q["address"], "amount": amount}
	if ref, ok := q["reference"].(string); ok {
		body["reference"] = ref
	}
	got := s.c.data(request{method: "POST", path: "/devnet/transfers", body: jsonBody(body)}, 201)
	return got["tx_hash"].(string)
}

// mine mines count blocks on network and runs the loops.
func (s *shop) mine(network string, count int) {
	s.c.data(request{method: "POST", path: "/devnet/blocks", body: jsonBody(map[string]any{"network": network, "count": count})}, 201)
	s.runLoops()
}

// advance moves the service clock and runs the loops.
func (s *shop) advance(seconds int) {
	s.c.data(request{method: "POST", path: "/devnet/clock", body: jsonBody(map[string]any{"advance_seconds": seconds})}, 200)
	s.runLoops()
}

func (s *shop) getPayment(id string) map[string]any {
	return s.c.data(request{method: "GET", path: "/payments/" + id, key: s.biz.live}, 200)
}

func (s *shop) getCheckout(id string) map[string]any {
	return s.c.data(request{method: "GET", path: "/checkouts/" + id}, 200)
}

// history is the payment's event types, in order.
func history(p map[string]any) []string {
	var out []string
	for _, e := range p["events"].([]any) {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

func (s *shop) wantHistory(p map[string]any, want ...string) {
	s.t.Helper()
	if got := history(p); !slices.Equal(got, want) {
		s.t.Fatalf("events = %v\nwant     %v", got, want)
	}
}

func (s *shop) wantStatus(p map[string]any, status string) {
	s.t.Helper()
	if p["status"] != status {
		s.t.Fatalf("status = %v, want %s (events %v)", p["status"], status, history(p))
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestLifecycle drives every path of a crypto payment through the devnet
// routes and the real loops, on both databases.
func TestLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		t.Run("Exact", s.testExact)
		t.Run("UnderpaidThenRemainder", s.testRemainder)
		t.Run("Overpaid", s.testOverpaid)
		t.Run("ExpiredAndLate", s.testExpiredAndLate)
		t.Run("Reorg", s.testReorg)
		t.Run("ReplaceCancelClaim", s.testReplaceCancelClaim)
		t.Run("CheckoutErrors", s.testCheckoutErrors)
		t.Run("PaymentExpiry", s.testPaymentExpiry)
		t.Run("WrongCoin", s.testWrongCoin)
	})
}

// testWrongCoin: USDT sent to a USDC checkout's address pays nothing,
// but once confirmed it is in the wallet's holdings and the payment goes
// to review; the right coin then still pays the payment in full.
func (s *shop) testWrongCoin(t *testing.T) {
	before := s.holding("USDT", "ethereum")
	p := s.payment(2500, nil)
	id := p["id"].(string)
	chk := s.checkout("payment_id", id, "USDC", "ethereum")
	wrong := map[string]any{"crypto": map[string]any{"network": "ethereum", "asset": "USDT",
		"address": chk["crypto"].(map[string]any)["address"]}}
	hash := s.send(wrong, "25.00")
	s.mine("ethereum", 1)
	if got := s.getCheckout(chk["id"].(string)); got["status"] != "open" || got["crypto"].(map[string]any)["tx_hash"] != nil {
		t.Fatalf("checkout after the wrong coin = %v", got)
	}
	s.wantStatus(s.getPayment(id), "pending")
	s.mine("ethereum", 2)
	pay := s.getPayment(id)
	s.wantStatus(pay, "needs_review")
	s.wantHistory(pay, "created", "method_selected", "needs_review")
	events := pay["events"].([]any)
	if last := events[len(events)-1].(map[string]any); last["data"].(map[string]any)["tx_hash"] != hash {
		t.Fatalf("needs_review entry = %v", last)
	}
	if got := s.getCheckout(chk["id"].(string)); got["review_reason"] != payd.ReviewWrongAsset {
		t.Fatalf("checkout review_reason = %v", got["review_reason"])
	}
	if after := s.holding("USDT", "ethereum"); after.Sub(before).String() != "25.00" {
		t.Fatalf("USDT holdings went from %s to %s", before, after)
	}
	s.wantOutbox(id, "payment.created", "payment.method_selected", "payment.needs_review")
	s.send(chk, "25.00")
	s.mine("ethereum", 3)
	pay = s.getPayment(id)
	s.wantStatus(pay, "succeeded")
	if pay["settlement"].(map[string]any)["asset"] != "USDC" || pay["amount_received"] != 2500.0 {
		t.Fatalf("paid after the wrong coin: %v", pay)
	}
}

// holding is the wallet's holding of asset on network, zero when none.
func (s *shop) holding(asset, network string) money.CoinAmount {
	s.t.Helper()
	a, _ := money.ParseAsset(asset)
	out := money.CoinAmount{Asset: a, Units: new(big.Int)}
	w := s.c.data(request{method: "GET", path: "/wallet", key: s.biz.live}, 200)
	for _, h := range w["holdings"].([]any) {
		m := h.(map[string]any)
		if m["asset"] == asset && m["network"] == network {
			got, err := money.ParseCoinAmount(a, m["amount"].(string))
			if err != nil {
				s.t.Fatal(err)
			}
			return got
		}
	}
	return out
}

func (s *shop) testExact(t *testing.T) {
	p := s.payment(2500, nil)
	chk := s.checkout("payment_id", p["id"].(string), "USDC", "polygon")
	q := chk["crypto"].(map[string]any)
	if chk["status"] != "open" || q["amount"] != "25.00" || !strings.HasPrefix(q["payment_uri"].(string), "ethereum:") {
		t.Fatalf("checkout = %v", chk)
	}
	hash := s.send(chk, "25.00")
	s.runLoops()
	got := s.getCheckout(chk["id"].(string))
	if got["status"] != "processing" || got["crypto"].(map[string]any)["tx_hash"] != hash {
		t.Fatalf("after send: %v", got)
	}
	s.c.call(request{method: "POST", path: "/payments/" + p["id"].(string) + "/cancel", key: s.biz.live}, 409, "payment_in_flight")
	s.mine("polygon", 3)
	pay := s.getPayment(p["id"].(string))
	s.wantStatus(pay, "succeeded")
	s.wantHistory(pay, append(append([]string{"created", "method_selected", "detected"}, repeat("confirmation", 3)...), "succeeded")...)
	if pay["amount_received"] != 2500.0 || pay["settlement"].(map[string]any)["amount"] != "25.00" ||
		pay["method"].(map[string]any)["tx_hash"] != hash {
		t.Fatalf("payment = %v", pay)
	}
	if got := s.getCheckout(chk["id"].(string)); got["status"] != "completed" {
		t.Fatalf("checkout = %v", got["status"])
	}
	s.c.call(request{method: "POST", path: "/payments/" + p["id"].(string) + "/cancel", key: s.biz.live}, 409, "payment_not_cancelable")
	s.c.call(s.checkoutReq("payment_id", p["id"].(string), "USDC", "polygon", nil), 409, "payment_paid")
	s.wantOutbox(p["id"].(string), "payment.created", "payment.method_selected", "payment.processing", "payment.succeeded")
	s.wantOutbox(chk["id"].(string), "checkout.created", "checkout.completed")
	s.mine("polygon", 2)
	if again := s.getPayment(p["id"].(string)); len(history(again)) != len(history(pay)) {
		t.Fatalf("more blocks added events: %v", history(again))
	}
}

func (s *shop) testRemainder(t *testing.T) {
	p := s.payment(2500, nil)
	id := p["id"].(string)
	remainder := request{method: "POST", path: "/payments/" + id + "/request-remainder", key: s.biz.live}
	remainder.header = s.idem()
	s.c.call(remainder, 409, "payment_not_underpaid")
	chk := s.checkout("payment_id", id, "USDT", "tron")
	s.send(chk, "15.00")
	s.mine("tron", 3)
	pay := s.getPayment(id)
	s.wantStatus(pay, "underpaid")
	if pay["amount_received"] != 1500.0 || s.getCheckout(chk["id"].(string))["status"] != "underpaid" {
		t.Fatalf("underpaid payment = %v", pay)
	}
	remainder.header = s.idem()
	s.c.call(remainder, 409, "remainder_unavailable")
	s.advance(16 * 60)
	pay = s.getPayment(id)
	s.wantStatus(pay, "underpaid")
	if c := s.getCheckout(chk["id"].(string)); c["status"] != "expired" {
		t.Fatalf("checkout after quote = %v", c["status"])
	}
	remainder.header = s.idem()
	got := s.c.data(remainder, 201)
	next := got["checkout"].(map[string]any)
	if got["kind"] != "remainder_request" || next["remainder"] != true || next["amount"] != 1000.0 ||
		next["crypto"].(map[string]any)["amount"] != "10.00" || !strings.Contains(got["url"].(string), "?checkout="+next["id"].(string)) {
		t.Fatalf("remainder = %v", got)
	}
	if again := s.b.do(remainder); again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry of the remainder request was not replayed: %d", again.status)
	}
	s.c.call(s.checkoutReq("payment_id", id, "USDC", "polygon", nil), 409, "payment_paid")
	s.send(next, "10.00")
	s.mine("tron", 3)
	pay = s.getPayment(id)
	s.wantStatus(pay, "succeeded")
	conf := repeat("confirmation", 3)
	want := append([]string{"created", "method_selected", "detected"}, conf...)
	want = append(want, "underpaid", "expired", "remainder_requested", "detected")
	s.wantHistory(pay, append(append(want, conf...), "succeeded")...)
	if pay["amount_received"] != 2500.0 || pay["method"].(map[string]any)["amount"] != "25.00" {
		t.Fatalf("paid in two parts: %v", pay)
	}
	testRemainderRefusals(t, s)
}

// testRemainderRefusals covers the rules of spec 4.6 not met on the way.
func testRemainderRefusals(t *testing.T, s *shop) {
	p := s.payment(2500, nil)
	id := p["id"].(string)
	chk := s.checkout("payment_id", id, "USDC", "solana")
	s.send(chk, "5.00")
	s.mine("solana", 3)
	s.advance(16 * 60)
	s.c.call(request{method: "POST", path: "/payments/" + id + "/request-remainder", key: s.biz.live}, 400, "idempotency_key_required")
	setPayment(t, s.b, s.biz, id, func(p *payd.Payment) { p.AmountReceived = p.Amount })
	s.c.call(request{method: "POST", path: "/payments/" + id + "/request-remainder", key: s.biz.live, header: s.idem()}, 409, "nothing_due")
	s.c.call(request{method: "POST", path: "/payments/pmt_nope/request-remainder", key: s.biz.live, header: s.idem()}, 404, "not_found")
	live := s.b.newBusiness(true)
	s.c.call(request{method: "POST", path: "/payments/" + id + "/request-remainder", key: live.test, header: s.idem()}, 403, "test_mode_unavailable")
}

func (s *shop) testOverpaid(t *testing.T) {
	p := s.payment(2500, nil)
	chk := s.checkout("payment_id", p["id"].(string), "USDC", "ethereum")
	s.send(chk, "30.00")
	s.mine("ethereum", 3)
	pay := s.getPayment(p["id"].(string))
	s.wantStatus(pay, "succeeded")
	if pay["method"].(map[string]any)["overpaid_amount"] != "5.00" || pay["amount_received"] != 2500.0 {
		t.Fatalf("overpaid = %v", pay["method"])
	}
	if got := s.getCheckout(chk["id"].(string))["crypto"].(map[string]any); got["overpaid_amount"] != "5.00" {
		t.Fatalf("checkout crypto = %v", got)
	}
	s.testFundsAfterSuccess(t, p["id"].(string), chk)
}

// testFundsAfterSuccess sends a succeeded payment's deposit another coin,
// then more of the right one: the payment stays succeeded, and each
// transfer is told once it confirms (payment.funds_received), never as
// payment.processing.
func (s *shop) testFundsAfterSuccess(t *testing.T, id string, chk map[string]any) {
	usdt := s.holding("USDT", "ethereum")
	wrong := map[string]any{"crypto": map[string]any{"network": "ethereum", "asset": "USDT",
		"address": chk["crypto"].(map[string]any)["address"]}}
	wrongHash := s.send(wrong, "3.00")
	lateHash := s.send(chk, "2.00")
	s.mine("ethereum", 3)
	pay := s.getPayment(id)
	s.wantStatus(pay, "succeeded")
	s.wantHistory(pay, "created", "method_selected", "detected", "confirmation", "confirmation", "confirmation",
		"succeeded", "detected", "funds_received", "funds_received")
	events := pay["events"].([]any)
	var got []map[string]any
	for _, e := range events[len(events)-2:] {
		got = append(got, e.(map[string]any)["data"].(map[string]any))
	}
	if got[0]["reason"] != "wrong_asset" || got[0]["asset"] != "USDT" || got[0]["amount"] != "3.00" || got[0]["tx_hash"] != wrongHash ||
		got[1]["reason"] != "late_payment" || got[1]["asset"] != "USDC" || got[1]["amount"] != "2.00" || got[1]["tx_hash"] != lateHash {
		t.Fatalf("funds_received entries = %v", got)
	}
	if pay["method"].(map[string]any)["overpaid_amount"] != "7.00" || pay["amount_received"] != 2500.0 {
		t.Fatalf("method after late funds = %v", pay["method"])
	}
	if after := s.holding("USDT", "ethereum"); after.Sub(usdt).String() != "3.00" {
		t.Fatalf("USDT holdings went from %s to %s", usdt, after)
	}
	s.wantOutbox(id, "payment.created", "payment.method_selected", "payment.processing", "payment.succeeded",
		"payment.funds_received", "payment.funds_received")
}

func (s *shop) testExpiredAndLate(t *testing.T) {
	link := s.link(3000)
	chk := s.checkout("link_code", link["code"].(string), "ETH", "ethereum")
	pid := chk["payment_id"].(string)
	if q := chk["crypto"].(map[string]any); q["amount"] != "0.009375" || chk["link_id"] != link["id"] {
		t.Fatalf("link checkout = %v", chk)
	}
	s.advance(15 * 60)
	pay := s.getPayment(pid)
	s.wantStatus(pay, "expired")
	s.wantHistory(pay, "created", "method_selected", "expired")
	s.c.call(request{method: "POST", path: "/checkouts/" + chk["id"].(string) + "/cancel", body: "{}"}, 410, "checkout_expired")
	s.send(chk, "0.009375")
	s.mine("ethereum", 3)
	pay = s.getPayment(pid)
	s.wantStatus(pay, "needs_review")
	if c := s.getCheckout(chk["id"].(string)); c["review_reason"] != "late_payment" {
		t.Fatalf("late checkout = %v", c)
	}
	// The transfer reached a payment that had expired: no payment.processing,
	// only the move to needs_review once it confirmed.
	s.wantOutbox(pid, "payment.created", "payment.method_selected", "payment.expired", "payment.needs_review")
	acc := s.c.data(request{method: "POST", path: "/payments/" + pid + "/accept", key: s.biz.live}, 200)
	s.wantStatus(acc, "succeeded")
	s.wantHistory(acc, "created", "method_selected", "expired", "detected", "needs_review", "accepted", "succeeded")
	got := s.c.data(request{method: "GET", path: "/links/" + link["id"].(string), key: s.biz.live}, 200)
	if got["payments_count"] != 1.0 || got["volume"].(map[string]any)["amount"] != 3000.0 {
		t.Fatalf("link stats = %v", got)
	}
}

// link creates a link of amount USD cents.
func (s *shop) link(amount int64) map[string]any {
	return s.c.data(request{method: "POST", path: "/links", key: s.biz.live,
		body: jsonBody(map[string]any{"name": "Print", "amount": amount, "currency": "USD"})}, 201)
}

func (s *shop) testPaymentExpiry(t *testing.T) {
	at := s.b.clock.Now().Add(30 * time.Minute).Format(time.RFC3339)
	p := s.payment(2500, map[string]any{"expires_at": at})
	id := p["id"].(string)
	chk := s.checkout("payment_id", id, "USDC", "polygon")
	s.advance(16 * 60)
	pay := s.getPayment(id)
	s.wantStatus(pay, "pending") // a payment made with the API outlives its quote
	if c := s.getCheckout(chk["id"].(string)); c["status"] != "expired" {
		t.Fatalf("checkout = %v", c["status"])
	}
	s.advance(15 * 60)
	pay = s.getPayment(id)
	s.wantStatus(pay, "expired")
	s.c.call(s.checkoutReq("payment_id", id, "USDC", "polygon", nil), 410, "payment_expired")
	// A payment without a checkout expires by itself.
	bare := s.payment(2500, map[string]any{"expires_at": s.b.clock.Now().Add(2 * time.Minute).Format(time.RFC3339)})
	s.advance(3 * 60)
	s.wantStatus(s.getPayment(bare["id"].(string)), "expired")
}

func (s *shop) testReorg(t *testing.T) {
	p := s.payment(2500, nil)
	chk := s.checkout("payment_id", p["id"].(string), "BTC", "bitcoin")
	s.send(chk, chk["crypto"].(map[string]any)["amount"].(string))
	s.mine("bitcoin", 1)
	s.c.data(request{method: "POST", path: "/devnet/reorg", body: jsonBody(map[string]any{"network": "bitcoin", "depth": 1})}, 200)
	s.runLoops()
	if got := s.getCheckout(chk["id"].(string))["confirmations"].(map[string]any); got["current"] != 0.0 {
		t.Fatalf("after reorg: %v", got)
	}
	s.mine("bitcoin", 2)
	pay := s.getPayment(p["id"].(string))
	s.wantStatus(pay, "succeeded")
	s.wantHistory(pay, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded")
}

func (s *shop) testReplaceCancelClaim(t *testing.T) {
	p := s.payment(2500, nil)
	id := p["id"].(string)
	first := s.checkout("payment_id", id, "USDC", "polygon")
	second := s.checkout("payment_id", id, "BTC", "bitcoin")
	old := s.getCheckout(first["id"].(string))
	if old["status"] != "canceled" || old["canceled_by"] != "replacement" || old["replaced_by"] != second["id"] {
		t.Fatalf("replaced checkout = %v", old)
	}
	if first["crypto"].(map[string]any)["address"] == second["crypto"].(map[string]any)["address"] {
		t.Fatal("two checkouts share an address")
	}
	s.c.call(request{method: "POST", path: "/checkouts/" + first["id"].(string) + "/cancel", body: "{}"}, 409, "checkout_canceled")
	s.send(second, "0.0001")
	s.runLoops()
	s.c.call(s.checkoutReq("payment_id", id, "USDC", "polygon", nil), 409, "checkout_not_supersedable")
	// The refused replacement rolled back whole: no event of it was kept.
	s.wantOutbox(id, "payment.created", "payment.method_selected", "payment.method_selected", "payment.processing")
	s.c.call(request{method: "POST", path: "/checkouts/" + second["id"].(string) + "/cancel", body: "{}"}, 409, "checkout_not_cancelable")
	s.c.call(request{method: "POST", path: "/checkouts/" + second["id"].(string) + "/claim",
		body: `{"tx_hash":"` + strings.Repeat("a", 64) + `"}`}, 409, "checkout_not_claimable")

	// Scoped to a page: only the page's own checkouts are answered.
	own := s.c.data(request{method: "GET", path: "/checkouts/" + second["id"].(string) + "?payment_code=" + p["code"].(string)}, 200)
	if own["id"] != second["id"] {
		t.Fatalf("scoped to its payment: %v", own)
	}
	q := s.payment(2500, nil)
	for _, scope := range []string{"payment_code=" + q["code"].(string), "link_code=" + s.link(2500)["code"].(string), "payment_code=nosuchcode"} {
		s.c.call(request{method: "GET", path: "/checkouts/" + second["id"].(string) + "?" + scope}, 404, "not_found")
	}
	s.c.call(request{method: "GET", path: "/checkouts/" + second["id"].(string) + "?payment_code=" + p["code"].(string) + "&link_code=x"}, 400, "invalid_request")
	third := s.checkout("payment_id", q["id"].(string), "USDT", "ethereum")
	cancel := request{method: "POST", path: "/checkouts/" + third["id"].(string) + "/cancel", body: "{}"}
	got := s.c.data(cancel, 200)
	if got["status"] != "canceled" || got["canceled_by"] != "customer" {
		t.Fatalf("canceled = %v", got)
	}
	s.c.data(cancel, 200) // canceling again changes nothing
	s.wantStatus(s.getPayment(q["id"].(string)), "pending")
	claim := func(hash string) request {
		return request{method: "POST", path: "/checkouts/" + third["id"].(string) + "/claim", body: `{"tx_hash":"` + hash + `"}`}
	}
	s.c.call(claim("0x1234"), 400, "invalid_tx_hash", "tx_hash")
	hash := "0x" + strings.Repeat("ab", 32)
	claimed := s.c.data(claim(hash), 200)
	if claimed["review_reason"] != "claim" || claimed["claim_tx_hash"] != hash {
		t.Fatalf("claimed = %v", claimed)
	}
	s.wantStatus(s.getPayment(q["id"].(string)), "needs_review")
	s.c.call(claim(hash), 409, "already_claimed")

	r := s.payment(2500, nil)
	s.checkout("payment_id", r["id"].(string), "SOL", "solana")
	canceled := s.c.data(request{method: "POST", path: "/payments/" + r["id"].(string) + "/cancel", key: s.biz.live}, 200)
	s.wantStatus(canceled, "failed")
	if c := s.getCheckout(canceled["checkout_id"].(string)); c["canceled_by"] != "business" {
		t.Fatalf("checkout of a canceled payment = %v", c)
	}
	s.c.call(s.checkoutReq("payment_id", r["id"].(string), "SOL", "solana", nil), 409, "payment_canceled")
}

func (s *shop) testCheckoutErrors(t *testing.T) {
	link := s.link(2500)
	code := link["code"].(string)
	open := func(extra map[string]any, asset, network string) request {
		return s.checkoutReq("link_code", code, asset, network, extra)
	}
	s.c.call(open(nil, "BTC", "polygon"), 400, "asset_unavailable")
	s.c.call(open(map[string]any{"rail": "card"}, "USDC", "polygon"), 400, "rail_unavailable")
	s.c.call(open(map[string]any{"email": "not-an-email"}, "USDC", "polygon"), 400, "invalid_email", "email")
	s.c.call(open(map[string]any{"payment_id": "pmt_x"}, "USDC", "polygon"), 400, "invalid_request", "link_code")
	s.c.call(open(map[string]any{"asset": "DOGE"}, "", "polygon"), 400, "invalid_request", "asset")
	s.c.call(s.checkoutReq("link_code", "nope", "USDC", "polygon", nil), 404, "link_not_found")
	s.c.call(s.checkoutReq("payment_id", "pmt_nope", "USDC", "polygon", nil), 404, "payment_not_found")
	noKey := s.checkoutReq("link_code", code, "USDC", "polygon", nil)
	delete(noKey.header, "Idempotency-Key")
	s.c.call(noKey, 400, "idempotency_key_required")

	cust := s.c.data(request{method: "POST", path: "/customers", key: s.biz.live,
		body: `{"name":"Bo","email":"bo@example.com"}`}, 201)
	s.c.data(request{method: "PATCH", path: "/customers/" + cust["id"].(string), key: s.biz.live, body: `{"blocked":true}`}, 200)
	s.c.call(open(map[string]any{"email": "BO@example.com"}, "USDC", "polygon"), 403, "customer_blocked")
	s.c.data(request{method: "PATCH", path: "/checkout-settings", key: s.biz.live, body: `{"collect_email":true}`}, 200)
	s.c.call(open(nil, "USDC", "polygon"), 400, "email_required", "email")
	withEmail := s.c.data(open(map[string]any{"email": "cy@example.com"}, "USDC", "polygon"), 201)
	if pay := s.getPayment(withEmail["payment_id"].(string)); withEmail["email"] != "cy@example.com" || pay["customer_id"] == nil {
		t.Fatalf("checkout with email = %v, payment customer %v", withEmail["email"], pay["customer_id"])
	}
	s.c.data(request{method: "PATCH", path: "/checkout-settings", key: s.biz.live, body: `{"collect_email":false}`}, 200)

	replay := open(nil, "USDC", "polygon")
	first, again := s.b.do(replay), s.b.do(replay)
	if first.status != 201 || string(again.body) != string(first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %d", first.status, again.status)
	}

	ctx := context.Background()
	now := s.b.clock.Now()
	must(t, s.b.db.SetBusinessSuspended(ctx, s.biz.biz.ID, &now))
	s.c.call(open(nil, "USDC", "polygon"), 403, "business_suspended")
	must(t, s.b.db.SetBusinessSuspended(ctx, s.biz.biz.ID, nil))

	s.c.data(request{method: "POST", path: "/links/" + link["id"].(string) + "/archive", key: s.biz.live}, 200)
	s.c.call(open(nil, "USDC", "polygon"), 410, "link_archived")

	bare := s.b.newBusiness(false)
	bareLink := s.c.data(request{method: "POST", path: "/links", key: bare.live,
		body: `{"name":"x","amount":2500,"currency":"USD"}`}, 201)
	s.c.call(s.checkoutReq("link_code", bareLink["code"].(string), "USDC", "polygon", nil), 409, "not_accepting")

	testCheckoutLimits(t, s, s.link(2500)["code"].(string))
}

// testCheckoutLimits covers the operator's pauses and the per-IP limit.
func testCheckoutLimits(t *testing.T, s *shop, code string) {
	ctx := context.Background()
	for _, name := range []string{"checkouts", "network:polygon"} {
		must(t, s.b.db.SetPause(ctx, payd.Pause{Name: name, PausedAt: s.b.clock.Now()}))
		s.advance(2)
		s.c.call(s.checkoutReq("link_code", code, "USDC", "polygon", nil), 503, "temporarily_unavailable")
		must(t, s.b.db.DeletePause(ctx, name))
		s.advance(2)
	}
	s.advance(600)
	from := func() request {
		req := s.checkoutReq("link_code", code, "USDC", "polygon", nil)
		req.header["X-Forwarded-For"] = "203.0.113.9"
		return req
	}
	for range 30 {
		s.c.data(from(), 201)
	}
	s.c.call(from(), 429, "rate_limited")
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// walletKey is the shop wallet's account key on network n.
func (s *shop) walletKey(t *testing.T, n money.Network) hd.AccountKey {
	for _, k := range s.wallet.Keys() {
		if k.Network() == n {
			return k
		}
	}
	t.Fatalf("the wallet has no %s key", n)
	return hd.AccountKey{}
}

// wantOutbox checks the events stored for a subject, in order, and that
// each carries the subject as its endpoint's schema describes it.
func (s *shop) wantOutbox(subjectID string, types ...string) {
	s.t.Helper()
	events, err := s.b.db.EventsOf(context.Background(), s.biz.biz.ID, subjectID)
	if err != nil {
		s.t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Type)
		schema := map[string]string{"payment": "Payment", "checkout": "Checkout"}[e.SubjectKind]
		var data any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			s.t.Fatal(err)
		}
		if err := s.b.doc.Components.Schemas[schema].Value.VisitJSON(data); err != nil {
			s.t.Fatalf("%s data does not match %s: %v", e.Type, schema, err)
		}
		if e.Data == nil || e.Actor.Kind == "" || !strings.HasPrefix(e.ID, "evt_") {
			s.t.Fatalf("event = %+v", e)
		}
	}
	if !slices.Equal(got, types) {
		s.t.Fatalf("outbox of %s = %v\nwant %v", subjectID, got, types)
	}
}
