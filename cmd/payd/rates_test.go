package main

import (
	"encoding/json"
	"testing"

	"payd/store/storetest"
)

// TestClockJumpKeepsRatesFresh: on serve --dev, a jump of the service
// clock past the rates' max age (10 minutes) brings the refresh that falls
// due with it before POST /devnet/clock answers, so a price in euros and a
// checkout in BTC right after it quote at once (CONTRACT.md: everything
// that falls due happens as if that time had passed).
func TestClockJumpKeepsRatesFresh(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	s := start(t, dsn)
	var biz newBusiness
	if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example",
		"--wallet", "generate", "--json"), &biz); err != nil {
		t.Fatal(err)
	}
	api := apiClient{t: t, base: s.base, key: biz.SecretKey}
	before := api.call(200, "GET", "/exchange-rates", nil)["id"]
	if st, body := devPost(t, s, nil, "/devnet/clock", `{"advance_seconds":3600}`, ""); st != 200 {
		t.Fatalf("POST /devnet/clock: %d %s", st, body)
	}
	if after := api.call(200, "GET", "/exchange-rates", nil)["id"]; after == before {
		t.Fatalf("the rates after a jump of an hour are still %v", after)
	}
	pay := api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "EUR"})
	api.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto", "asset": "BTC",
		"network": "bitcoin"})
}
