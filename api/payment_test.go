package api

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// payPost is a POST /payments with body by key.
func payPost(key string, body map[string]any) request {
	return request{method: "POST", path: "/payments", key: key, body: jsonBody(body)}
}

// payFields are every field of spec 2.2 (and code), each present on every payment.
var payFields = []string{"id", "kind", "code", "status", "amount", "currency", "fee_payer", "customer_fee",
	"amount_received", "reporting", "fee_rate_bps", "method", "settlement", "customer_id", "link_id", "url",
	"reference", "metadata", "success_url", "cancel_url", "expires_at", "canceled_at", "checkout_id",
	"description", "country", "failure_code", "failure_message", "confirmed_at", "created_at", "updated_at", "events"}

// TestPayments covers spec 2.2, 4.8 rule 11 and 7.3 on both databases.
func TestPayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		biz, other := b.newBusiness(true), b.newBusiness(false)
		t.Run("create and get", func(t *testing.T) { testCreatePayment(t, b, biz, other) })
		t.Run("validation", func(t *testing.T) { testPaymentValidation(t, b, biz) })
		t.Run("customers", func(t *testing.T) { testPaymentCustomers(t, b, biz) })
		t.Run("reference", func(t *testing.T) { testPaymentReference(t, b, biz) })
		t.Run("cancel", func(t *testing.T) { testCancelPayment(t, b, biz) })
		t.Run("accept", func(t *testing.T) { testAcceptPayment(t, b, biz) })
		t.Run("access", func(t *testing.T) { testPaymentAccess(t, b, biz) })
		t.Run("fee payer default", func(t *testing.T) {
			c := clTest{t, b}
			biz := b.newBusiness(false)
			c.data(request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: `{"fee_payer":"customer"}`}, 200)
			d := c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)
			wantFields(t, d, map[string]any{"fee_payer": "customer"})
			d = c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "fee_payer": "business"}), 201)
			wantFields(t, d, map[string]any{"fee_payer": "business"})
		})
	})
}

func testCreatePayment(t *testing.T, b *bundle, biz, other *testBusiness) {
	c := clTest{t, b}
	d := c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)
	for _, f := range payFields {
		if _, ok := d[f]; !ok {
			t.Errorf("field %s missing from %v", f, d)
		}
	}
	now := Time(b.clock.Now())
	wantFields(t, d, map[string]any{"kind": "payment", "status": "pending", "amount": 1000, "currency": "USD",
		"fee_payer": "business", "customer_fee": 0, "amount_received": 0, "fee_rate_bps": 0, "method": nil,
		"settlement": nil, "customer_id": nil, "link_id": nil, "reference": nil, "metadata": map[string]any{},
		"success_url": nil, "cancel_url": nil, "expires_at": nil, "canceled_at": nil, "checkout_id": nil,
		"description": "", "country": nil, "failure_code": nil, "failure_message": nil, "confirmed_at": nil,
		"url":       "http://payd.test/p/" + d["code"].(string),
		"reporting": map[string]any{"currency": "USD", "amount": 1000, "fee": nil, "transaction_fee": 0, "customer_fee": 0, "net": 1000}})
	events := d["events"].([]any)
	if len(events) != 1 || events[0].(map[string]any)["type"] != "created" || events[0].(map[string]any)["data"] != nil {
		t.Fatalf("events = %v, want one created with null data", events)
	}
	if !payd.HasPrefix(d["id"].(string), payd.PrefixPayment) || d["created_at"] != d["updated_at"] {
		t.Fatalf("id/timestamps: %v (now %v)", d, now)
	}
	got := c.data(request{method: "GET", path: "/payments/" + d["id"].(string), key: biz.live}, 200)
	if g, w := jsonBody(got), jsonBody(d); g != w {
		t.Fatalf("GET = %s\nPOST = %s", g, w)
	}
	c.call(request{method: "GET", path: "/payments/" + d["id"].(string), key: other.live}, 404, "not_found")
	c.call(request{method: "GET", path: "/payments/pmt_nope", key: biz.live}, 404, "not_found")

	exp := b.clock.Now().Add(48 * time.Hour).Truncate(time.Millisecond)
	full := c.data(payPost(biz.live, map[string]any{"amount": 2500, "currency": "EUR", "description": "Two books\nand a pen",
		"reference": "order-77", "metadata": map[string]any{"order_id": "77", "channel": "web"}, "success_url": "https://shop.example/ok",
		"cancel_url": "http://127.0.0.1:9/cancel", "expires_at": exp.In(time.FixedZone("x", 3600)).Format(time.RFC3339Nano),
		"fee_payer": "customer", "country": "DE"}), 201)
	wantFields(t, full, map[string]any{"amount": 2500, "currency": "EUR", "description": "Two books\nand a pen",
		"reference": "order-77", "metadata": map[string]any{"order_id": "77", "channel": "web"}, "fee_payer": "customer",
		"success_url": "https://shop.example/ok", "cancel_url": "http://127.0.0.1:9/cancel", "country": "DE",
		"expires_at": exp.UTC().Format(timeLayout),
		// 25.00 EUR at 1.08 is 27.00 USD.
		"reporting": map[string]any{"currency": "USD", "amount": 2700, "fee": nil, "transaction_fee": 0, "customer_fee": 0, "net": 2700}})
}

func testPaymentValidation(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	base := func(kv ...any) map[string]any {
		m := map[string]any{"amount": 1000, "currency": "USD"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	manyKeys := map[string]any{}
	for i := range payd.MaxMetadataKeys + 1 {
		manyKeys["k"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	now := b.clock.Now()
	cases := []struct {
		body        map[string]any
		code, field string
	}{
		{base("amount", nil), "invalid_request", "amount"},
		{base("currency", nil), "invalid_request", "currency"},
		{base("currency", "usd"), "invalid_request", "currency"},
		{base("currency", "JPY"), "invalid_request", "currency"},
		{base("amount", 99), "invalid_request", "amount"},
		{base("amount", -5), "invalid_request", "amount"},
		{base("amount", money.MaxPrice+1), "invalid_request", "amount"},
		{base("currency", "EUR", "amount", 92), "invalid_request", "amount"}, // 0.92 EUR at 1.08 is 0.99 USD
		{base("metadata", map[string]any{"payd_id": "x"}), "invalid_request", "metadata"},
		{base("metadata", map[string]any{"Service_x": "x"}), "invalid_request", "metadata"},
		{base("metadata", map[string]any{"a b": "x"}), "invalid_request", "metadata"},
		{base("metadata", map[string]any{"k[1]": "x"}), "invalid_request", "metadata"},
		{base("metadata", map[string]any{strings.Repeat("k", 41): "x"}), "invalid_request", "metadata"},
		{base("metadata", map[string]any{"k": strings.Repeat("é", 501)}), "invalid_request", "metadata.k"},
		{base("metadata", map[string]any{"k": 1}), "invalid_request", "metadata.k"},
		{base("metadata", manyKeys), "invalid_request", "metadata"},
		{base("description", strings.Repeat("d", 1001)), "invalid_request", "description"},
		{base("reference", " r"), "invalid_request", "reference"},
		{base("reference", strings.Repeat("r", 201)), "invalid_request", "reference"},
		{base("reference", "a\u0007b"), "invalid_request", "reference"},
		{base("success_url", "ftp://x.example"), "invalid_request", "success_url"},
		{base("cancel_url", "/relative"), "invalid_request", "cancel_url"},
		{base("expires_at", now.Add(30*time.Second).Format(time.RFC3339)), "invalid_request", "expires_at"},
		{base("expires_at", now.Add(-time.Hour).Format(time.RFC3339)), "invalid_request", "expires_at"},
		{base("expires_at", now.Add(91*24*time.Hour).Format(time.RFC3339)), "invalid_request", "expires_at"},
		{base("expires_at", "tomorrow"), "invalid_request", "expires_at"},
		{base("expires_at", "2030-01-02T03:04:05"), "invalid_request", "expires_at"},
		{base("fee_payer", "both"), "invalid_request", "fee_payer"},
		{base("country", "de"), "invalid_request", "country"},
		{base("country", "DEU"), "invalid_request", "country"},
		{base("customer_email", "not an email"), "invalid_email", "customer_email"},
		{base("customer_email", "a@b"), "invalid_email", "customer_email"},
		{base("customer_id", "cst_x", "customer_email", "a@example.com"), "invalid_request", "customer_email"},
		{base("customer_name", "Ann"), "invalid_request", "customer_name"},
		{base("customer_id", "bogus"), "invalid_request", "customer_id"},
		{base("customer_id", "cst_missing"), "invalid_request", "customer_id"},
		{base("surprise", 1), "invalid_request", "surprise"},
	}
	for _, tc := range cases {
		c.call(payPost(biz.live, tc.body), 400, tc.code, tc.field)
	}
	// Nulls count as absent; the edges of each range are allowed.
	ok := base("description", nil, "reference", strings.Repeat("r", 200), "metadata", map[string]any{strings.Repeat("k", 40): strings.Repeat("v", 500), "a.b-c:d_e": ""},
		"expires_at", now.Add(90*24*time.Hour-time.Second).Format(time.RFC3339), "country", nil, "customer_id", nil, "amount", money.MaxPrice)
	c.data(payPost(biz.live, ok), 201)
	c.data(payPost(biz.live, base("currency", "EUR", "amount", 93)), 201)
}

func testPaymentCustomers(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "customer_email": "Buyer@Example.com", "customer_name": "Bea"}), 201)
	cid, _ := d["customer_id"].(string)
	if !payd.HasPrefix(cid, payd.PrefixCustomer) {
		t.Fatalf("customer_id = %v", d["customer_id"])
	}
	cust := c.data(request{method: "GET", path: "/customers/" + cid, key: biz.live}, 200)
	wantFields(t, cust, map[string]any{"name": "Bea", "email": "Buyer@Example.com"})
	again := c.data(payPost(biz.live, map[string]any{"amount": 2000, "currency": "USD", "customer_email": "buyer@example.com", "customer_name": "Other"}), 201)
	byID := c.data(payPost(biz.live, map[string]any{"amount": 3000, "currency": "USD", "customer_id": cid}), 201)
	if again["customer_id"] != cid || byID["customer_id"] != cid {
		t.Fatalf("the same customer was not reused: %v %v", again["customer_id"], byID["customer_id"])
	}
	cust = c.data(request{method: "GET", path: "/customers/" + cid, key: biz.live}, 200)
	wantFields(t, cust, map[string]any{"name": "Bea", "stats": map[string]any{"payments_count": 3, "incomplete_count": 3,
		"volume": map[string]any{"amount": 0, "currency": "USD"}, "average": map[string]any{"amount": 0, "currency": "USD"},
		"last_payment_at": byID["created_at"], "preferred_rail": nil}})

	c.data(request{method: "PATCH", path: "/customers/" + cid, key: biz.live, body: `{"blocked":true}`}, 200)
	c.call(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "customer_id": cid}), 403, "customer_blocked")
	c.call(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "customer_email": "BUYER@example.com"}), 403, "customer_blocked")
	other := b.newBusiness(false)
	c.call(payPost(other.live, map[string]any{"amount": 1000, "currency": "USD", "customer_id": cid}), 400, "invalid_request", "customer_id")
}

func testPaymentReference(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	body := map[string]any{"amount": 1500, "currency": "GBP", "reference": "inv-1"}
	first := c.data(payPost(biz.live, body), 201)
	body["description"] = "a retry may differ in other fields"
	again := c.data(payPost(biz.live, body), 200)
	if jsonBody(again) != jsonBody(first) {
		t.Fatalf("retry with the reference = %v, want the first payment %v", again, first)
	}
	c.call(payPost(biz.live, map[string]any{"amount": 1501, "currency": "GBP", "reference": "inv-1"}), 409, "reference_in_use", "reference")
	c.call(payPost(biz.live, map[string]any{"amount": 1500, "currency": "EUR", "reference": "inv-1"}), 409, "reference_in_use", "reference")
	other := b.newBusiness(false)
	c.data(payPost(other.live, map[string]any{"amount": 1501, "currency": "GBP", "reference": "inv-1"}), 201)

	// A payment that received funds holds its reference even for the same amount.
	setPayment(t, b, biz, first["id"].(string), func(p *payd.Payment) { p.AmountReceived = 100 })
	c.call(payPost(biz.live, body), 409, "reference_in_use", "reference")

	// Canceled and expired payments free the reference.
	d := c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "reference": "inv-2"}), 201)
	c.data(request{method: "POST", path: "/payments/" + d["id"].(string) + "/cancel", key: biz.live}, 200)
	d2 := c.data(payPost(biz.live, map[string]any{"amount": 2000, "currency": "USD", "reference": "inv-2"}), 201)
	setPayment(t, b, biz, d2["id"].(string), func(p *payd.Payment) { p.Status = payd.PaymentExpired })
	c.data(payPost(biz.live, map[string]any{"amount": 3000, "currency": "USD", "reference": "inv-2"}), 201)
	exp := b.clock.Now().Add(time.Hour).Format(time.RFC3339)
	c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD", "reference": "inv-3", "expires_at": exp}), 201)
	b.clock.Advance(time.Hour)
	c.data(payPost(biz.live, map[string]any{"amount": 9000, "currency": "USD", "reference": "inv-3"}), 201)

	t.Run("idempotency key replays the first answer", func(t *testing.T) {
		req := payPost(biz.live, map[string]any{"amount": 4000, "currency": "USD"})
		req.header = map[string]string{"Idempotency-Key": "pay-once"}
		one, two := b.do(req), b.do(req)
		if one.status != 201 || two.status != 201 || string(one.body) != string(two.body) || two.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("got %d %s then %d %s", one.status, one.body, two.status, two.body)
		}
		reuse := payPost(biz.live, map[string]any{"amount": 4000, "currency": "USD", "reference": "inv-9"})
		first := c.data(reuse, 201)
		reuse.header = map[string]string{"Idempotency-Key": "reuse-once"}
		one, two = b.do(reuse), b.do(reuse)
		if one.status != 200 || two.status != 200 || string(one.body) != string(two.body) || two.header.Get("Idempotent-Replayed") != "true" ||
			!strings.Contains(string(one.body), first["id"].(string)) {
			t.Fatalf("got %d %s then %d %s", one.status, one.body, two.status, two.body)
		}
	})
}

// setPayment changes a stored payment directly, to reach states that need
// funds, which arrive only once checkouts exist.
func setPayment(t *testing.T, b *bundle, biz *testBusiness, id string, change func(*payd.Payment)) {
	t.Helper()
	ctx := context.Background()
	err := b.db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		p, err := q.PaymentByID(ctx, biz.biz.ID, id)
		if err != nil {
			return err
		}
		change(p)
		p.Events = append(p.Events, payd.PaymentEvent{Type: "test", CreatedAt: b.clock.Now()})
		return q.UpdatePayment(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testCancelPayment(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	cancel := func(key, id string) request {
		return request{method: "POST", path: "/payments/" + id + "/cancel", key: key}
	}
	newID := func() string {
		return c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)["id"].(string)
	}
	id := newID()
	b.clock.Advance(time.Second)
	d := c.data(cancel(biz.live, id), 200)
	wantFields(t, d, map[string]any{"status": "failed", "failure_code": "canceled", "canceled_at": d["updated_at"]})
	if ev := d["events"].([]any); len(ev) != 2 || ev[1].(map[string]any)["type"] != "canceled" {
		t.Fatalf("events = %v", ev)
	}
	if again := c.data(cancel(biz.live, id), 200); jsonBody(again) != jsonBody(d) {
		t.Fatalf("a second cancel changed the payment: %v", again)
	}
	c.call(request{method: "POST", path: "/payments/" + id + "/cancel", key: biz.live, body: `{"x":1}`}, 400, "invalid_request", "x")
	c.call(cancel(biz.live, "pmt_missing"), 404, "not_found")
	c.call(cancel(b.newBusiness(false).live, id), 404, "not_found")

	states := []struct {
		change func(*payd.Payment)
		code   string
	}{
		{func(p *payd.Payment) { p.Status, p.AmountReceived = payd.PaymentUnderpaid, 500 }, "payment_not_cancelable"},
		{func(p *payd.Payment) { p.Status = payd.PaymentSucceeded }, "payment_not_cancelable"},
		{func(p *payd.Payment) { p.Status = payd.PaymentExpired }, "payment_not_cancelable"},
		{func(p *payd.Payment) {
			p.Method = &payd.Method{Rail: payd.RailCrypto, Asset: money.BTC, Network: money.Bitcoin, TxHash: "ab12"}
		}, "payment_in_flight"},
	}
	for _, st := range states {
		id := newID()
		setPayment(t, b, biz, id, st.change)
		c.call(cancel(biz.live, id), 409, st.code)
	}
	// Payments made through a link are the link's; none is made through the
	// API yet, so one is stored directly.
	p, err := payd.NewPayment(biz.biz.ID, payd.PaymentParams{Amount: 1000, Currency: money.USD, LinkID: payd.NewID(payd.PrefixLink),
		FeePayer: money.FeePayerBusiness}, testRates(b.clock.Now()), false, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.db.CreatePayment(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	c.call(cancel(biz.live, p.ID), 409, "payment_not_cancelable")
	wantFields(t, c.data(request{method: "GET", path: "/payments/" + p.ID, key: biz.live}, 200), map[string]any{"url": nil})
}

func testAcceptPayment(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	accept := func(id string) request {
		return request{method: "POST", path: "/payments/" + id + "/accept", key: biz.live}
	}
	d := c.data(payPost(biz.live, map[string]any{"amount": 10_000, "currency": "USD", "customer_email": "acc@example.com"}), 201)
	id, cid := d["id"].(string), d["customer_id"].(string)
	c.call(accept(id), 409, "payment_not_acceptable")
	setPayment(t, b, biz, id, func(p *payd.Payment) {
		p.Status, p.AmountReceived, p.FeeRateBps = payd.PaymentUnderpaid, 9000, 300
		p.Method = &payd.Method{Rail: payd.RailCard, Asset: money.USDC, Network: money.Polygon}
	})
	got := c.data(accept(id), 200)
	wantFields(t, got, map[string]any{"status": "succeeded", "failure_code": nil,
		"reporting": map[string]any{"currency": "USD", "amount": 10_000, "fee": 300, "transaction_fee": 300, "customer_fee": 0, "net": 9700}})
	ev := got["events"].([]any)
	if n := len(ev); ev[n-2].(map[string]any)["type"] != "accepted" || ev[n-1].(map[string]any)["type"] != "succeeded" ||
		jsonBody(ev[n-2].(map[string]any)["data"].(map[string]any)) != `{"previous_status":"underpaid"}` {
		t.Fatalf("events = %v", ev)
	}
	c.call(accept(id), 409, "payment_not_acceptable")
	stats := c.data(request{method: "GET", path: "/customers/" + cid, key: biz.live}, 200)["stats"]
	wantFields(t, stats.(map[string]any), map[string]any{"payments_count": 1, "incomplete_count": 0,
		"volume": map[string]any{"amount": 10_000, "currency": "USD"}, "preferred_rail": "card"})
}

func testPaymentAccess(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	body := map[string]any{"amount": 1000, "currency": "USD"}
	c.call(payPost(biz.test, body), 403, "test_mode_unavailable")
	id := c.data(payPost(biz.live, body), 201)["id"].(string)
	c.data(request{method: "GET", path: "/payments/" + id, key: biz.test}, 200)
	for _, action := range []string{"cancel", "accept"} {
		c.call(request{method: "POST", path: "/payments/" + id + "/" + action, key: biz.test}, 403, "test_mode_unavailable")
	}
	testBiz := b.newBusiness(false)
	c.data(payPost(testBiz.test, body), 201)
	read, write := b.restricted(biz, "payments:read"), b.restricted(biz, "payments:write")
	c.call(payPost(read, body), 403, "permission_denied")
	c.data(request{method: "GET", path: "/payments/" + id, key: read}, 200)
	c.data(payPost(write, body), 201)
	c.call(request{method: "GET", path: "/payments/" + id, key: b.restricted(biz, "customers:read")}, 403, "permission_denied")
	c.call(request{method: "GET", path: "/payments/" + id}, 401, "unauthenticated")

	suspended := b.newBusiness(false)
	at := b.clock.Now()
	if err := b.db.SetBusinessSuspended(context.Background(), suspended.biz.ID, &at); err != nil {
		t.Fatal(err)
	}
	c.call(payPost(suspended.live, body), 403, "business_suspended")
}

// FuzzCreatePayment feeds bodies through the strict decoder and every
// check of POST /payments: whatever the input, the answer is a payment or
// a *payd.Error naming what is wrong, never a panic or another error.
func FuzzCreatePayment(f *testing.F) {
	for _, s := range []string{
		`{"amount":1000,"currency":"USD"}`,
		`{"amount":2500,"currency":"EUR","metadata":{"order":"1","payd_x":"y"},"expires_at":"2031-04-05T07:07:08Z"}`,
		`{"amount":1,"currency":"AUD","customer_email":"a@b.c","customer_name":"x","country":"DE","fee_payer":"customer"}`,
		`{"amount":100000000,"currency":"GBP","reference":"r","success_url":"https://x.example/a?b=c","cancel_url":"http://[::1]:80/"}`,
		`{"amount":1000,"currency":"USD","expires_at":"2031-04-05T06:07:08.123456789+14:00","metadata":{"a":""}}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	x := testRates(now)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createPaymentRequest
		if err := decodeJSON(body, &req); err != nil {
			return
		}
		in, _, err := req.params()
		if err == nil {
			var p *payd.Payment
			if p, err = payd.NewPayment("biz_x", in, x, true, now); err == nil {
				if _, err := json.Marshal((&Server{opts: Options{PublicURL: "http://x"}}).toPayment(p)); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		var pe *payd.Error
		if !errors.As(err, &pe) || statusByCode[pe.Code] != 400 {
			t.Fatalf("error %v is not a 400 payd error", err)
		}
	})
}
