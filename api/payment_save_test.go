package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// saved is the payment a path changes, as the test knows it.
type saved struct {
	id, customer, link string
	chk                map[string]any // its current checkout
}

// savePath is one way a payment changes: through the API, the watcher or
// the expirer.
type savePath struct {
	name string
	// arrange makes the payment ready for the change; id is "" when act
	// creates it.
	arrange func(s *shop) *saved
	act     func(s *shop, f *saved)
	// history and outbox are the entries and payment events the change
	// adds; payments and succeeded what it adds to the customer's and the
	// link's stats.
	history, outbox     []string
	payments, succeeded int64
}

// TestEveryPaymentChangeIsSaved runs every path that changes a payment and
// checks that each stored the whole change through payd.SavePayment: the
// row with its history entries, the outbox events and the stats. A path
// that wrote the row by hand and left out a part fails here.
func TestEveryPaymentChangeIsSaved(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		for _, path := range savePaths() {
			t.Run(path.name, func(t *testing.T) {
				s.t, s.c.t = t, t
				f := path.arrange(s)
				before := s.savedState(f)
				path.act(s, f)
				s.wantSaved(path, before, s.savedState(f))
			})
		}
	})
}

// savePaths lists every path that changes a payment.
func savePaths() []savePath {
	return []savePath{
		{name: "CreatePayment", arrange: func(*shop) *saved { return &saved{} },
			act: func(s *shop, f *saved) { *f = *s.customerPayment(nil) }, history: []string{"created"},
			outbox: []string{"payment.created"}, payments: 1},
		{name: "OpenCheckout", arrange: func(s *shop) *saved { return s.customerPayment(nil) },
			act:     func(s *shop, f *saved) { f.chk = s.checkout("payment_id", f.id, "USDC", "polygon") },
			history: []string{"method_selected"}, outbox: []string{"payment.method_selected"}},
		{name: "OpenLinkCheckout", arrange: func(s *shop) *saved { return &saved{link: s.link(3000)["id"].(string)} },
			act: func(s *shop, f *saved) { s.openLinkCheckout(f) }, history: []string{"created", "method_selected"},
			outbox: []string{"payment.created", "payment.method_selected"}, payments: 1},
		{name: "ReplaceCheckout", arrange: func(s *shop) *saved { return s.withCheckout(s.customerPayment(nil), "polygon") },
			act:     func(s *shop, f *saved) { f.chk = s.checkout("payment_id", f.id, "BTC", "bitcoin") },
			history: []string{"method_selected"}, outbox: []string{"payment.method_selected"}},
		{name: "CancelLinkCheckout", arrange: func(s *shop) *saved {
			f := &saved{link: s.link(3000)["id"].(string)}
			s.openLinkCheckout(f)
			return f
		}, act: func(s *shop, f *saved) { s.checkoutAction(f, "cancel", "{}") },
			history: []string{"canceled"}, outbox: []string{"payment.failed"}},
		{name: "ClaimCheckout", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "polygon")
			s.checkoutAction(f, "cancel", "{}")
			return f
		}, act: func(s *shop, f *saved) { s.claim(f) }, history: []string{"needs_review"}, outbox: []string{"payment.needs_review"}},
		{name: "AcceptPayment", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "polygon")
			s.checkoutAction(f, "cancel", "{}")
			s.claim(f)
			return f
		}, act: func(s *shop, f *saved) { s.paymentAction(f, "accept") }, history: []string{"accepted", "succeeded"},
			outbox: []string{"payment.succeeded"}, succeeded: 1},
		{name: "CancelPayment", arrange: func(s *shop) *saved { return s.withCheckout(s.customerPayment(nil), "solana") },
			act: func(s *shop, f *saved) { s.paymentAction(f, "cancel") }, history: []string{"canceled"},
			outbox: []string{"payment.failed"}},
		{name: "RequestRemainder", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "tron")
			s.send(f.chk, "15.00")
			s.mine("tron", 3)
			s.advance(16 * 60)
			return f
		}, act: func(s *shop, f *saved) { s.paymentAction(f, "request-remainder") },
			history: []string{"remainder_requested"}, outbox: []string{"payment.remainder_requested"}},
		{name: "WatcherDetects", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "polygon")
			s.send(f.chk, "25.00")
			return f
		}, act: func(s *shop, _ *saved) { s.runLoops() }, history: []string{"detected"}, outbox: []string{"payment.processing"}},
		{name: "WatcherConfirms", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "polygon")
			s.send(f.chk, "25.00")
			s.runLoops()
			return f
		}, act: func(s *shop, _ *saved) { s.mine("polygon", 3) }, history: append(repeat("confirmation", 3), "succeeded"),
			outbox: []string{"payment.succeeded"}, succeeded: 1},
		{name: "WatcherUnderpaid", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "tron")
			s.send(f.chk, "15.00")
			s.runLoops()
			return f
		}, act: func(s *shop, _ *saved) { s.mine("tron", 3) }, history: append(repeat("confirmation", 3), "underpaid"),
			outbox: []string{"payment.underpaid"}},
		{name: "WatcherLateFunds", arrange: func(s *shop) *saved {
			f := s.withCheckout(s.customerPayment(nil), "ethereum")
			s.send(f.chk, "25.00")
			s.mine("ethereum", 3)
			s.send(f.chk, "2.00")
			return f
		}, act: func(s *shop, _ *saved) { s.mine("ethereum", 3) }, history: []string{"detected", "funds_received"},
			outbox: []string{"payment.funds_received"}},
		{name: "ExpirerPayment", arrange: func(s *shop) *saved {
			return s.customerPayment(map[string]any{"expires_at": s.b.clock.Now().Add(2 * time.Minute).Format(time.RFC3339)})
		}, act: func(s *shop, _ *saved) { s.advance(3 * 60) }, history: []string{"expired"}, outbox: []string{"payment.expired"}},
		{name: "ExpirerQuote", arrange: func(s *shop) *saved {
			f := &saved{link: s.link(3000)["id"].(string)}
			s.openLinkCheckout(f)
			return f
		}, act: func(s *shop, _ *saved) { s.advance(15 * 60) }, history: []string{"expired"}, outbox: []string{"payment.expired"}},
	}
}

// customerPayment creates a 25 USD payment for a new customer.
func (s *shop) customerPayment(extra map[string]any) *saved {
	body := map[string]any{"customer_email": fmt.Sprintf("buyer%d@example.com", s.n)}
	s.n++
	for k, v := range extra {
		body[k] = v
	}
	p := s.payment(2500, body)
	return &saved{id: p["id"].(string), customer: p["customer_id"].(string)}
}

// withCheckout opens a checkout on f's payment in USDC or USDT, or the
// network's own coin where it has no token.
func (s *shop) withCheckout(f *saved, network string) *saved {
	asset := map[string]string{"bitcoin": "BTC", "solana": "SOL", "tron": "USDT"}[network]
	if asset == "" {
		asset = "USDC"
	}
	f.chk = s.checkout("payment_id", f.id, asset, network)
	return f
}

// openLinkCheckout opens a checkout on f's link, which creates the payment
// for a new customer.
func (s *shop) openLinkCheckout(f *saved) {
	code := s.c.data(request{method: "GET", path: "/links/" + f.link, key: s.biz.live}, 200)["code"].(string)
	f.chk = s.c.data(s.checkoutReq("link_code", code, "USDC", "polygon",
		map[string]any{"email": fmt.Sprintf("walkin%d@example.com", s.n)}), 201)
	f.id = f.chk["payment_id"].(string)
	f.customer = s.getPayment(f.id)["customer_id"].(string)
}

// checkoutAction posts to one of the checkout's public actions.
func (s *shop) checkoutAction(f *saved, action, body string) {
	s.c.data(request{method: "POST", path: "/checkouts/" + f.chk["id"].(string) + "/" + action, body: body}, 200)
}

// claim names a transaction that paid f's ended checkout.
func (s *shop) claim(f *saved) {
	s.checkoutAction(f, "claim", `{"tx_hash":"0x`+strings.Repeat("ab", 32)+`"}`)
}

// paymentAction posts to one of the payment's actions.
func (s *shop) paymentAction(f *saved, action string) {
	want := map[string]int{"request-remainder": 201}[action]
	if want == 0 {
		want = 200
	}
	s.c.data(request{method: "POST", path: "/payments/" + f.id + "/" + action, key: s.biz.live, header: s.idem()}, want)
}

// saveState is what a payment change must move, read from the database.
type saveState struct {
	history, outbox []string
	customer, link  payd.Stats
}

// savedState reads f's payment's history, outbox and stats; all are empty
// while the payment does not exist.
func (s *shop) savedState(f *saved) saveState {
	s.t.Helper()
	ctx, db, biz := context.Background(), s.b.db, s.biz.biz.ID
	var st saveState
	if f.id == "" {
		return st
	}
	p, err := db.PaymentByID(ctx, biz, f.id)
	must(s.t, err)
	for _, e := range p.Events {
		st.history = append(st.history, e.Type)
	}
	events, err := db.EventsOf(ctx, biz, f.id)
	must(s.t, err)
	for _, e := range events {
		st.outbox = append(st.outbox, e.Type)
	}
	c, err := db.CustomerByID(ctx, biz, f.customer)
	must(s.t, err)
	st.customer = c.Stats
	if f.link != "" {
		l, err := db.LinkByID(ctx, biz, f.link)
		must(s.t, err)
		st.link = l.Stats
	}
	return st
}

// wantSaved checks that the change from before to after is the path's.
func (s *shop) wantSaved(path savePath, before, after saveState) {
	s.t.Helper()
	if got := after.history[len(before.history):]; !slices.Equal(got, path.history) {
		s.t.Errorf("history gained %v, want %v", got, path.history)
	}
	if got := after.outbox[len(before.outbox):]; !slices.Equal(got, path.outbox) {
		s.t.Errorf("outbox gained %v, want %v", got, path.outbox)
	}
	c := payd.Stats{Payments: after.customer.Payments - before.customer.Payments,
		Succeeded: after.customer.Succeeded - before.customer.Succeeded}
	if c.Payments != path.payments || c.Succeeded != path.succeeded {
		s.t.Errorf("customer stats moved by %d payments, %d succeeded; want %d, %d", c.Payments, c.Succeeded,
			path.payments, path.succeeded)
	}
	if after.link == (payd.Stats{}) && before.link == (payd.Stats{}) {
		return
	}
	if n, vol := after.link.Payments-before.link.Payments, after.link.VolumeUSD-before.link.VolumeUSD; n != path.payments ||
		(vol != 0) != (path.succeeded != 0) {
		s.t.Errorf("link stats moved by %d payments, %d volume; want %d, succeeded %d", n, vol, path.payments, path.succeeded)
	}
}
