package api

import (
	"context"
	"net/http"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

func ok(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, single{map[string]string{"business": callOf(r.Context()).biz.ID}})
	return nil
}

// TestAuth covers spec 5.1–5.3 on both databases.
func TestAuth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db,
			route{method: "GET", path: "/_test/payments", access: access{area: payd.AreaPayments, level: payd.AccessRead}, h: ok},
			route{method: "PATCH", path: "/_test/payments", access: access{area: payd.AreaPayments, level: payd.AccessWrite}, h: ok},
			route{method: "PATCH", path: "/_test/links", access: access{area: payd.AreaLinks, level: payd.AccessWrite}, realMoney: true, h: ok},
		)
		live := b.newBusiness(true)
		other := b.newBusiness(false)
		expect := func(t *testing.T, req request, status int, code string) {
			t.Helper()
			r := b.do(req)
			if r.status != status {
				t.Fatalf("%s %s: got %d %s, want %d %s", req.method, req.path, r.status, r.body, status, code)
			}
			if code != "" {
				if got, _ := r.errorCode(t); got != code {
					t.Fatalf("got code %s, want %s", got, code)
				}
			}
		}
		get := func(key string, hdr map[string]string) request {
			return request{method: "GET", path: "/_test/payments", key: key, header: hdr}
		}
		t.Run("no key", func(t *testing.T) { expect(t, get("", nil), 401, "unauthenticated") })
		t.Run("wrong header forms", func(t *testing.T) {
			for _, h := range []string{"Basic " + live.live, live.live, "Bearer", "Bearer  " + live.live, "Bearer " + live.live + " x", "Token " + live.live, ""} {
				expect(t, get("", map[string]string{"Authorization": h}), 401, "invalid_api_key")
			}
		})
		t.Run("lowercase bearer scheme is accepted", func(t *testing.T) {
			expect(t, get("", map[string]string{"Authorization": "bearer " + live.live}), 200, "")
		})
		t.Run("checksum failure", func(t *testing.T) {
			bad := []byte(live.live)
			bad[12] ^= 1
			expect(t, get(string(bad), nil), 401, "invalid_api_key")
		})
		t.Run("well-formed unknown key", func(t *testing.T) {
			k, _ := payd.NewAPIKey(live.biz.ID, payd.KeySecret, payd.ModeLive, nil, b.clock.Now())
			expect(t, get(k, nil), 401, "invalid_api_key")
		})
		t.Run("publishable key", func(t *testing.T) { expect(t, get(live.pub, nil), 401, "invalid_api_key") })
		t.Run("revoked key", func(t *testing.T) {
			k := b.restricted(other, "payments:read")
			expect(t, get(k, nil), 200, "")
			kr, err := db.APIKeyByHash(context.Background(), payd.HashAPIKey(k))
			if err != nil {
				t.Fatal(err)
			}
			if err := db.RevokeAPIKey(context.Background(), other.biz.ID, kr.ID, b.clock.Now()); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(b.srv.opts.KeyCacheTTL) // every replica forgets within the cache TTL
			expect(t, get(k, nil), 401, "invalid_api_key")
		})
		t.Run("secret keys, live and test", func(t *testing.T) {
			expect(t, get(live.live, nil), 200, "")
			expect(t, get(live.test, nil), 200, "")
		})
		t.Run("Service-Business naming another business", func(t *testing.T) {
			expect(t, get(live.live, map[string]string{"Service-Business": other.biz.ID}), 403, "business_forbidden")
			expect(t, get(live.live, map[string]string{"Service-Business": live.biz.ID}), 200, "")
		})
		t.Run("restricted keys read and write only their areas", func(t *testing.T) {
			read := b.restricted(live, "payments:read")
			write := b.restricted(live, "payments:write")
			none := b.restricted(live, "customers:write")
			expect(t, get(read, nil), 200, "")
			expect(t, get(write, nil), 200, "") // write implies read
			expect(t, get(none, nil), 403, "permission_denied")
			expect(t, request{method: "PATCH", path: "/_test/payments", key: read}, 403, "permission_denied")
			expect(t, request{method: "PATCH", path: "/_test/payments", key: write}, 200, "")
		})
		t.Run("test keys cannot change what customers see on a live business", func(t *testing.T) {
			expect(t, request{method: "PATCH", path: "/_test/links", key: live.test}, 403, "test_mode_unavailable")
			expect(t, request{method: "PATCH", path: "/_test/links", key: live.live}, 200, "")
			expect(t, request{method: "PATCH", path: "/_test/links", key: other.test}, 200, "") // not live
		})
		t.Run("dashboard-only routes refuse API keys", func(t *testing.T) {
			expect(t, request{method: "GET", path: "/api-keys", key: live.live}, 403, "session_required")
			expect(t, request{method: "GET", path: "/api-keys"}, 401, "unauthenticated")
		})
		t.Run("public route checks a key that is sent", func(t *testing.T) {
			expect(t, request{method: "GET", path: "/exchange-rates", key: live.live}, 200, "")
			expect(t, request{method: "GET", path: "/exchange-rates", key: live.pub}, 401, "invalid_api_key")
		})
	})
}
