package api

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"payd"
	"payd/clock"
)

// rateRule is one per-IP limit: at most Limit requests per Window.
type rateRule struct {
	Limit  int
	Window time.Duration
}

// rateRules is the table of spec 8.2. Routes that share a budget share a
// rule name; a route names its rule in routeTable.
var rateRules = map[string]rateRule{
	"checkouts":           {30, 10 * time.Minute},
	"accounts":            {10, time.Hour},
	"accounts_verify":     {20, 10 * time.Minute},
	"sessions":            {30, 10 * time.Minute},
	"sessions_two_factor": {30, 10 * time.Minute},
	"passkey_auth":        {60, 10 * time.Minute},
	"proofs":              {20, 10 * time.Minute},
	"passkey_register":    {20, 10 * time.Minute},
	"me_email":            {10, time.Hour},
	"password_resets":     {5, time.Hour},
	"account_links":       {20, 10 * time.Minute},
	"public_referrals":    {60, 10 * time.Minute},
}

// RateCounter counts hits per key and window; *store.DB implements it in the
// database and NewMemoryCounter in this process.
type RateCounter interface {
	// CountRateHit adds one hit to (key, window) and returns the count after it.
	CountRateHit(ctx context.Context, key string, window time.Time, expiresAt time.Time) (int, error)
}

// limiter applies fixed-window limits on the service clock, so the dev test
// clock starts new windows like real time does.
type limiter struct {
	counter RateCounter
	clock   clock.Clock
	rules   map[string]rateRule
}

func newLimiter(c RateCounter, clk clock.Clock, rules map[string]rateRule) *limiter {
	return &limiter{counter: c, clock: clk, rules: rules}
}

// allow counts a hit of ip against rule name and refuses it with
// rate_limited and Retry-After once the window's budget is spent.
func (l *limiter) allow(ctx context.Context, name, ip string) error {
	rule, ok := l.rules[name]
	if name == "" || !ok {
		return nil
	}
	now := l.clock.Now()
	start := now.Truncate(rule.Window)
	end := start.Add(rule.Window)
	n, err := l.counter.CountRateHit(ctx, name+"|"+ip, start, end)
	if err != nil {
		return err
	}
	if n > rule.Limit {
		return &payd.Error{Code: payd.ErrRateLimited, RetryAfter: end.Sub(now),
			Message: "too many requests from this address; wait for Retry-After seconds"}
	}
	return nil
}

// clientIP is the peer's address, or, when the peer is a trusted proxy, the
// nearest address in X-Forwarded-For that is not one.
func (s *Server) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.opts.TrustedProxies) == 0 || !s.trusted(host) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			break
		}
		host = hop
		if !s.trusted(hop) {
			break
		}
	}
	return host
}

func (s *Server) trusted(host string) bool {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// MemoryCounter counts rate-limit hits in this process: right for a single
// SQLite process, where a database write per hit would buy nothing.
type MemoryCounter struct {
	clock clock.Clock

	mu        sync.Mutex
	windows   map[memoryKey]memoryWindow
	nextSweep time.Time
}

type memoryKey struct {
	key    string
	window int64
}

type memoryWindow struct {
	count   int
	expires time.Time
}

// sweepEvery is how often CountRateHit drops the windows that have ended.
// A sweep walks every window, so it must not run at every hit: it did once
// more than 1,024 windows were live, and since a checkout's window lasts ten
// minutes, every hit then cost as much as the number of addresses seen in
// the last ten minutes. Under a steady stream of new customers that cost
// grew without end (checkouts/s fell from 3,400 to 1,650 within 30 s, with
// 41 % of the CPU in this loop). Once a second, a sweep costs a hit a
// fraction of a microsecond on average.
const sweepEvery = time.Second

// NewMemoryCounter returns an empty in-process counter.
func NewMemoryCounter(clk clock.Clock) *MemoryCounter {
	return &MemoryCounter{clock: clk, windows: map[memoryKey]memoryWindow{}}
}

// CountRateHit adds one hit and returns the count. Memory stays bounded by
// the live windows plus those that ended within the last sweepEvery; an
// ended window is never counted again anyway, since the window's start is
// part of its key.
func (m *MemoryCounter) CountRateHit(_ context.Context, key string, window, expiresAt time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now := m.clock.Now(); !now.Before(m.nextSweep) {
		for k, w := range m.windows {
			if !now.Before(w.expires) {
				delete(m.windows, k)
			}
		}
		m.nextSweep = now.Add(sweepEvery)
	}
	k := memoryKey{key, window.UnixMicro()}
	w := m.windows[k]
	w.count++
	w.expires = expiresAt
	m.windows[k] = w
	return w.count, nil
}
