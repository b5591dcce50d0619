package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"payd"
	"payd/clock"
)

// authenticate finds the caller's key and business and applies the route's
// access rule (spec 5.1–5.3).
func (s *Server) authenticate(r *http.Request, c *call, rt route) error {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		if rt.access.public {
			return nil
		}
		if token := cookie(r, s.cookieName(sessionCookie)); token != "" {
			return s.authenticateSession(r, c, rt, token)
		}
		if rt.access.user {
			return payd.Errorf(payd.ErrUnauthenticated, "sign in first: this route needs a dashboard session")
		}
		return payd.Errorf(payd.ErrUnauthenticated, "send a secret key as Authorization: Bearer <key>")
	}
	secret, err := bearer(values)
	if err != nil {
		return err
	}
	k, biz, err := s.keys.lookup(r.Context(), secret)
	if err != nil {
		return err
	}
	c.key, c.biz = k, biz
	if sb := r.Header.Get("Service-Business"); sb != "" && sb != biz.ID {
		return payd.Errorf(payd.ErrBusinessForbidden, "this key cannot act for business %q", sb)
	}
	return authorize(rt, k, biz)
}

// authorize applies a route's access rule to an authenticated key.
func authorize(rt route, k *payd.APIKey, biz *payd.Business) error {
	a := rt.access
	if a.sessionOnly {
		return payd.Errorf(payd.ErrSessionRequired, "this route is only for the dashboard; API keys cannot use it")
	}
	if a.area != "" && !k.Can(a.area, a.level) {
		return payd.Errorf(payd.ErrPermissionDenied, "this key cannot %s %s", a.level, a.area)
	}
	if rt.realMoney {
		return biz.RefuseTestKey(k)
	}
	return nil
}

// bearer extracts the key from the Authorization header, which must be
// exactly "Bearer <key>" with a well-formed payd key.
func bearer(values []string) (string, error) {
	bad := func() error {
		return &payd.Error{Code: payd.ErrInvalidAPIKey, Message: `the Authorization header must be "Bearer <secret key>" with a valid key`}
	}
	if len(values) != 1 {
		return "", bad()
	}
	scheme, secret, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", bad()
	}
	kind, _, ok := payd.ParseAPIKey(secret)
	if !ok {
		return "", bad()
	}
	if kind == payd.KeyPublishable {
		return "", payd.Errorf(payd.ErrInvalidAPIKey, "a publishable key cannot call the API; use a secret or restricted key")
	}
	return secret, nil
}

// keyCache remembers authenticated keys for a short time, so that a busy
// integration does not cost two database reads per request. Revocation
// reaches every replica within the TTL.
type keyCache struct {
	store payd.Store
	clock clock.Clock
	ttl   time.Duration

	mu      sync.Mutex
	entries map[string]keyEntry
}

type keyEntry struct {
	key   *payd.APIKey
	biz   *payd.Business
	until time.Time
}

func newKeyCache(st payd.Store, clk clock.Clock, ttl time.Duration) *keyCache {
	return &keyCache{store: st, clock: clk, ttl: ttl, entries: map[string]keyEntry{}}
}

// lookup returns the live key and its business, or invalid_api_key.
func (kc *keyCache) lookup(ctx context.Context, secret string) (*payd.APIKey, *payd.Business, error) {
	hash := payd.HashAPIKey(secret)
	now := kc.clock.Now()
	kc.mu.Lock()
	e, ok := kc.entries[hash]
	kc.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.key, e.biz, nil
	}
	invalid := &payd.Error{Code: payd.ErrInvalidAPIKey, Message: "this API key is not valid or has been revoked"}
	k, err := kc.store.APIKeyByHash(ctx, hash)
	if payd.IsNotFound(err) {
		return nil, nil, invalid
	} else if err != nil {
		return nil, nil, err
	}
	if k.Revoked(now) || k.Kind == payd.KeyPublishable {
		return nil, nil, invalid
	}
	biz, err := kc.store.BusinessByID(ctx, k.BusinessID)
	if err != nil {
		return nil, nil, err
	}
	kc.mu.Lock()
	if len(kc.entries) > 10_000 {
		clear(kc.entries) // A crude bound: keys are few; this only stops a flood from growing memory.
	}
	kc.entries[hash] = keyEntry{key: k, biz: biz, until: keyStopsBy(k, now.Add(kc.ttl))}
	kc.mu.Unlock()
	return k, biz, nil
}

// forget drops a key this process revoked, which then stops working here at
// once; other replicas drop it within the TTL.
func (kc *keyCache) forget(hash string) {
	kc.mu.Lock()
	delete(kc.entries, hash)
	kc.mu.Unlock()
}
