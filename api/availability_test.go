package api

import (
	"testing"

	"payd"
	"payd/chain/devnet"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestAvailability covers what a server without --dev offers (issue 15
// items 12 and 13, CONTRACT.md "Real networks" and "Card rail"): only the
// networks that have an adapter, never the card rail without a card
// provider, and nothing at all when no network has an adapter.
func TestAvailability(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// One network with an adapter, as --chain bitcoin=URL would give.
		b := setupWith(t, db, func(o *Options) {
			o.Dev, o.DevClock = false, nil
			o.Networks = map[money.Network]payd.Network{money.Bitcoin: o.Devnet.(*devnet.Devnet).Network(money.Bitcoin)}
		})
		c := clTest{t, b}
		biz := b.newBusiness(false)
		w := newHDWallet(t)
		keys := map[string]any{}
		for _, k := range w.Keys() {
			keys[string(k.Network())] = k.String()
		}
		c.data(postWallet(biz.live, jsonBody(map[string]any{"keys": keys})), 201)
		settings := request{method: "GET", path: "/checkout-settings", key: biz.live}
		wantFields(t, c.data(settings, 200), map[string]any{"accepted_rails": []any{"crypto"}, "accepted_assets": everyAsset})
		c.call(request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: `{"accepted_rails":["crypto","card"]}`},
			400, "rail_unavailable", "accepted_rails")
		c.data(request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: `{"quote_minutes":20}`}, 200)

		l := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"Tea","amount":1000,"currency":"USD"}`}, 201)
		code := l["code"].(string)
		d := c.data(request{method: "GET", path: "/public/links/" + code}, 200)
		wantFields(t, d, map[string]any{"accepting_payments": true, "accepted_rails": []any{"crypto"}, "card": []any{}})
		if cr := d["crypto"].([]any); len(cr) != 1 || cr[0].(map[string]any)["network"] != "bitcoin" {
			t.Fatalf("crypto offers networks without an adapter: %v", cr)
		}
		open := func(rail, asset, network string) request {
			return request{method: "POST", path: "/checkouts", header: map[string]string{"Idempotency-Key": "k-" + rail + asset + network},
				body: jsonBody(map[string]any{"link_code": code, "rail": rail, "asset": asset, "network": network})}
		}
		c.call(open("crypto", "USDC", "polygon"), 400, "asset_unavailable")
		c.call(open("crypto", "ETH", "ethereum"), 400, "asset_unavailable")
		c.call(open("card", "USDC", "polygon"), 400, "rail_unavailable")
		c.data(open("crypto", "BTC", "bitcoin"), 201)

		// No network at all: what payd serve without --dev has today.
		none := setupWith(t, db, func(o *Options) { o.Dev, o.DevClock, o.Networks = false, nil, nil })
		cn := clTest{t, none}
		d = cn.data(request{method: "GET", path: "/public/links/" + code}, 200)
		wantFields(t, d, map[string]any{"accepting_payments": false, "accepted_rails": []any{}, "crypto": []any{}, "card": []any{}})
		p := cn.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)
		wantFields(t, cn.data(request{method: "GET", path: "/public/payments/" + p["code"].(string)}, 200),
			map[string]any{"accepting_payments": false, "crypto": []any{}, "card": []any{}})
		cn.call(open("crypto", "USDT", "tron"), 400, "asset_unavailable")
	})
}
