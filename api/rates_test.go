package api

import (
	"context"
	"fmt"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// downRates is a rate provider whose sources are all unreachable and that
// has no snapshot to fall back on.
type downRates struct{}

func (downRates) Latest(context.Context) (*payd.ExchangeRates, error) {
	return nil, payd.Errorf(payd.ErrUpstreamUnavailable, "no exchange rates are available right now")
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
