package api

import (
	"context"
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
	// Not in spec 8.2: POST /me/email/verify and /me/email/resend, held
	// like the sign-up's code routes (docs/accounts.md "Recovery").
	"me_email_verify":  {20, 10 * time.Minute},
	"password_resets":  {5, time.Hour},
	"account_links":    {20, 10 * time.Minute},
	"public_referrals": {60, 10 * time.Minute},
}

// RateCounter counts hits per key and window; *store.DB implements it in the
// database and NewMemoryCounter in this process.
type RateCounter interface {
	// CountRateHit adds one hit to (key, window) and returns the count after it.
	CountRateHit(ctx context.Context, key string, window time.Time, expiresAt time.Time) (int, error)
	// CountWindowHit adds one hit to the window of the given length that
	// starts at window and returns the count after it together with the
	// count of the window just before; both are kept until the end of the
	// window after this one, when this one has become the previous.
	CountWindowHit(ctx context.Context, key string, window time.Time, length time.Duration) (current, previous int, err error)
}

// limiter applies sliding-window limits on the service clock, so the dev
// test clock moves the windows like real time does. The window is the
// two-window estimate: the hits of the current clock-aligned window plus
// those of the previous one weighted by how much of it still lies within
// the last Window. A burst at the end of one window therefore still counts
// at the start of the next, where a fixed window let a second full budget
// through within seconds (60 checkouts in 11 s). Refused hits count too: a
// client that keeps knocking without waiting for Retry-After stays limited.
type limiter struct {
	counter RateCounter
	clock   clock.Clock
	rules   map[string]rateRule
}

func newLimiter(c RateCounter, clk clock.Clock, rules map[string]rateRule) *limiter {
	return &limiter{counter: c, clock: clk, rules: rules}
}

// allow counts a hit of the client at ip against rule name and refuses it
// with rate_limited and Retry-After once the sliding window's budget is
// spent.
func (l *limiter) allow(ctx context.Context, name, ip string) error {
	rule, ok := l.rules[name]
	if name == "" || !ok {
		return nil
	}
	now := l.clock.Now()
	start := now.Truncate(rule.Window)
	cur, prev, err := l.counter.CountWindowHit(ctx, name+"|"+rateSubject(ip), start, rule.Window)
	if err != nil {
		return err
	}
	if wait := rule.wait(cur, prev, now.Sub(start)); wait > 0 {
		return &payd.Error{Code: payd.ErrRateLimited, RetryAfter: wait,
			Message: "too many requests from this address; wait for Retry-After seconds"}
	}
	return nil
}

// wait is zero when cur hits in the current window (this one included)
// and prev in the previous one, elapsed into the current window, stay within
// the budget; otherwise it is how long until one more hit would. The
// estimate prev·(W−elapsed)/W + cur ≤ Limit is compared in whole
// microseconds, never in floating point, so both counters and every replica
// decide alike.
func (r rateRule) wait(cur, prev int, elapsed time.Duration) time.Duration {
	w, e := r.Window.Microseconds(), elapsed.Microseconds()
	if int64(prev)*(w-e)+int64(cur)*w <= int64(r.Limit)*w {
		return 0
	}
	if cur < r.Limit { // later in this window, once enough of prev has slid out
		return time.Duration(w-int64(r.Limit-cur-1)*w/int64(prev))*time.Microsecond - elapsed
	}
	// In the next window, where this window's hits are the previous ones and
	// the retry is the first.
	next := w - int64(r.Limit-1)*w/int64(cur)
	return time.Duration(w+next)*time.Microsecond - elapsed
}

// rateSubject is whom a limit counts: an IPv4 address, or the /64 network
// of an IPv6 one, since a single IPv6 client usually holds a whole /64 and
// would otherwise get a fresh budget from every address in it.
func rateSubject(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// clientIP is the peer's address, or, when the peer is a trusted proxy, the
// nearest address in X-Forwarded-For that is not one. IPv4-mapped IPv6
// addresses are shown as IPv4.
func (s *Server) clientIP(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if len(s.opts.TrustedProxies) == 0 || !s.trusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		peer = hop
		if !s.trusted(hop) {
			break
		}
	}
	return peer.String()
}

// parseHop reads one address as peers and proxies write it: bare
// (198.51.100.7, 2001:db8::1), bracketed ([2001:db8::1]) or with a port
// (198.51.100.7:4711, [2001:db8::1]:443). Zones are dropped and IPv4-mapped
// addresses unmapped, so one client has one spelling.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		var ap netip.AddrPort
		if ap, err = netip.ParseAddrPort(s); err == nil {
			a = ap.Addr()
		} else if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
			a, err = netip.ParseAddr(s[1 : len(s)-1])
		}
	}
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
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
	return m.hit(key, window, expiresAt), nil
}

// CountWindowHit adds one hit to the window of the given length starting at
// window and returns its count and the previous window's, under one lock so
// that concurrent hits see consistent pairs.
func (m *MemoryCounter) CountWindowHit(_ context.Context, key string, window time.Time, length time.Duration) (current, previous int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	current = m.hit(key, window, window.Add(2*length))
	previous = m.windows[memoryKey{key, window.Add(-length).UnixMicro()}].count
	return current, previous, nil
}

// hit sweeps when due and counts one hit; the caller holds mu.
func (m *MemoryCounter) hit(key string, window, expiresAt time.Time) int {
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
	return w.count
}
