package api

import (
	"fmt"
	"testing"

	"payd/store"
	"payd/store/storetest"
)

// TestCheckoutTestKeyOnLiveBusiness covers spec 5.3 for POST /checkouts:
// the route is public, so the hosted page (no key) and live keys open
// checkouts on a live business, but a request carrying its test key gets
// 403 test_mode_unavailable, and one carrying another business's key 403
// business_forbidden. On a business
// that is not live a test key opens checkouts as before.
func TestCheckoutTestKeyOnLiveBusiness(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		n := 0
		open := func(key, paymentID string) request {
			n++
			return request{method: "POST", path: "/checkouts", key: key,
				body:   jsonBody(map[string]any{"payment_id": paymentID, "rail": "crypto", "asset": "USDC", "network": "polygon"}),
				header: map[string]string{"Idempotency-Key": fmt.Sprintf("mode-%d", n)}}
		}
		live, sandbox := b.newBusiness(true), b.newBusiness(false)
		pay := map[*testBusiness]string{}
		for _, tb := range []*testBusiness{live, sandbox} {
			keys := map[string]any{}
			for _, k := range newHDWallet(t).Keys() {
				keys[string(k.Network())] = k.String()
			}
			c.data(postWallet(tb.live, jsonBody(map[string]any{"keys": keys})), 201)
			pay[tb] = c.data(payPost(tb.live, map[string]any{"amount": 1500, "currency": "USD"}), 201)["id"].(string)
		}
		c.call(open(live.test, pay[live]), 403, "test_mode_unavailable")
		c.call(open(sandbox.test, pay[live]), 403, "business_forbidden")
		c.call(open(sandbox.live, pay[live]), 403, "business_forbidden") // never an actor on another's events
		c.data(open("", pay[live]), 201)                                 // the hosted page sends no key
		c.data(open(live.live, pay[live]), 201)
		c.data(open(sandbox.test, pay[sandbox]), 201)
	})
}
