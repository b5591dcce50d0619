package password

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"payd/clock"
)

// loadResult is what one burst of concurrent Verify calls measured.
type loadResult struct {
	answers   []time.Duration // every call's latency, verified or busy, sorted
	verified  []time.Duration // the latencies of calls that were not ErrBusy, sorted
	peakHeap  uint64          // HeapAlloc high-water above the baseline, bytes
	semaphore int64           // the semaphore's size, bytes
}

// pct returns the p-th percentile (nearest rank) of sorted d.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[max(0, (len(d)*p+99)/100-1)]
}

func (r loadResult) String() string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("answers p50 %v p99 %v max %v; verified %d (p50 %v p99 %v), busy %d; peak heap +%d MiB (semaphore %d MiB)",
		ms(pct(r.answers, 50)), ms(pct(r.answers, 99)), ms(pct(r.answers, 100)),
		len(r.verified), ms(pct(r.verified, 50)), ms(pct(r.verified, 99)),
		len(r.answers)-len(r.verified), r.peakHeap>>20, r.semaphore>>20)
}

// burst starts n Verify calls at once (half right, half wrong passwords)
// through one Hasher configured by c and measures their latencies and the
// heap's high-water mark, sampled every 2 ms with runtime.ReadMemStats.
func burst(t *testing.T, c Config, n int) loadResult {
	t.Helper()
	ctx := context.Background()
	h := NewHasher(c)
	enc, err := h.Hash(ctx, "violet-tram-lantern")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := clock.Real{}.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C():
			}
		}
	}()
	var (
		mu sync.Mutex
		r  = loadResult{semaphore: h.size << 10}
		wg sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			pw := "violet-tram-lantern"
			if i%2 == 1 {
				pw = "wrong-tram-lantern"
			}
			t0 := clock.Real{}.Now()
			_, _, err := h.Verify(ctx, pw, enc)
			d := clock.Real{}.Now().Sub(t0)
			if err != nil && err != ErrBusy {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			r.answers = append(r.answers, d)
			if err == nil {
				r.verified = append(r.verified, d)
			}
		})
	}
	close(start)
	wg.Wait()
	close(stop)
	<-sampled
	slices.Sort(r.answers)
	slices.Sort(r.verified)
	r.peakHeap = peak - base
	return r
}

// TestConcurrentVerify is the benchmark: 100 sign-ins at once.
// Run it with
//
//	PAYD_BENCH_PASSWORDS=1 go test -run TestConcurrentVerify -v ./password/
//
// It asserts, for the production configuration, that every answer comes
// within 1 s (p99), that some are verified, and that the heap's high-water
// mark stays under 4 × the semaphore's size + 16 MiB: the argon2id memory of
// the hashes in flight, plus the garbage of finished ones the collector has
// not reclaimed yet (GOGC=100 lets the heap reach twice its live size, and
// more while marking lags on a busy machine). It also logs other settings
// and an unbounded wait, for docs/passwords.md.
func TestConcurrentVerify(t *testing.T) {
	if os.Getenv("PAYD_BENCH_PASSWORDS") != "1" {
		t.Skip("set PAYD_BENCH_PASSWORDS=1 to run the 100-sign-in benchmark")
	}
	const n = 100
	r := burst(t, Config{}, n)
	t.Logf("production (m=%d KiB t=%d p=%d, wait %v), GOMAXPROCS %d, %d at once: %v",
		Current.Memory, Current.Time, Current.Threads, DefaultMaxWait, runtime.GOMAXPROCS(0), n, r)
	if bound := uint64(4*r.semaphore + 16<<20); pct(r.answers, 99) >= time.Second || len(r.verified) == 0 || r.peakHeap > bound {
		t.Errorf("want answers p99 < 1s, some verified, peak heap <= %d MiB", bound>>20)
	}
	long := 60 * time.Second
	t.Logf("no wait limit: %v", burst(t, Config{MaxWait: long}, n))
	for _, p := range []Params{
		{Memory: 12 << 10, Time: 3, Threads: 1, SaltLen: 16, KeyLen: 32},
		{Memory: 64 << 10, Time: 3, Threads: 1, SaltLen: 16, KeyLen: 32},
	} {
		t.Logf("m=%d KiB t=%d p=%d, no wait limit: %v", p.Memory, p.Time, p.Threads, burst(t, Config{Params: p, MaxWait: long}, n))
	}
}
