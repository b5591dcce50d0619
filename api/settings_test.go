package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"image"
	"image/png"
	"strings"
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

// TestCheckoutBranding covers the checkout settings' branding (display_name,
// accent_color, support_email) and what the public pages' answers show of
// it, on both databases.
func TestCheckoutBranding(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(false)
		patch := func(body string) request {
			return request{method: "PATCH", path: "/checkout-settings", key: biz.live, body: body}
		}
		get := request{method: "GET", path: "/checkout-settings", key: biz.live}
		wantFields(t, c.data(get, 200), map[string]any{"display_name": nil, "accent_color": nil, "support_email": nil})
		l := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"Poster","amount":1000,"currency":"USD"}`}, 201)
		pub := request{method: "GET", path: "/public/links/" + l["code"].(string)}

		got := c.data(patch(`{"display_name":"  Ada’s Books & Maps ","accent_color":"#7A1F5C","support_email":"help@ada.example"}`), 200)
		want := map[string]any{"display_name": "Ada’s Books & Maps", "accent_color": "#7a1f5c", "support_email": "help@ada.example",
			"quote_minutes": 15}
		wantFields(t, got, want)
		wantFields(t, c.data(get, 200), want)
		wantFields(t, c.data(pub, 200), map[string]any{"business": map[string]any{"name": "Ada’s Books & Maps",
			"website": nil, "support_email": "help@ada.example", "accent_color": "#7a1f5c", "logo_url": nil}})

		// Leaving the fields out keeps them; a colour short of 4.5:1 on white is refused with its contrast.
		wantFields(t, c.data(patch(`{"quote_minutes":20}`), 200), want2(want, "quote_minutes", 20))
		r := c.call(patch(`{"accent_color":"#ffcc00"}`), 400, "invalid_request", "accent_color")
		if msg := r["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "1.5:1") || !strings.Contains(msg, "4.5:1") {
			t.Fatalf("contrast refusal says %q", msg)
		}
		for body, field := range map[string]string{
			`{"accent_color":"#767676"}`:                          "", // 4.54:1, just enough
			`{"accent_color":"#777777"}`:                          "accent_color",
			`{"accent_color":"red"}`:                              "accent_color",
			`{"accent_color":"#12345"}`:                           "accent_color",
			`{"accent_color":"#12345g"}`:                          "accent_color",
			`{"accent_color":1}`:                                  "accent_color",
			`{"support_email":"not an email"}`:                    "support_email",
			`{"display_name":"` + strings.Repeat("n", 101) + `"}`: "display_name",
			`{"display_name":"a\u0007b"}`:                         "display_name",
		} {
			if field == "" {
				c.data(patch(body), 200)
				continue
			}
			c.call(patch(body), 400, "invalid_request", field)
		}
		// null and "" clear them: the business's own name shows again.
		got = c.data(patch(`{"display_name":null,"accent_color":"","support_email":null}`), 200)
		wantFields(t, got, map[string]any{"display_name": nil, "accent_color": nil, "support_email": nil})
		wantFields(t, c.data(pub, 200), map[string]any{"business": map[string]any{"name": "Ada's Books",
			"website": nil, "support_email": nil, "accent_color": nil, "logo_url": nil}})
		c.call(patch(`{"accent_color":"#000000"}`), 200)
		read := b.restricted(biz, "checkout_settings:read")
		c.call(request{method: "PATCH", path: "/checkout-settings", key: read, body: `{"accent_color":"#000000"}`}, 403, "permission_denied")
	})
}

// want2 is want with one field changed.
func want2(want map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range want {
		if kk != k {
			out[kk] = vv
		}
	}
	return out
}

// pngOf is a w×h PNG in one colour.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i % 251)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCheckoutLogo covers POST and DELETE /checkout-settings/logo, the
// logo_url of the settings and of the public answers, and GET
// /public/checkout-logos/{digest}, on both databases.
func TestCheckoutLogo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(true)
		upload := func(key string, data []byte) request {
			return request{method: "POST", path: "/checkout-settings/logo", key: key,
				body: jsonBody(map[string]any{"data": base64.StdEncoding.EncodeToString(data)})}
		}
		img := pngOf(t, 64, 32)
		sum := sha256.Sum256(img)
		digest := hex.EncodeToString(sum[:16])
		got := c.data(upload(biz.live, img), 200)
		url, _ := got["logo_url"].(string)
		if !strings.HasSuffix(url, "/static/logo/"+digest+".png") {
			t.Fatalf("logo_url %v", got["logo_url"])
		}
		wantFields(t, c.data(request{method: "GET", path: "/checkout-settings", key: biz.live}, 200), map[string]any{"logo_url": url})
		l := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"Poster","amount":1000,"currency":"USD"}`}, 201)
		pub := c.data(request{method: "GET", path: "/public/links/" + l["code"].(string)}, 200)
		if pub["business"].(map[string]any)["logo_url"] != url {
			t.Fatalf("public business %v", pub["business"])
		}
		wantFields(t, c.data(request{method: "GET", path: "/public/checkout-logos/" + digest}, 200), map[string]any{
			"kind": "checkout_logo", "digest": digest, "content_type": "image/png", "data": base64.StdEncoding.EncodeToString(img)})
		c.call(request{method: "GET", path: "/public/checkout-logos/00112233445566778899aabbccddeeff"}, 404, "not_found")

		big := make([]byte, payd.MaxLogoBytes+1)
		copy(big, img)
		for name, data := range map[string][]byte{"empty": {}, "text": []byte("not an image"), "too big": big,
			"cut short": img[:len(img)/2], "too wide": pngOf(t, payd.MaxLogoSide+1, 1),
			"gif": []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")} {
			t.Run(name, func(t *testing.T) { c.call(upload(biz.live, data), 400, "invalid_request", "data") })
		}
		c.call(request{method: "POST", path: "/checkout-settings/logo", key: biz.live, body: `{"data":"!!"}`}, 400, "invalid_request", "data")
		c.call(upload(biz.test, img), 403, "test_mode_unavailable")
		c.call(upload(b.restricted(biz, "checkout_settings:read"), img), 403, "permission_denied")

		del := request{method: "DELETE", path: "/checkout-settings/logo", key: biz.live}
		wantFields(t, c.data(del, 200), map[string]any{"logo_url": nil})
		wantFields(t, c.data(del, 200), map[string]any{"logo_url": nil})
		c.call(request{method: "GET", path: "/public/checkout-logos/" + digest}, 404, "not_found")
	})
}
