package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// join makes the user a member of the business with role, as an accepted
// invitation does (TestTeamInvitations covers the invitations).
func (b *bundle) join(t *testing.T, biz, userID string, role payd.MemberRole) {
	t.Helper()
	if err := b.db.AddMember(context.Background(), &payd.Membership{BusinessID: biz, UserID: userID, Role: role, CreatedAt: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

// keyStatus calls GET /payments with a key and returns the status.
func (b *bundle) keyStatus(t *testing.T, key string) int {
	t.Helper()
	return b.do(request{method: "GET", path: "/payments", key: key}).status
}

func TestAPIKeysOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		owner, _ := b.person(t, "owner@example.com")
		biz := owner.newShop("Keys Shop")
		keys := func(br *browser) []any {
			t.Helper()
			return br.call(request{method: "GET", path: "/api-keys"}, http.StatusOK)["data"].([]any)
		}
		if ks := keys(owner); len(ks) != 1 || ks[0].(map[string]any)["kind"] != "publishable" {
			t.Fatalf("a new business's keys = %v", ks)
		}
		pub := keys(owner)[0].(map[string]any)["id"].(string)

		// Create: the secret is shown once and works at once.
		sk := owner.call(request{method: "POST", path: "/api-keys", body: `{"name":"server","kind":"secret","mode":"live"}`},
			http.StatusCreated)["data"].(map[string]any)
		secret := sk["secret"].(string)
		if sk["kind"] != "secret" || sk["mode"] != "live" || sk["name"] != "server" || sk["permissions"] != nil || sk["revoked_at"] != nil {
			t.Fatalf("new key = %v", sk)
		}
		if st := b.keyStatus(t, secret); st != http.StatusOK {
			t.Fatalf("the new key answers %d", st)
		}
		rk := owner.call(request{method: "POST", path: "/api-keys",
			body: `{"name":"reader","kind":"restricted","mode":"test","permissions":{"payments":"read"}}`}, http.StatusCreated)["data"].(map[string]any)
		if p := rk["permissions"].(map[string]any); len(p) != 1 || p["payments"] != "read" {
			t.Fatalf("restricted key = %v", rk)
		}
		for _, bad := range []string{
			`{"kind":"restricted","mode":"live"}`, `{"kind":"secret","mode":"live","permissions":{"payments":"read"}}`,
			`{"kind":"publishable","mode":"live"}`, `{"kind":"secret","mode":"prod"}`,
			`{"kind":"restricted","mode":"live","permissions":{"refunds":"read"}}`, `{"kind":"restricted","mode":"live","permissions":{"payments":"all"}}`,
		} {
			owner.call(request{method: "POST", path: "/api-keys", body: bad}, http.StatusBadRequest, payd.ErrInvalidRequest)
		}
		for _, k := range keys(owner) {
			if _, ok := k.(map[string]any)["secret"]; ok {
				t.Fatalf("GET /api-keys shows a secret: %v", k)
			}
		}

		// Rename and change permissions; a publishable key has neither.
		rid := rk["id"].(string)
		up := owner.call(request{method: "PATCH", path: "/api-keys/" + rid, body: `{"name":"writer","permissions":{"payments":"write","links":"read"}}`},
			http.StatusOK)["data"].(map[string]any)
		if up["name"] != "writer" || up["permissions"].(map[string]any)["links"] != "read" {
			t.Fatalf("PATCH /api-keys = %v", up)
		}
		owner.call(request{method: "PATCH", path: "/api-keys/" + pub, body: `{"name":"x"}`}, http.StatusConflict, payd.ErrPublishableKey)
		owner.call(request{method: "POST", path: "/api-keys/" + pub + "/roll"}, http.StatusConflict, payd.ErrPublishableKey)
		owner.call(request{method: "POST", path: "/api-keys/" + pub + "/revoke"}, http.StatusConflict, payd.ErrPublishableKey)
		owner.call(request{method: "PATCH", path: "/api-keys/key_nothing", body: `{"name":"x"}`}, http.StatusNotFound, payd.ErrNotFound)

		// Roll: a new secret; the old one works for 24 hours more, and the
		// rolled key cannot change.
		sid := sk["id"].(string)
		rolled := owner.call(request{method: "POST", path: "/api-keys/" + sid + "/roll"}, http.StatusOK)["data"].(map[string]any)
		next := rolled["secret"].(string)
		if rolled["id"] == sid || rolled["name"] != "server" || next == secret {
			t.Fatalf("rolled key = %v", rolled)
		}
		if b.keyStatus(t, secret) != http.StatusOK || b.keyStatus(t, next) != http.StatusOK {
			t.Fatal("after a roll both secrets work for a while")
		}
		owner.call(request{method: "PATCH", path: "/api-keys/" + sid, body: `{"name":"x"}`}, http.StatusConflict, payd.ErrAPIKeyRevoked)
		owner.call(request{method: "POST", path: "/api-keys/" + sid + "/roll"}, http.StatusConflict, payd.ErrAPIKeyRevoked)
		b.clock.Advance(payd.KeyRollOverlap)
		if st := b.keyStatus(t, secret); st != http.StatusUnauthorized {
			t.Fatalf("a rolled key 24 hours on answers %d", st)
		}
		if st := b.keyStatus(t, next); st != http.StatusOK {
			t.Fatalf("the rolled key's successor answers %d", st)
		}

		// Revoke: refused at once, listed with revoked_at, not twice.
		owner.signIn("owner@example.com", testPassword, http.StatusCreated)
		nid := rolled["id"].(string)
		rv := owner.call(request{method: "POST", path: "/api-keys/" + nid + "/revoke"}, http.StatusOK)["data"].(map[string]any)
		if rv["revoked_at"] == nil {
			t.Fatalf("revoked key = %v", rv)
		}
		r := b.do(request{method: "GET", path: "/payments", key: next})
		if code, _ := r.errorCode(t); r.status != http.StatusUnauthorized || code != payd.ErrInvalidAPIKey {
			t.Fatalf("a revoked key: %d %s", r.status, r.body)
		}
		owner.call(request{method: "POST", path: "/api-keys/" + nid + "/revoke"}, http.StatusConflict, payd.ErrAPIKeyRevoked)
		owner.call(request{method: "PATCH", path: "/api-keys/" + nid, body: `{"name":"x"}`}, http.StatusConflict, payd.ErrAPIKeyRevoked)

		// Keys never manage keys.
		r = b.do(request{method: "GET", path: "/api-keys", key: sk0(t, owner)})
		if code, _ := r.errorCode(t); r.status != http.StatusForbidden || code != payd.ErrSessionRequired {
			t.Fatalf("GET /api-keys with a key: %d %s", r.status, r.body)
		}

		// Roles: viewers do not see keys; developers make keys only within
		// their role; admins manage every key.
		viewer, vID := b.person(t, "viewer@example.com")
		devel, dID := b.person(t, "dev@example.com")
		admin, aID := b.person(t, "admin@example.com")
		b.join(t, biz, vID, payd.RoleViewer)
		b.join(t, biz, dID, payd.RoleDeveloper)
		b.join(t, biz, aID, payd.RoleAdmin)
		viewer.biz, devel.biz, admin.biz = biz, biz, biz
		viewer.call(request{method: "GET", path: "/api-keys"}, http.StatusForbidden, payd.ErrPermissionDenied)
		viewer.call(request{method: "POST", path: "/api-keys", body: `{"kind":"restricted","mode":"test","permissions":{"payments":"read"}}`},
			http.StatusForbidden, payd.ErrPermissionDenied)
		keys(devel)
		devel.call(request{method: "POST", path: "/api-keys", body: `{"kind":"secret","mode":"test"}`}, http.StatusForbidden, payd.ErrPermissionDenied)
		devel.call(request{method: "POST", path: "/api-keys", body: `{"kind":"restricted","mode":"test","permissions":{"wallet":"write"}}`},
			http.StatusForbidden, payd.ErrPermissionDenied)
		dk := devel.call(request{method: "POST", path: "/api-keys", body: `{"kind":"restricted","mode":"test","permissions":{"links":"write"}}`},
			http.StatusCreated)["data"].(map[string]any)
		devel.call(request{method: "PATCH", path: "/api-keys/" + dk["id"].(string), body: `{"permissions":{"payments":"write"}}`},
			http.StatusForbidden, payd.ErrPermissionDenied)
		devel.call(request{method: "POST", path: "/api-keys/" + rid + "/revoke"}, http.StatusForbidden, payd.ErrPermissionDenied)
		admin.call(request{method: "POST", path: "/api-keys/" + rid + "/revoke"}, http.StatusOK)

		// Creating, changing and rolling keys need a recent proof.
		b.clock.Advance(payd.ProofTTL + time.Minute)
		owner.call(request{method: "POST", path: "/api-keys", body: `{"kind":"secret","mode":"live"}`}, http.StatusForbidden, payd.ErrStepUpRequired)
		owner.call(request{method: "POST", path: "/api-keys/" + dk["id"].(string) + "/roll"}, http.StatusForbidden, payd.ErrStepUpRequired)
		keys(owner)
	})
}

// sk0 makes a live secret key through the dashboard and returns it.
func sk0(t *testing.T, br *browser) string {
	t.Helper()
	return br.call(request{method: "POST", path: "/api-keys", body: `{"kind":"secret","mode":"live"}`},
		http.StatusCreated)["data"].(map[string]any)["secret"].(string)
}

// TestWebhookEndpointsWithSession checks that a session manages webhook
// endpoints as a secret key does, step-up aside.
func TestWebhookEndpointsWithSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		owner, ownerID := b.person(t, "owner@example.com")
		biz := owner.newShop("Hooks")
		e := owner.call(request{method: "POST", path: "/webhooks", body: `{"url":"http://127.0.0.1:9/h","event_types":["payment.succeeded"]}`},
			http.StatusCreated)["data"].(map[string]any)
		id := e["id"].(string)
		if e["secret"] == nil {
			t.Fatalf("created endpoint = %v", e)
		}
		owner.call(request{method: "GET", path: "/webhooks"}, http.StatusOK)
		owner.call(request{method: "GET", path: "/webhooks/" + id}, http.StatusOK)
		owner.call(request{method: "PATCH", path: "/webhooks/" + id, body: `{"enabled":false}`}, http.StatusOK)
		owner.call(request{method: "POST", path: "/webhooks/" + id + "/rotate-secret"}, http.StatusOK)
		owner.call(request{method: "GET", path: "/webhook-deliveries"}, http.StatusOK)
		owner.call(request{method: "DELETE", path: "/webhooks/" + id}, http.StatusOK)
		owner.call(request{method: "DELETE", path: "/webhooks/" + id}, http.StatusNotFound, payd.ErrNotFound)

		// Webhook endpoints and keys have no events in the catalogue; the
		// changes that do have them name the person as their actor.
		cst := owner.call(request{method: "POST", path: "/customers", body: `{"email":"c@example.com"}`}, http.StatusCreated)["data"].(map[string]any)
		owner.call(request{method: "PATCH", path: "/customers/" + cst["id"].(string), body: `{"name":"Cy"}`}, http.StatusOK)
		evs, err := db.EventsOf(t.Context(), biz, cst["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 {
			t.Fatalf("customer events = %d, want created and updated", len(evs))
		}
		for _, e := range evs {
			if e.Actor.Kind != payd.ActorUser || e.Actor.ID != ownerID || e.Actor.Name != "owner@example.com" {
				t.Fatalf("%s actor = %+v, want the user", e.Type, e.Actor)
			}
		}
	})
}

// TestRevokedKeyLeavesEveryReplica checks revocation through the
// dashboard against two servers on one database: the replica that revoked
// refuses the key at once, the other within its key cache's lifetime.
func TestRevokedKeyLeavesEveryReplica(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a, other := setup(t, db), setup(t, db)
		owner, _ := a.person(t, "owner@example.com")
		owner.newShop("Replicas")
		k := owner.call(request{method: "POST", path: "/api-keys", body: `{"kind":"secret","mode":"live"}`},
			http.StatusCreated)["data"].(map[string]any)
		secret := k["secret"].(string)
		if a.keyStatus(t, secret) != http.StatusOK || other.keyStatus(t, secret) != http.StatusOK {
			t.Fatal("a new key is refused")
		}
		owner.call(request{method: "POST", path: "/api-keys/" + k["id"].(string) + "/revoke"}, http.StatusOK)
		if st := a.keyStatus(t, secret); st != http.StatusUnauthorized {
			t.Fatalf("the revoking replica answers %d", st)
		}
		other.clock.Advance(other.srv.opts.KeyCacheTTL)
		if st := other.keyStatus(t, secret); st != http.StatusUnauthorized {
			t.Fatalf("another replica after the cache TTL answers %d", st)
		}
	})
}
