package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestPublicLink covers GET /public/links/{code} (spec 2.6, 2.7, 4.5) on both databases.
func TestPublicLink(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(false)
		newLink := func(tb *testBusiness, amount int, currency string) map[string]any {
			return c.data(request{method: "POST", path: "/links", key: tb.live, body: jsonBody(map[string]any{
				"name": "Poster", "description": "A1 print", "amount": amount, "currency": currency})}, 201)
		}
		pub := func(code string) request { return request{method: "GET", path: "/public/links/" + code} }
		l := newLink(biz, 10_000, "USD")
		d := c.data(pub(l["code"].(string)), 200)
		wantFields(t, d, map[string]any{"kind": "public_link", "code": l["code"], "name": "Poster", "description": "A1 print",
			"amount": 10_000, "currency": "USD", "accepting_payments": true, "collect_email": false,
			"accepted_rails": []any{"crypto"}, "quote_minutes": 15, "request": nil,
			"business": map[string]any{"name": "Ada's Books", "website": nil, "support_email": nil, "accent_color": nil, "logo_url": nil}})
		noIDs(t, d)
		nearly(t, d["quote_expires_at"], b.clock.Now().Add(15*time.Minute))
		usd := func(price, total int, fee, networkFee any) map[string]any {
			return map[string]any{"currency": "USD", "price": price, "processing_fee": fee, "network_fee": networkFee, "total": total}
		}
		// network is the devnet's fee estimate in US cents (chain/devnet/fee.go).
		crypto := func(asset, network, amount string, rate, networkFee int) map[string]any {
			return map[string]any{"asset": asset, "network": network, "amount": amount,
				"rate": map[string]any{"amount": rate, "currency": "USD"}, "breakdown": usd(10_000, 10_000, nil, networkFee)}
		}
		// 100.00 USD at BTC 64,000.00, ETH 3,200.00, SOL 150.00; stablecoins at 1.00.
		wantFields(t, d, map[string]any{"crypto": []any{
			crypto("USDC", "polygon", "100.00", 100, 1), crypto("USDC", "ethereum", "100.00", 100, 104),
			crypto("USDC", "solana", "100.00", 100, 1), crypto("USDT", "tron", "100.00", 100, 172),
			crypto("USDT", "ethereum", "100.00", 100, 104), crypto("USDT", "solana", "100.00", 100, 1),
			crypto("BTC", "bitcoin", "0.00156250", 6_400_000, 90), crypto("ETH", "ethereum", "0.031250", 320_000, 34),
			crypto("SOL", "solana", "0.6667", 15_000, 1)},
			// No card provider is configured: nothing offers the card rail.
			"card": []any{}})

		// EUR at 1.08: BTC quoted on 108.00 USD, its 0.90 USD network fee
		// shown as 0.83 EUR; crypto carries no processing fee.
		patch := func(body string) {
			c.data(request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: body}, 200)
		}
		patch(`{"fee_payer":"customer","accepted_assets":{"bitcoin":["BTC"]},"quote_minutes":5,"collect_email":true}`)
		eur := newLink(biz, 10_000, "EUR")
		d = c.data(pub(eur["code"].(string)), 200)
		nearly(t, d["quote_expires_at"], b.clock.Now().Add(5*time.Minute))
		wantFields(t, d, map[string]any{"quote_minutes": 5, "collect_email": true,
			"crypto": []any{map[string]any{"asset": "BTC", "network": "bitcoin", "amount": "0.00168750",
				"rate":      map[string]any{"amount": 5_925_926, "currency": "EUR"},
				"breakdown": map[string]any{"currency": "EUR", "price": 10_000, "processing_fee": nil, "network_fee": 83, "total": 10_000}}},
			"card": []any{}})
		// Asking for the card rail is refused while no card provider is configured.
		c.call(request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: `{"accepted_rails":["card"]}`},
			400, "rail_unavailable", "accepted_rails")

		t.Run("not found", func(t *testing.T) {
			c.call(pub("nope"), 404, "not_found")
			archived := newLink(biz, 1000, "USD")
			c.data(request{method: "POST", path: "/links/" + archived["id"].(string) + "/archive", key: biz.live}, 200)
			c.call(pub(archived["code"].(string)), 404, "not_found")
			p := c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)
			c.call(pub(p["code"].(string)), 404, "not_found")
		})
		t.Run("suspended business", func(t *testing.T) {
			sb := b.newBusiness(false)
			l := newLink(sb, 1000, "USD")
			at := b.clock.Now()
			if err := db.SetBusinessSuspended(context.Background(), sb.biz.ID, &at); err != nil {
				t.Fatal(err)
			}
			wantFields(t, c.data(pub(l["code"].(string)), 200), map[string]any{"accepting_payments": false, "crypto": []any{}, "card": []any{}})
		})
		t.Run("business contact", func(t *testing.T) {
			cb := b.newBusiness(false)
			biz, err := payd.NewBusiness("Shop With Site", "owner@shop.example", false, b.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			biz.Website, biz.SupportEmail = "https://shop.example", "help@shop.example"
			secret, key := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, b.clock.Now())
			if err := db.CreateBusiness(context.Background(), biz); err != nil {
				t.Fatal(err)
			}
			if err := db.CreateAPIKey(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			cb.live = secret
			l := newLink(cb, 1000, "USD")
			wantFields(t, c.data(pub(l["code"].(string)), 200), map[string]any{"business": map[string]any{
				"name": "Shop With Site", "website": "https://shop.example", "support_email": "help@shop.example", "accent_color": nil, "logo_url": nil}})
		})
		t.Run("a wrong key is refused even here", func(t *testing.T) {
			c.call(request{method: "GET", path: "/public/links/" + l["code"].(string), key: "sk_live_nope"}, 401, "invalid_api_key")
		})
	})
}

// TestCardOptionFor prices the card rail as a page would offer it once a
// card provider is configured (none is yet, so no server offers it).
func TestCardOptionFor(t *testing.T) {
	usd, eur := money.MustRate("1"), money.MustRate("1.08")
	for _, tc := range []struct {
		price         int64
		cur           money.Currency
		rate          money.Rate
		payer         money.FeePayer
		lo, hi, total int64
		fee           *int64
		available     bool
	}{
		{10_000, money.USD, usd, money.FeePayerBusiness, 500, 1_000_000, 10_000, nil, true},
		// 3% of 108.00 USD = 3.24 USD = 3.00 EUR passed on; limits 4.63 (rounded up) to
		// 9,259.25 EUR (rounded down: 9,259.26 EUR would be worth more than 10,000.00 USD).
		{10_000, money.EUR, eur, money.FeePayerCustomer, 463, 925_925, 10_300, ptrTo(int64(300)), true},
		// 4.00 USD is below 5.00 even with the fee.
		{400, money.USD, usd, money.FeePayerCustomer, 500, 1_000_000, 412, ptrTo(int64(12)), false},
		{2000, money.USD, usd, money.FeePayerCustomer, 500, 1_000_000, 2060, ptrTo(int64(60)), true},
	} {
		got, err := cardOptionFor(tc.price, tc.cur, tc.payer, tc.rate, payd.CardLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Min.Amount != tc.lo || got.Max.Amount != tc.hi || got.Total.Amount != tc.total || got.Available != tc.available ||
			(got.Breakdown.ProcessingFee == nil) != (tc.fee == nil) || tc.fee != nil && *got.Breakdown.ProcessingFee != *tc.fee {
			t.Errorf("cardOptionFor(%d %s, %s) = %+v", tc.price, tc.cur, tc.payer, got)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestPublicPayment covers GET /public/payments/{code} on both databases.
func TestPublicPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(false)
		pub := func(code string) request { return request{method: "GET", path: "/public/payments/" + code} }
		exp := b.clock.Now().Add(time.Hour).Truncate(time.Millisecond)
		p := c.data(payPost(biz.live, map[string]any{"amount": 2000, "currency": "USD", "description": "Tea",
			"fee_payer": "customer", "success_url": "https://tea.example/ok", "expires_at": exp.Format(time.RFC3339Nano),
			"metadata": map[string]any{"secret": "internal"}, "customer_email": "t@example.com"}), 201)
		d := c.data(pub(p["code"].(string)), 200)
		wantFields(t, d, map[string]any{"kind": "public_payment", "id": p["id"], "code": p["code"], "status": "pending",
			"amount": 2000, "currency": "USD", "amount_received": 0, "description": "Tea", "success_url": "https://tea.example/ok",
			"cancel_url": nil, "expires_at": Time(exp), "canceled_at": nil, "checkout_id": nil, "accepting_payments": true})
		wantFields(t, d, map[string]any{"card": []any{}})
		if s := string(c.b.do(pub(p["code"].(string))).body); strings.Contains(s, "internal") || strings.Contains(s, "t@example.com") ||
			strings.Contains(s, "cst_") || strings.Contains(s, "biz_") {
			t.Fatalf("the public view leaks metadata, customer or business ids: %s", s)
		}
		c.call(pub("nope"), 404, "payment_not_found")
		c.data(request{method: "POST", path: "/payments/" + p["id"].(string) + "/cancel", key: biz.live}, 200)
		d = c.data(pub(p["code"].(string)), 200)
		wantFields(t, d, map[string]any{"status": "failed", "accepting_payments": false, "crypto": []any{}, "card": []any{}})
		if d["canceled_at"] == nil {
			t.Fatalf("canceled_at is null after cancel: %v", d)
		}
		q := c.data(payPost(biz.live, map[string]any{"amount": 2000, "currency": "USD", "expires_at": exp.Format(time.RFC3339Nano)}), 201)
		b.clock.Advance(time.Hour)
		wantFields(t, c.data(pub(q["code"].(string)), 200), map[string]any{"status": "pending", "accepting_payments": false})
	})
}

// noIDs fails when a public view holds an id field or an object id.
func noIDs(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "id" || strings.HasSuffix(k, "_id") {
				t.Errorf("public view has %s", k)
			}
			noIDs(t, e)
		}
	case []any:
		for _, e := range x {
			noIDs(t, e)
		}
	case string:
		for _, p := range []string{"lnk_", "biz_", "cst_", "pmt_"} {
			if strings.HasPrefix(x, p) {
				t.Errorf("public view holds an id %s", x)
			}
		}
	}
}

// nearly fails unless the wire timestamp v is within two seconds of want:
// the test clock runs in real time.
func nearly(t *testing.T, v any, want time.Time) {
	t.Helper()
	s, _ := v.(string)
	got, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || got.Sub(want).Abs() > 2*time.Second {
		t.Fatalf("timestamp %v, want about %v", v, want)
	}
}
