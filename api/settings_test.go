package api

import (
	"errors"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// everyAsset is the default accepted_assets: every coin on every network it moves on.
var everyAsset = map[string]any{"bitcoin": []any{"BTC"}, "ethereum": []any{"USDC", "USDT", "ETH"},
	"polygon": []any{"USDC"}, "solana": []any{"USDC", "USDT", "SOL"}, "tron": []any{"USDT"}}

// TestCheckoutSettings covers GET and PATCH /checkout-settings on both databases.
func TestCheckoutSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(true)
		get := func(key string) request { return request{method: "GET", path: "/checkout-settings", key: key} }
		patch := func(key, body string) request {
			return request{method: "PATCH", path: "/checkout-settings", key: key, body: body}
		}
		defaults := map[string]any{"kind": "checkout_settings", "quote_minutes": 15, "collect_email": false,
			"fee_payer": "business", "accepted_rails": []any{"crypto"}, "accepted_assets": everyAsset, "updated_at": nil}
		wantFields(t, c.data(get(biz.live), 200), defaults)
		wantFields(t, c.data(get(biz.test), 200), defaults)

		got := c.data(patch(biz.live, `{"quote_minutes":30,"collect_email":true}`), 200)
		if got["updated_at"] == nil {
			t.Fatalf("updated_at is null after a change: %v", got)
		}
		want := map[string]any{"quote_minutes": 30, "collect_email": true, "fee_payer": "business",
			"accepted_rails": []any{"crypto"}, "accepted_assets": everyAsset, "updated_at": got["updated_at"]}
		wantFields(t, got, want)
		wantFields(t, c.data(get(biz.live), 200), want)

		// No card provider is configured: the card rail cannot be accepted.
		c.call(patch(biz.live, `{"accepted_rails":["card","crypto"]}`), 400, "rail_unavailable", "accepted_rails")
		got = c.data(patch(biz.live, `{"fee_payer":"customer","accepted_rails":["crypto"],"quote_minutes":null,
			"accepted_assets":{"solana":["SOL","USDC"],"tron":[],"bitcoin":["BTC"]}}`), 200)
		wantFields(t, got, map[string]any{"quote_minutes": 30, "fee_payer": "customer", "accepted_rails": []any{"crypto"},
			"accepted_assets": map[string]any{"solana": []any{"USDC", "SOL"}, "bitcoin": []any{"BTC"}}})

		for body, field := range map[string]string{
			`{"quote_minutes":0}`:                           "quote_minutes",
			`{"quote_minutes":61}`:                          "quote_minutes",
			`{"quote_minutes":"15"}`:                        "quote_minutes",
			`{"fee_payer":"nobody"}`:                        "fee_payer",
			`{"accepted_rails":[]}`:                         "accepted_rails",
			`{"accepted_rails":["cash"]}`:                   "accepted_rails",
			`{"accepted_rails":["card","card"]}`:            "accepted_rails",
			`{"accepted_assets":{}}`:                        "accepted_assets",
			`{"accepted_assets":{"tron":[]}}`:               "accepted_assets",
			`{"accepted_assets":{"ethereum":["BTC"]}}`:      "accepted_assets.ethereum",
			`{"accepted_assets":{"dogecoin":["DOGE"]}}`:     "accepted_assets.dogecoin",
			`{"accepted_assets":{"solana":["SOL","SOL"]}}`:  "accepted_assets.solana",
			`{"accepted_assets":{"polygon":["usdc"]}}`:      "accepted_assets.polygon",
			`{"accepted_assets":{"polygon":"USDC"}}`:        "accepted_assets.polygon",
			`{"collect_email":true,"accepted_rails":["x"]}`: "accepted_rails",
		} {
			c.call(patch(biz.live, body), 400, "invalid_request", field)
		}
		// A refused change leaves everything as it was.
		wantFields(t, c.data(get(biz.live), 200), map[string]any{"quote_minutes": 30, "collect_email": true})

		c.call(patch(biz.test, `{"quote_minutes":5}`), 403, "test_mode_unavailable")
		testBiz := b.newBusiness(false)
		c.data(patch(testBiz.test, `{"quote_minutes":5}`), 200)
		read := b.restricted(biz, "checkout_settings:read")
		c.data(get(read), 200)
		c.call(patch(read, `{}`), 403, "permission_denied")
		c.data(patch(b.restricted(biz, "checkout_settings:write"), `{}`), 200)
		c.call(get(b.restricted(biz, "payments:write")), 403, "permission_denied")
		c.call(get(""), 401, "unauthenticated")
	})
}

// FuzzCheckoutSettingsPatch feeds bodies through the strict decoder and the
// settings rules: any input ends in valid settings or a 400 error naming
// the problem, never a panic.
func FuzzCheckoutSettingsPatch(f *testing.F) {
	for _, s := range []string{`{"quote_minutes":30}`, `{"accepted_assets":{"solana":["SOL","USDC"],"tron":[]}}`,
		`{"accepted_rails":["card","card"]}`, `{"fee_payer":"customer","collect_email":true}`, `{"accepted_assets":{"x":["BTC"]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req patchSettingsRequest
		if err := decodeJSON(body, &req); err != nil {
			return
		}
		cs := payd.DefaultCheckoutSettings("biz_x")
		req.apply(cs)
		err := cs.Validate()
		if err == nil {
			if len(cs.Offers()) == 0 || len(cs.AcceptedRails) == 0 {
				t.Fatalf("accepted settings that offer nothing: %+v", cs)
			}
			return
		}
		var pe *payd.Error
		if !errors.As(err, &pe) || statusByCode[pe.Code] != 400 {
			t.Fatalf("error %v is not a 400 payd error", err)
		}
	})
}
