package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestReferrals covers referral codes (docs/accounts.md "Referrals"):
// every business has its own; GET /public/referrals/{code} tells whose it
// is; a new business names the code that referred it and owners and
// admins change it until the business has a wallet (referral_locked).
func TestReferrals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ada := newBrowser(t, b)
		ada.signUp("ada@example.com")
		shop := ada.call(request{method: "POST", path: "/businesses", body: `{"name":"Ada's Books"}`}, http.StatusCreated)["data"].(map[string]any)
		code, _ := shop["referral_code"].(string)
		if _, ok := payd.NormalizeReferralCode(code); !ok || shop["referred_by"] != nil {
			t.Fatalf("new business %v: want its own referral code and no referrer", shop)
		}
		// Anyone can check a code, typed in any case with a dash.
		typed := strings.ToLower(code[:4] + "-" + code[4:])
		got := b.do(request{method: "GET", path: "/public/referrals/" + typed}).json(t)["data"].(map[string]any)
		if got["code"] != code || got["business_name"] != "Ada's Books" {
			t.Fatalf("GET /public/referrals/%s = %v", typed, got)
		}
		for _, bad := range []string{"ZZZZZZZZ", "nonsense", "AB0CDEFG"} {
			if r := b.do(request{method: "GET", path: "/public/referrals/" + bad}); r.status != http.StatusNotFound {
				t.Fatalf("GET /public/referrals/%s: %d %s", bad, r.status, r.body)
			}
		}

		// A new business names the code that referred it.
		bo := newBrowser(t, b)
		bo.signUp("bo@example.com")
		bo.call(request{method: "POST", path: "/businesses", body: `{"name":"Bo's","referral_code":"ZZZZZZZZ"}`},
			http.StatusBadRequest, payd.ErrInvalidRequest)
		mine := bo.call(request{method: "POST", path: "/businesses", body: fmt.Sprintf(`{"name":"Bo's","referral_code":%q}`, typed)},
			http.StatusCreated)["data"].(map[string]any)
		if mine["referred_by"] != code {
			t.Fatalf("referred business %v, want referred_by %s", mine, code)
		}
		bo.biz = mine["id"].(string)
		// ... and changes or clears it; not to its own or an unknown code.
		bo.call(request{method: "PATCH", path: "/business", body: fmt.Sprintf(`{"referral_code":%q}`, mine["referral_code"])},
			http.StatusBadRequest, payd.ErrInvalidRequest)
		bo.call(request{method: "PATCH", path: "/business", body: `{"referral_code":"nonsense"}`}, http.StatusBadRequest, payd.ErrInvalidRequest)
		if got := bo.call(request{method: "PATCH", path: "/business", body: `{"referral_code":null}`}, http.StatusOK)["data"].(map[string]any); got["referred_by"] != nil {
			t.Fatalf("after clearing: %v", got)
		}
		bo.call(request{method: "PATCH", path: "/business", body: fmt.Sprintf(`{"referral_code":%q}`, code)}, http.StatusOK)
		list := bo.call(request{method: "GET", path: "/businesses"}, http.StatusOK)["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["referred_by"] != code {
			t.Fatalf("GET /businesses = %v", list)
		}
		// Only owners and admins change it.
		cy := newBrowser(t, b)
		u := cy.signUp("cy@example.com")
		if err := db.AddMember(context.Background(), &payd.Membership{BusinessID: bo.biz, UserID: u["id"].(string),
			Role: payd.RoleDeveloper, CreatedAt: b.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		cy.biz = bo.biz
		cy.call(request{method: "PATCH", path: "/business", body: `{"referral_code":null}`}, http.StatusForbidden, payd.ErrPermissionDenied)
		// Once the business has a wallet the code is fixed.
		w, err := payd.NewWallet(bo.biz, map[money.Network]string{money.Tron: "k-referral"},
			map[money.Network]string{money.Tron: "id-k-referral"}, payd.WalletAttached, b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateWallet(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		bo.call(request{method: "PATCH", path: "/business", body: `{"referral_code":null}`}, http.StatusConflict, payd.ErrReferralLocked)
		// A suspended business's code is not found.
		if err := db.SetBusinessSuspended(context.Background(), shop["id"].(string), new(b.clock.Now())); err != nil {
			t.Fatal(err)
		}
		if r := b.do(request{method: "GET", path: "/public/referrals/" + code}); r.status != http.StatusNotFound {
			t.Fatalf("a suspended business's code: %d %s", r.status, r.body)
		}
	})
}
