package api

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

func created(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusCreated, single{map[string]string{"id": payd.NewID("thg_")}})
	return nil
}

// TestRateLimit covers spec 8.2's mechanism: 429 rate_limited with
// Retry-After, windows on the service clock, one budget per address.
func TestRateLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		limited := route{method: "POST", path: "/_test/limited", access: public, limit: "checkouts", h: created}
		b := setup(t, db, limited)
		hit := func(b *bundle) *response {
			return b.do(request{method: "POST", path: "/_test/limited"})
		}
		// Start at a window boundary so that the test cannot straddle two windows.
		now := b.clock.Now()
		b.clock.Advance(now.Truncate(10 * time.Minute).Add(10 * time.Minute).Sub(now))
		for i := 0; i < 30; i++ {
			if r := hit(b); r.status != 201 {
				t.Fatalf("hit %d: %d %s", i+1, r.status, r.body)
			}
		}
		b.clock.Advance(4 * time.Minute)
		r := hit(b)
		if code, _ := r.errorCode(t); r.status != 429 || code != "rate_limited" {
			t.Fatalf("31st: %d %s", r.status, r.body)
		}
		if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra != 360 {
			t.Fatalf("Retry-After %q, want 360", r.header.Get("Retry-After"))
		}
		b.clock.Advance(6 * time.Minute)
		if r := hit(b); r.status != 201 {
			t.Fatalf("new window: %d", r.status)
		}
		if db.Dialect() != "postgres" {
			return
		}
		// A second replica on the same database shares the budget.
		b2 := setup(t, db, limited)
		b2.clock.Advance(b.clock.Now().Sub(b2.clock.Now()))
		for i := 0; i < 29; i++ {
			if r := hit(b2); r.status != 201 {
				t.Fatalf("replica hit %d: %d", i, r.status)
			}
		}
		if r := hit(b); r.status != 429 {
			t.Fatalf("replicas must share one budget: %d", r.status)
		}
	})
}

// TestClientIP checks which address is limited behind trusted proxies.
func TestClientIP(t *testing.T) {
	s := &Server{}
	s.opts.TrustedProxies = mustPrefixes(t, "10.0.0.0/8", "127.0.0.1/32")
	cases := []struct{ remote, xff, want string }{
		{"203.0.113.9:5000", "1.2.3.4", "203.0.113.9"},                        // untrusted peer: header ignored
		{"127.0.0.1:5000", "198.51.100.7", "198.51.100.7"},                    // trusted proxy
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.7, 10.1.1.1", "198.51.100.7"}, // nearest untrusted hop
		{"127.0.0.1:5000", "", "127.0.0.1"},
		{"127.0.0.1:5000", "garbage", "127.0.0.1"},
	}
	for _, c := range cases {
		r, _ := http.NewRequestWithContext(context.Background(), "GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := s.clientIP(r); got != c.want {
			t.Errorf("%s %q: got %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}

// TestPause covers 503 temporarily_unavailable for what the operator paused.
func TestPause(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, route{method: "POST", path: "/_test/checkouts", access: public, pause: payd.PauseCheckouts, h: created})
		if r := b.do(request{method: "POST", path: "/_test/checkouts"}); r.status != 201 {
			t.Fatalf("%d", r.status)
		}
		if err := db.SetPause(context.Background(), payd.Pause{Name: payd.PauseCheckouts, PausedAt: b.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Second) // replicas re-read pauses every second
		r := b.do(request{method: "POST", path: "/_test/checkouts"})
		if code, _ := r.errorCode(t); r.status != 503 || code != "temporarily_unavailable" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if err := db.DeletePause(context.Background(), payd.PauseCheckouts); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Second)
		if r := b.do(request{method: "POST", path: "/_test/checkouts"}); r.status != 201 {
			t.Fatalf("after resume: %d", r.status)
		}
	})
}

func mustPrefixes(t *testing.T, ss ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// FuzzClientIP feeds arbitrary X-Forwarded-For values through a trusted
// proxy: the answer is always the peer or an address the header named.
func FuzzClientIP(f *testing.F) {
	for _, seed := range []string{"", "198.51.100.7", "6.6.6.6, 198.51.100.7, 10.1.1.1", "garbage", ",,,", "::1, 2001:db8::1", "10.0.0.1,10.0.0.2"} {
		f.Add(seed)
	}
	s := &Server{}
	s.opts.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	f.Fuzz(func(t *testing.T, xff string) {
		r, _ := http.NewRequestWithContext(context.Background(), "GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		r.Header.Set("X-Forwarded-For", xff)
		got := s.clientIP(r)
		if got == "127.0.0.1" {
			return
		}
		if _, err := netip.ParseAddr(got); err != nil || !strings.Contains(xff, got) {
			t.Fatalf("clientIP(%q) = %q", xff, got)
		}
	})
}

// TestMemoryCounter checks the in-process counter: one count per key and
// window, a new window starting from one, and ended windows dropped within
// a sweep interval, however many addresses came and went.
func TestMemoryCounter(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemoryCounter(clk)
	start := clk.Now()
	hit := func(key string, window time.Time, want int) {
		t.Helper()
		if n, err := m.CountRateHit(ctx, key, window, window.Add(10*time.Minute)); err != nil || n != want {
			t.Fatalf("CountRateHit(%s) = %d, %v; want %d", key, n, err, want)
		}
	}
	hit("ip:a", start, 1)
	hit("ip:a", start, 2)
	hit("ip:b", start, 1)
	for i := range 5000 { // many addresses, each once
		hit("ip:"+strconv.Itoa(i), start, 1)
	}
	hit("ip:a", start, 3)
	if n := m.live(); n != 5002 {
		t.Fatalf("%d windows live, want 5002", n)
	}
	// The windows end; a hit in the next window starts from one, and the
	// next sweep drops every ended window.
	clk.Advance(10 * time.Minute)
	next := clk.Now()
	hit("ip:a", next, 1)
	clk.Advance(sweepEvery)
	hit("ip:a", next, 2)
	if n := m.live(); n != 1 {
		t.Errorf("%d windows live after the sweep, want 1", n)
	}
}

// live returns how many windows the counter holds.
func (m *MemoryCounter) live() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.windows)
}

// BenchmarkMemoryCounterNewAddresses measures a hit from an address never
// seen before while many windows are live (a checkout's ten minutes of
// customers): it must not grow with their number.
func BenchmarkMemoryCounterNewAddresses(b *testing.B) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemoryCounter(clk)
	window := clk.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := m.CountRateHit(ctx, "ip:"+strconv.Itoa(i), window, window.Add(10*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
}
