package api

import (
	"context"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestCustomerRemainder covers POST /checkouts/{id}/remainder: on the
// hosted page, the customer of an underpaid link payment whose quote has
// ended gets a new quote for what is still due, not for the whole price
// (issue 15 item 18).
func TestCustomerRemainder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShopOf(t, db, true)
		code := s.link(2500)["code"].(string)
		chk := s.c.data(s.checkoutReq("link_code", code, "USDT", "tron", map[string]any{"email": "ann@example.com"}), 201)
		id := chk["id"].(string)
		remainder := func(checkoutID string) request {
			return request{method: "POST", path: "/checkouts/" + checkoutID + "/remainder", header: s.idem()}
		}
		s.c.call(remainder(id), 409, "payment_not_underpaid")
		s.send(chk, "15.00")
		s.mine("tron", 3)
		s.c.call(remainder(id), 409, "remainder_unavailable") // the quote is live: send the rest to it
		s.advance(16 * 60)
		pid := chk["payment_id"].(string)
		s.wantStatus(s.getPayment(pid), "underpaid")
		req := remainder(id)
		withTestKey := remainder(id)
		withTestKey.key = s.biz.test
		s.c.call(withTestKey, 403, "test_mode_unavailable") // spec 5.3: the business is live
		foreign := remainder(id)
		foreign.key = s.b.newBusiness(true).live
		s.c.call(foreign, 403, "business_forbidden")
		ctx := context.Background()
		must(t, s.b.db.SetPause(ctx, payd.Pause{Name: "network:tron", PausedAt: s.b.clock.Now()}))
		s.advance(2)
		s.c.call(remainder(id), 503, "temporarily_unavailable") // the operator paused the network
		must(t, s.b.db.DeletePause(ctx, "network:tron"))
		s.advance(2)
		next := s.c.data(req, 201)
		if next["remainder"] != true || next["amount"] != 1000.0 || next["payment_id"] != pid || next["email"] != "ann@example.com" ||
			next["crypto"].(map[string]any)["amount"] != "10.00" || next["crypto"].(map[string]any)["network"] != "tron" {
			t.Fatalf("customer remainder = %v", next)
		}
		if again := s.b.do(req); again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry of the remainder was not replayed: %d", again.status)
		}
		s.c.call(remainder(id), 409, "remainder_unavailable") // a later checkout exists
		s.c.call(remainder("chk_nope"), 404, "not_found")
		noKey := remainder(next["id"].(string))
		noKey.header = nil
		s.c.call(noKey, 400, "idempotency_key_required")
		s.send(next, "10.00")
		s.mine("tron", 3)
		pay := s.getPayment(pid)
		s.wantStatus(pay, "succeeded")
		if pay["amount_received"] != 2500.0 {
			t.Fatalf("paid in two parts: %v", pay)
		}
	})
}
