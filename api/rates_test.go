package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// downRates is a rate provider whose sources are all unreachable and that
// has no snapshot to fall back on.
type downRates struct{}

func (downRates) Latest(context.Context) (*payd.ExchangeRates, error) {
	return nil, payd.Errorf(payd.ErrUpstreamUnavailable, "no exchange rates are available right now")
}

func (d downRates) Fresh(ctx context.Context) (*payd.ExchangeRates, error) { return d.Latest(ctx) }

func (downRates) ByID(context.Context, string) (*payd.ExchangeRates, error) {
	return nil, payd.Errorf(payd.ErrNotFound, "no exchange rates")
}

// TestUSDNeedsNoRate is issue 15's item 11: with every rate source down, a
// USD price converts at the fixed rates (USD 1, stablecoins 100 cents), so
// payments, links, USDC checkouts and the public offer of a USD price still
// work; only conversions that need a market rate (EUR, ETH) answer 503
// upstream_unavailable.
func TestUSDNeedsNoRate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(false)
		keys := map[string]any{}
		for _, k := range newHDWallet(t).Keys() {
			keys[string(k.Network())] = k.String()
		}
		c.data(postWallet(biz.live, jsonBody(map[string]any{"keys": keys})), 201)
		b.srv.rates = downRates{}
		n := 0
		open := func(target, id, asset, network string) request {
			n++
			return request{method: "POST", path: "/checkouts", header: map[string]string{"Idempotency-Key": fmt.Sprint("rates-", n)},
				body: jsonBody(map[string]any{target: id, "rail": "crypto", "asset": asset, "network": network})}
		}
		link := func(currency string) request {
			return request{method: "POST", path: "/links", key: biz.live,
				body: jsonBody(map[string]any{"name": "Poster", "amount": 1500, "currency": currency})}
		}

		p := c.data(payPost(biz.live, map[string]any{"amount": 1500, "currency": "USD"}), 201)
		wantFields(t, p, map[string]any{"reporting": map[string]any{"currency": "USD", "amount": 1500, "fee": nil,
			"transaction_fee": 0, "customer_fee": 0, "net": 1500}})
		c.call(payPost(biz.live, map[string]any{"amount": 1500, "currency": "EUR"}), 503, "upstream_unavailable")

		chk := c.data(open("payment_id", p["id"].(string), "USDC", "polygon"), 201)
		wantFields(t, chk["crypto"].(map[string]any), map[string]any{"amount": "15.00", "rate": map[string]any{"amount": 100, "currency": "USD"}})
		c.call(open("payment_id", p["id"].(string), "ETH", "ethereum"), 503, "upstream_unavailable")

		l := c.data(link("USD"), 201)
		c.call(link("EUR"), 503, "upstream_unavailable")
		c.data(open("link_code", l["code"].(string), "USDT", "tron"), 201)
		offer := c.data(request{method: "GET", path: "/public/links/" + l["code"].(string)}, 200)
		for _, o := range offer["crypto"].([]any) {
			if a := o.(map[string]any)["asset"]; a != "USDC" && a != "USDT" {
				t.Errorf("%s is offered without a rate to price it", a)
			}
		}
		if len(offer["crypto"].([]any)) != 6 || len(offer["card"].([]any)) != 0 {
			t.Errorf("a USD link offers %d coins and %d cards without rates, want the 6 stablecoin networks and no card (no card provider)",
				len(offer["crypto"].([]any)), len(offer["card"].([]any)))
		}
	})
}

// staleRates has a snapshot, but none fresh enough to quote from: every
// source has been down past its freshness limit for over the max age.
type staleRates struct{ x *payd.ExchangeRates }

func (s staleRates) Latest(context.Context) (*payd.ExchangeRates, error) { return s.x, nil }
func (s staleRates) Fresh(context.Context) (*payd.ExchangeRates, error) {
	return nil, payd.Errorf(payd.ErrUpstreamUnavailable, "exchange rates are 11m0s old")
}
func (s staleRates) ByID(ctx context.Context, id string) (*payd.ExchangeRates, error) {
	return fixedRates(s).ByID(ctx, id)
}

// explainedRates is testRates as the refresher makes it: with fee coins
// and how it was made.
func explainedRates(now time.Time) *payd.ExchangeRates {
	x := testRates(now.Add(-90 * time.Second))
	x.Coins[money.POL], x.Coins[money.TRX] = 71, 12
	x.Detail = &payd.RateDetail{
		Sources: []payd.SourceState{
			{Name: "coinbase", Status: payd.SourceAnswered, AsOf: x.CreatedAt, Dropped: []payd.DroppedValue{
				// Stored before drop reasons were kept: an outlier.
				{Code: "BTC", Value: money.MustRate("80000"), Median: money.MustRate("64000.5"), DeviationBps: 2499}}},
			{Name: "kraken", Status: payd.SourceCached, AsOf: x.CreatedAt.Add(-time.Minute), Dropped: []payd.DroppedValue{
				{Code: "TRX", Reason: payd.DropImplausible, Value: money.MustRate("5000")}}},
			{Name: "coingecko", Status: payd.SourceFailed, Error: payd.SourceErrHTTPStatus, HTTPStatus: 429},
			{Name: "ecb", Status: payd.SourceAnswered, AsOf: x.CreatedAt.Truncate(24 * time.Hour)},
			// Stored before errors were kept as categories: the text is
			// never shown.
			{Name: "bankofcanada", Status: payd.SourceFailed, Error: `rate: bankofcanada: HTTP 500: "<html>internal</html>"`},
		},
		Values: map[string]payd.ValueState{"BTC": {Sources: 2, SpreadBps: 3, AsOf: x.CreatedAt.Add(-time.Minute)},
			"EUR": {Sources: 1, AsOf: x.CreatedAt.Truncate(24 * time.Hour), Note: payd.ValueCarried}, "POL": {Sources: 1}},
	}
	return x
}

// TestExchangeRatesShowHowTheyWereMade is issue 17's visibility: which
// sources answered, the spread, the ages; and a checkout names the
// snapshot it was quoted from, readable by id.
func TestExchangeRatesShowHowTheyWereMade(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		x := explainedRates(b.clock.Now())
		b.srv.rates = fixedRates{x}
		got := c.data(request{method: "GET", path: "/exchange-rates"}, 200)
		wantFields(t, got, map[string]any{"id": x.ID, "age_seconds": 90,
			"fee_coins": map[string]any{"POL": map[string]any{"price_usd": 71}, "TRX": map[string]any{"price_usd": 12}},
			"values": map[string]any{"BTC": map[string]any{"sources": 2, "spread_bps": 3, "note": nil,
				"as_of": x.CreatedAt.Add(-time.Minute).UTC().Format(timeLayout)},
				"EUR": map[string]any{"sources": 1, "spread_bps": 0, "note": "carried", "as_of": x.CreatedAt.Truncate(24 * time.Hour).UTC().Format(timeLayout)},
				"POL": map[string]any{"sources": 1, "spread_bps": 0, "as_of": nil, "note": nil}}})
		if _, ok := got["coins"].(map[string]any)["TRX"]; ok {
			t.Error("a fee coin is listed among the coins")
		}
		srcs := got["sources"].([]any)
		wantFields(t, srcs[0].(map[string]any), map[string]any{"name": "coinbase", "status": "answered", "age_seconds": 0,
			"error": nil, "http_status": nil, "dropped": []any{map[string]any{"code": "BTC", "reason": "outlier", "value": 80000,
				"median": 64000.5, "deviation_bps": 2499}}})
		wantFields(t, srcs[1].(map[string]any), map[string]any{"name": "kraken", "status": "cached", "age_seconds": 60,
			"dropped": []any{map[string]any{"code": "TRX", "reason": "implausible", "value": 5000, "median": nil, "deviation_bps": 0}}})
		wantFields(t, srcs[2].(map[string]any), map[string]any{"name": "coingecko", "status": "failed", "as_of": nil,
			"age_seconds": nil, "error": "http_status", "http_status": 429})
		wantFields(t, srcs[4].(map[string]any), map[string]any{"name": "bankofcanada", "status": "failed",
			"error": "other", "http_status": nil})

		one := c.data(request{method: "GET", path: "/exchange-rates/" + x.ID}, 200)
		wantFields(t, one, map[string]any{"id": x.ID, "kind": "exchange_rates"})
		c.call(request{method: "GET", path: "/exchange-rates/xr_gone"}, 404, "not_found")

		// A checkout in a coin names its snapshot; a USD price in USDC needs none.
		biz := b.newBusiness(false)
		keys := map[string]any{}
		for _, k := range newHDWallet(t).Keys() {
			keys[string(k.Network())] = k.String()
		}
		c.data(postWallet(biz.live, jsonBody(map[string]any{"keys": keys})), 201)
		p := c.data(payPost(biz.live, map[string]any{"amount": 1500, "currency": "USD"}), 201)
		open := func(asset, network, idem string) map[string]any {
			return c.data(request{method: "POST", path: "/checkouts", header: map[string]string{"Idempotency-Key": idem},
				body: jsonBody(map[string]any{"payment_id": p["id"], "rail": "crypto", "asset": asset, "network": network})}, 201)
		}
		btc := open("BTC", "bitcoin", "xr-btc")["crypto"].(map[string]any)
		if btc["exchange_rates_id"] != x.ID {
			t.Errorf("BTC checkout crypto = %v, want exchange_rates_id %s", btc, x.ID)
		}
		usdc := open("USDC", "polygon", "xr-usdc")["crypto"].(map[string]any)
		if id, ok := usdc["exchange_rates_id"]; ok {
			t.Errorf("a USD price in USDC names snapshot %v", id)
		}
	})
}

// TestStaleRatesRefuseACoinCheckout is issue 17's "all sources stale":
// with a snapshot too old to quote from, a checkout in BTC answers 503
// upstream_unavailable, one in USDC for a USD price still opens, and GET
// /exchange-rates still shows the old snapshot and its age.
func TestStaleRatesRefuseACoinCheckout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(false)
		keys := map[string]any{}
		for _, k := range newHDWallet(t).Keys() {
			keys[string(k.Network())] = k.String()
		}
		c.data(postWallet(biz.live, jsonBody(map[string]any{"keys": keys})), 201)
		x := testRates(b.clock.Now().Add(-11 * time.Minute))
		b.srv.rates = staleRates{x}
		p := c.data(payPost(biz.live, map[string]any{"amount": 1500, "currency": "USD"}), 201)
		open := func(asset, network, idem string) request {
			return request{method: "POST", path: "/checkouts", header: map[string]string{"Idempotency-Key": idem},
				body: jsonBody(map[string]any{"payment_id": p["id"], "rail": "crypto", "asset": asset, "network": network})}
		}
		c.call(open("BTC", "bitcoin", "stale-btc"), 503, "upstream_unavailable")
		chk := c.data(open("USDC", "polygon", "stale-usdc"), 201)
		wantFields(t, chk["crypto"].(map[string]any), map[string]any{"amount": "15.00"})
		got := c.data(request{method: "GET", path: "/exchange-rates"}, 200)
		wantFields(t, got, map[string]any{"id": x.ID, "age_seconds": 660})
	})
}

// TestBanksDisagreeOnAUD is one bad value from a central bank: the
// snapshot is made without AUD (its sources disagreed and nothing could be
// carried), so a USD price still opens a BTC checkout while an AUD price,
// link or payment, answers 503 upstream_unavailable (docs/rates.md, "When
// sources disagree").
func TestBanksDisagreeOnAUD(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		x := testRates(b.clock.Now())
		delete(x.Fiat, money.AUD)
		b.srv.rates = fixedRates{x}
		biz := b.newBusiness(false)
		keys := map[string]any{}
		for _, k := range newHDWallet(t).Keys() {
			keys[string(k.Network())] = k.String()
		}
		c.data(postWallet(biz.live, jsonBody(map[string]any{"keys": keys})), 201)
		p := c.data(payPost(biz.live, map[string]any{"amount": 1500, "currency": "USD"}), 201)
		chk := c.data(request{method: "POST", path: "/checkouts", header: map[string]string{"Idempotency-Key": "aud-btc"},
			body: jsonBody(map[string]any{"payment_id": p["id"], "rail": "crypto", "asset": "BTC", "network": "bitcoin"})}, 201)
		if chk["crypto"].(map[string]any)["exchange_rates_id"] != x.ID {
			t.Errorf("BTC checkout %v", chk["crypto"])
		}
		c.data(payPost(biz.live, map[string]any{"amount": 1500, "currency": "EUR"}), 201)
		c.call(payPost(biz.live, map[string]any{"amount": 1500, "currency": "AUD"}), 503, "upstream_unavailable")
		c.call(request{method: "POST", path: "/links", key: biz.live,
			body: jsonBody(map[string]any{"name": "Poster", "amount": 1500, "currency": "AUD"})}, 503, "upstream_unavailable")
		got := c.data(request{method: "GET", path: "/exchange-rates"}, 200)
		if _, ok := got["fiat"].(map[string]any)["AUD"]; ok {
			t.Errorf("fiat %v", got["fiat"])
		}
	})
}
