package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/password"
	"payd/store"
	"payd/store/storetest"
)

// TestSigninFlood is issue 18's benchmark (docs/benchmarks.md, Accounts):
// 100 sign-ins (POST /sessions) at once against the server, half with the
// right password and half with a wrong one, each for its own account and
// from its own address (so neither the per-email locks nor the per-IP
// limit of spec 8.2 answer instead of the hasher). It reports every
// answer's latency, how many signed in, failed or were told to retry (503
// temporarily_unavailable: password.ErrBusy after MaxWait), and the
// process's Go heap high-water mark above its level before the burst,
// sampled every 2 ms with runtime/metrics (no stop-the-world). It asserts
// every answer within 1 s and the heap growth under the stated bound:
// 4 × the hasher's semaphore (the hashes in flight plus the garbage of
// finished ones the collector has not reclaimed yet) + 32 MiB for the
// requests themselves.
//
// PAYD_BENCH_ACCOUNTS=1 runs it. PAYD_BENCH_MAXWAIT (a duration, e.g.
// 2s) and PAYD_BENCH_ARGON2 ("m,t": KiB and passes) change the hasher, to
// compare with the defaults; PAYD_BENCH_ROUNDS (default 3) repeats it.
func TestSigninFlood(t *testing.T) {
	if os.Getenv("PAYD_BENCH_ACCOUNTS") != "1" {
		t.Skip("set PAYD_BENCH_ACCOUNTS=1")
	}
	cfg := password.Config{}
	if v := os.Getenv("PAYD_BENCH_MAXWAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxWait = d
	}
	if v := os.Getenv("PAYD_BENCH_ARGON2"); v != "" {
		var m, tm uint32
		if _, err := fmt.Sscanf(v, "%d,%d", &m, &tm); err != nil {
			t.Fatalf("PAYD_BENCH_ARGON2=%q: %v", v, err)
		}
		cfg.Params = password.Params{Memory: m, Time: tm, Threads: 1, SaltLen: 16, KeyLen: 32}
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PAYD_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := password.NewHasher(cfg)
		b := setupWith(t, db, func(o *Options) { o.Passwords = h })
		b.srv.opts.TrustedProxies = mustPrefixes(t, "127.0.0.1/32")
		bound := 4*h.MemoryBound() + 32<<20
		t.Logf("argon2id m=%d KiB t=%d, max wait %v, GOMAXPROCS %d; semaphore %d MiB, heap bound %d MiB",
			h.Params().Memory, h.Params().Time, cfg.MaxWait, runtime.GOMAXPROCS(0), h.MemoryBound()>>20, bound>>20)
		hash, err := h.Hash(context.Background(), testPassword)
		if err != nil {
			t.Fatal(err)
		}
		for round := range rounds {
			r := signinBurst(t, b, hash, round, 100)
			t.Logf("round %d: %v", round+1, r)
			if p := pct(r.answers, 99); p >= time.Second {
				t.Errorf("round %d: answers p99 %v, want under 1 s", round+1, p)
			}
			if r.peakHeap >= bound {
				t.Errorf("round %d: heap grew %d MiB, over the bound %d MiB", round+1, r.peakHeap>>20, bound>>20)
			}
			if r.counts[http.StatusCreated] == 0 {
				t.Errorf("round %d: nobody signed in", round+1)
			}
			// Between rounds the hasher drains and the clock moves past
			// every window.
			b.clock.Advance(time.Hour)
		}
	})
}

// floodResult is what one burst measured.
type floodResult struct {
	answers  []time.Duration // every answer's latency, sorted
	verified []time.Duration // answers other than 503, sorted
	counts   map[int]int     // answers by status
	peakHeap uint64          // heap high-water above the level before, bytes
}

func (r floodResult) String() string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("answers p50 %v p99 %v max %v; 201 %d, 400 %d, 503 %d (answered after a hash: p50 %v p99 %v); heap +%d MiB",
		ms(pct(r.answers, 50)), ms(pct(r.answers, 99)), ms(pct(r.answers, 100)),
		r.counts[201], r.counts[400], r.counts[503], ms(pct(r.verified, 50)), ms(pct(r.verified, 99)), r.peakHeap>>20)
}

// pct returns the p-th percentile (nearest rank) of sorted d.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[max(0, (len(d)*p+99)/100-1)]
}

// signinBurst makes n accounts sharing one password hash, then sends n
// sign-ins at once, each from its own address.
func signinBurst(t *testing.T, b *bundle, hash string, round, n int) floodResult {
	t.Helper()
	type signin struct{ body, token, ip string }
	reqs := make([]signin, n)
	for i := range n {
		email := fmt.Sprintf("flood%d.%d@example.com", round, i)
		u, err := payd.NewUser(email, "Flood", hash, b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := b.db.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		pw := testPassword
		if i%2 == 1 {
			pw = "wrong password " + strconv.Itoa(i)
		}
		reqs[i] = signin{fmt.Sprintf(`{"email":%q,"password":%q}`, email, pw), b.token(t, "signin"),
			fmt.Sprintf("10.%d.%d.%d", round, i/250, i%250+1)}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	base := heapBytes()
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := clock.Real{}.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heapBytes())
			select {
			case <-stop:
				return
			case <-tick.C():
			}
		}
	}()
	res := floodResult{counts: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, rq := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hr, _ := http.NewRequest("POST", b.base+"/sessions", strings.NewReader(rq.body))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Origin", "http://payd.test")
			hr.Header.Set(payd.ChallengeHeader, rq.token)
			hr.Header.Set("X-Forwarded-For", rq.ip)
			<-start
			t0 := clock.Real{}.Now()
			r, err := client.Do(hr)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			d := clock.Real{}.Now().Sub(t0)
			mu.Lock()
			defer mu.Unlock()
			res.answers = append(res.answers, d)
			res.counts[r.StatusCode]++
			if r.StatusCode != http.StatusServiceUnavailable {
				res.verified = append(res.verified, d)
			} else if r.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
		}()
	}
	close(start)
	wg.Wait()
	close(stop)
	<-sampled
	if peak > base {
		res.peakHeap = peak - base
	}
	slices.Sort(res.answers)
	slices.Sort(res.verified)
	if len(res.answers) != n || res.counts[201]+res.counts[400]+res.counts[503] != n {
		t.Fatalf("answers by status %v, want %d of 201, 400 and 503", res.counts, n)
	}
	return res
}

// heapBytes reads the bytes of live and not yet swept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
