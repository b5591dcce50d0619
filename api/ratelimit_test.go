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
		b := setup(t, db, limitedRoute)
		// Start at a window boundary: the 30 hits are then all in one window.
		alignTo(b, 0)
		for i := 0; i < 30; i++ {
			if r := hitLimited(b, ""); r.status != 201 {
				t.Fatalf("hit %d: %d %s", i+1, r.status, r.body)
			}
		}
		b.clock.Advance(4 * time.Minute)
		// The 31st counts too: in the next window 31 previous hits weigh
		// 31·(600−e)/600, and one more fits once that is at most 29, at
		// e = 600 − ⌊29·600/31⌋ s = 38.71 s: 6 min + 38.71 s from now.
		wantRetry(t, hitLimited(b, ""), 399)
		b.clock.Advance(6 * time.Minute)
		wantRetry(t, hitLimited(b, ""), 0) // too early: the hits still count
		b.clock.Advance(10 * time.Minute)
		if r := hitLimited(b, ""); r.status != 201 {
			t.Fatalf("a window later: %d", r.status)
		}
		if db.Dialect() != "postgres" {
			return
		}
		// A second replica on the same database shares the budget.
		alignTo(b, 0)
		b2 := setup(t, db, limitedRoute)
		b2.clock.Advance(b.clock.Now().Sub(b2.clock.Now()))
		for i := 0; i < 29; i++ { // the previous window's one hit weighs 1 at e = 0
			if r := hitLimited(b2, ""); r.status != 201 {
				t.Fatalf("replica hit %d: %d", i, r.status)
			}
		}
		if r := hitLimited(b, ""); r.status != 429 {
			t.Fatalf("replicas must share one budget: %d", r.status)
		}
	})
}

// TestRateLimitSlides is issue 15's burst: 30 checkouts just before a
// clock-aligned window ends and 30 just after used to all pass, 60 within
// 11 s. The window slides now: the second 30 are refused, Retry-After is
// exactly when the next one fits, and a client that waits for it gets in.
func TestRateLimitSlides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, limitedRoute)
		alignTo(b, -5*time.Second)
		for i := range 30 {
			if r := hitLimited(b, ""); r.status != 201 {
				t.Fatalf("hit %d: %d", i+1, r.status)
			}
		}
		b.clock.Advance(10 * time.Second)
		var last *response
		for i := range 30 {
			if last = hitLimited(b, ""); last.status != 429 {
				t.Fatalf("hit %d of the second burst, 10 s after the first: %d, want 429", i+1, last.status)
			}
		}
		// 30 hits before, 30 refused ones now at e = 5 s: in the next window
		// 30·(600−e)/600 + 1 ≤ 30 at e = 20 s, 600 − 5 + 20 = 615 s away.
		wantRetry(t, last, 615)
		b.clock.Advance(614 * time.Second)
		b.srv.opts.TrustedProxies = mustPrefixes(t, "127.0.0.1/32")
		if r := hitLimited(b, "198.51.100.1"); r.status != 201 {
			t.Fatalf("another client: %d, want its own budget", r.status)
		}
		b.clock.Advance(time.Second)
		if r := hitLimited(b, ""); r.status != 201 {
			t.Fatalf("after Retry-After: %d %s", r.status, r.body)
		}
	})
}

// TestRateLimitKeysClients checks whom a budget belongs to behind a trusted
// proxy: X-Forwarded-For entries with ports name their own clients, and
// the addresses of one IPv6 /64 share one budget.
func TestRateLimitKeysClients(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, limitedRoute)
		b.srv.opts.TrustedProxies = mustPrefixes(t, "127.0.0.1/32")
		alignTo(b, 0)
		for i := range 30 {
			if r := hitLimited(b, "2001:db8:1:2::"+strconv.Itoa(i+1)); r.status != 201 {
				t.Fatalf("v6 hit %d: %d", i+1, r.status)
			}
		}
		if r := hitLimited(b, "[2001:db8:1:2:ffff::9]:443"); r.status != 429 {
			t.Fatalf("a 31st address of the same /64: %d, want 429", r.status)
		}
		if r := hitLimited(b, "2001:db8:1:3::1"); r.status != 201 {
			t.Fatalf("the next /64: %d, want its own budget", r.status)
		}
		for i := range 30 {
			if r := hitLimited(b, "198.51.100.7:"+strconv.Itoa(4000+i)); r.status != 201 {
				t.Fatalf("v4 with port, hit %d: %d", i+1, r.status)
			}
		}
		for _, xff := range []string{"198.51.100.7:4711", "198.51.100.7"} {
			if r := hitLimited(b, xff); r.status != 429 {
				t.Fatalf("%s: %d, want its own spent budget", xff, r.status)
			}
		}
		if r := hitLimited(b, "198.51.100.8:4711"); r.status != 201 {
			t.Fatalf("another client behind the proxy: %d, want its own budget", r.status)
		}
	})
}

var limitedRoute = route{method: "POST", path: "/_test/limited", access: public, limit: "checkouts", h: created}

// hitLimited sends one request to the limited test route, as forwarded for
// xff when it is set.
func hitLimited(b *bundle, xff string) *response {
	req := request{method: "POST", path: "/_test/limited"}
	if xff != "" {
		req.header = map[string]string{"X-Forwarded-For": xff}
	}
	return b.do(req)
}

// alignTo moves b's clock to d from the next ten-minute boundary.
func alignTo(b *bundle, d time.Duration) {
	now := b.clock.Now()
	target := now.Truncate(10 * time.Minute).Add(10*time.Minute + d)
	if !target.After(now) {
		target = target.Add(10 * time.Minute)
	}
	b.clock.Advance(target.Sub(now))
}

// wantRetry checks a 429 rate_limited answer whose Retry-After is secs, or
// any Retry-After when secs is 0. The service clock runs on in real time
// while a test sends its requests, so a few seconds less also pass.
func wantRetry(t *testing.T, r *response, secs int) {
	t.Helper()
	if code, _ := r.errorCode(t); r.status != 429 || code != "rate_limited" {
		t.Fatalf("want 429 rate_limited, got %d %s", r.status, r.body)
	}
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra <= 0 || secs != 0 && (ra > secs || ra < secs-3) {
		t.Fatalf("Retry-After %q, want %d", r.header.Get("Retry-After"), secs)
	}
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
		{"127.0.0.1:5000", "198.51.100.7:4711", "198.51.100.7"}, // ports, as some proxies write them
		{"127.0.0.1:5000", "[2001:db8::1]:443", "2001:db8::1"},
		{"127.0.0.1:5000", "[2001:db8::1]", "2001:db8::1"},
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.7:80, 10.1.1.1:8080", "198.51.100.7"},
		{"127.0.0.1:5000", "::ffff:198.51.100.7", "198.51.100.7"},
		{"[::1]:5000", "198.51.100.7", "::1"},
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

// TestRateRuleWait checks the sliding-window decision and its Retry-After
// against hand-computed cases, and that waiting Retry-After always suffices
// and never more than needed.
func TestRateRuleWait(t *testing.T) {
	r := rateRule{Limit: 30, Window: 10 * time.Minute}
	cases := []struct {
		cur, prev int
		elapsed   time.Duration
		want      time.Duration
	}{
		{30, 0, 0, 0},
		{31, 0, 0, 10*time.Minute + 38709678*time.Microsecond},
		{1, 30, 5 * time.Second, 35 * time.Second},
		{1, 30, 20 * time.Second, 0},
		{15, 30, 5 * time.Minute, 0},
		{16, 30, 5 * time.Minute, 40 * time.Second},
	}
	for _, c := range cases {
		if got := r.wait(c.cur, c.prev, c.elapsed); got != c.want {
			t.Errorf("wait(%d, %d, %v) = %v, want %v", c.cur, c.prev, c.elapsed, got, c.want)
		}
	}
	for cur := 1; cur <= 40; cur++ {
		for _, prev := range []int{0, 1, 7, 29, 30, 31, 1000} {
			for e := time.Duration(0); e < r.Window; e += 17 * time.Second {
				w := r.wait(cur, prev, e)
				if w == 0 {
					continue
				}
				at := e + w // the retry, the only hit since
				if at < r.Window && r.wait(cur+1, prev, at) != 0 || at >= r.Window && r.wait(1, cur, at-r.Window) != 0 {
					t.Fatalf("wait(%d, %d, %v) = %v is not enough", cur, prev, e, w)
				}
				if before := at - time.Microsecond; before < r.Window && r.wait(cur+1, prev, before) == 0 ||
					before >= r.Window && r.wait(1, cur, before-r.Window) == 0 {
					t.Fatalf("wait(%d, %d, %v) = %v is more than needed", cur, prev, e, w)
				}
			}
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
// proxy: the answer is always the peer or an address one of the header's
// entries names, and its rate subject parses back.
func FuzzClientIP(f *testing.F) {
	for _, seed := range []string{"", "198.51.100.7", "6.6.6.6, 198.51.100.7, 10.1.1.1", "garbage", ",,,", "::1, 2001:db8::1",
		"10.0.0.1,10.0.0.2", "198.51.100.7:4711", "[2001:db8::1]:443", "[2001:db8::1]", "[fe80::1%eth0]:80", "::ffff:1.2.3.4"} {
		f.Add(seed)
	}
	s := &Server{}
	s.opts.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	f.Fuzz(func(t *testing.T, xff string) {
		r, _ := http.NewRequestWithContext(context.Background(), "GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		r.Header.Set("X-Forwarded-For", xff)
		got := s.clientIP(r)
		if _, err := netip.ParsePrefix(rateSubject(got)); err != nil && rateSubject(got) != got {
			t.Fatalf("rateSubject(%q) = %q", got, rateSubject(got))
		}
		if got == "127.0.0.1" {
			return
		}
		for _, hop := range strings.Split(xff, ",") {
			if a, ok := parseHop(hop); ok && a.String() == got {
				return
			}
		}
		t.Fatalf("clientIP(%q) = %q, which no entry names", xff, got)
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
