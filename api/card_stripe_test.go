package api

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"payd/card/stripe"
	"payd/card/stripe/stripetest"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

// TestCardStripe walks a card checkout through payd's Stripe provider
// against Stripe's replayed answers (card/stripe/testdata): the session is
// minted with the net coin locked to the deposit, and Stripe's signed
// webhooks move the checkout, out of order, replayed, badly signed and
// about a session payd never opened, on both databases.
func TestCardStripe(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		api := stripetest.New(t, "../card/stripe/testdata")
		prov, err := stripe.New(stripe.Config{SecretKey: stripetest.SecretKey, WebhookSecret: stripetest.WebhookSecret,
			BaseURL: api.URL, HTTPClient: &http.Client{Timeout: 5 * time.Second}, Clock: s.b.clock})
		if err != nil {
			t.Fatal(err)
		}
		s.b.srv.opts.Card = prov
		p := s.payment(10_000, nil)
		chk := s.c.data(s.checkoutReq("payment_id", p["id"].(string), "USDC", "polygon",
			map[string]any{"rail": "card", "email": "a@example.com"}), 201)
		cid, card := chk["id"].(string), chk["card"].(map[string]any)
		if card["provider"] != "stripe" || card["amount"] != "97.00" {
			t.Fatalf("card checkout = %v", chk)
		}
		got := s.c.data(request{method: "POST", path: "/checkouts/" + cid + "/card/session",
			body: jsonBody(map[string]any{"route": 1}), header: s.idem()}, 200)
		if u := got["card"].(map[string]any)["provider_url"]; u != "https://crypto.link.com?session_hash=stripetest1" {
			t.Fatalf("provider_url = %v", u)
		}
		f := api.Creates[0]
		if f.Get("destination_amount") != "97.00" || f.Get("wallet_addresses[polygon]") != card["address"] ||
			f.Get("lock_wallet_address") != "true" || f.Get("destination_currency") != "usdc" ||
			f.Get("customer_information[email]") != "a@example.com" {
			t.Fatalf("session form = %v", f)
		}
		const id = "cos_stripetest0001"
		hook := func(body []byte, sig string) *response {
			return s.b.do(request{method: "POST", path: "/card-providers/stripe/webhook", body: string(body),
				header: map[string]string{"Stripe-Signature": sig}})
		}
		signed := func(body []byte) *response {
			return hook(body, stripetest.Sign(stripetest.WebhookSecret, s.b.clock.Now(), body))
		}
		api.Set(id, "session_fulfillment_processing.json")
		processing := api.Event(id)
		api.Set(id, "session_fulfillment_complete.json")
		complete := api.Event(id)
		// Delivered arrives first; the older processing then changes nothing.
		if r := signed(complete); r.status != 200 {
			t.Fatalf("webhook: %d %s", r.status, r.body)
		}
		after := s.getCheckout(cid)
		c := after["card"].(map[string]any)
		if after["status"] != "processing" || c["status"] != "delivered" || c["provider_reference"] != id ||
			c["tx_hash"] != "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060" {
			t.Fatalf("after delivered: %v", after)
		}
		unchanged := func(what string) {
			t.Helper()
			if now := s.getCheckout(cid); !reflect.DeepEqual(now, after) {
				t.Errorf("%s changed the checkout:\n%v\nwas\n%v", what, now, after)
			}
		}
		for what, body := range map[string][]byte{"the older processing": processing, "a replay": complete} {
			if r := signed(body); r.status != 200 {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			unchanged(what)
		}
		// A bad signature is refused and changes nothing.
		api.Set(id, "session_rejected.json")
		rejected := api.Event(id)
		r := hook(rejected, stripetest.Sign("whsec_not_ours", s.b.clock.Now(), rejected))
		if code, _ := r.errorCode(t); r.status != 400 || code != "invalid_signature" {
			t.Fatalf("bad signature: %d %s", r.status, r.body)
		}
		unchanged("a badly signed webhook")
		// A session payd never opened is acknowledged and changes nothing.
		api.Set("cos_not_ours", "session_rejected.json")
		if r := signed(api.Event("cos_not_ours")); r.status != 200 {
			t.Fatalf("unknown session: %d %s", r.status, r.body)
		}
		unchanged("an unknown session")
	})
}

// TestCardStripeDeclineAndRetry: a session Stripe rejects is declined when
// the page asks for news; the retry mints a second session, which the
// poller follows to processing.
func TestCardStripeDeclineAndRetry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		api := stripetest.New(t, "../card/stripe/testdata")
		prov, err := stripe.New(stripe.Config{SecretKey: stripetest.SecretKey, WebhookSecret: stripetest.WebhookSecret,
			BaseURL: api.URL, Clock: s.b.clock})
		if err != nil {
			t.Fatal(err)
		}
		s.b.srv.opts.Card = prov
		s.loops = append(s.loops, watch.NewCardPoller(db, prov, s.b.clock, s.b.srv.log, watch.Options{Events: s.b.srv}).RunOnce)
		p := s.payment(5_000, nil)
		chk := s.c.data(s.checkoutReq("payment_id", p["id"].(string), "USDC", "ethereum",
			map[string]any{"rail": "card", "email": "b@example.com"}), 201)
		cid := chk["id"].(string)
		route := func(path string, n int) request {
			return request{method: "POST", path: "/checkouts/" + cid + "/card/" + path,
				body: jsonBody(map[string]any{"route": n}), header: s.idem()}
		}
		s.c.data(route("session", 1), 200)
		api.Set("cos_stripetest0001", "session_rejected.json")
		got := s.c.data(route("refresh", 1), 200)
		if c := got["card"].(map[string]any); c["status"] != "declined" || c["decline_code"] != "card_declined" ||
			c["decline_message"] == nil || got["status"] != "open" {
			t.Fatalf("after the rejection: %v", got)
		}
		s.c.data(route("retry", 1), 200)
		got = s.c.data(route("session", 2), 200)
		if u := got["card"].(map[string]any)["provider_url"]; u != "https://crypto.link.com?session_hash=stripetest2" ||
			len(api.Keys) != 2 || api.Keys[0] == api.Keys[1] {
			t.Fatalf("route 2: %v, keys %q", u, api.Keys)
		}
		api.Set("cos_stripetest0002", "session_fulfillment_processing.json")
		s.runLoops()
		if got := s.getCheckout(cid); got["status"] != "processing" || got["card"].(map[string]any)["status"] != "processing" {
			t.Fatalf("after the poll: %v", got)
		}
	})
}
