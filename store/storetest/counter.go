package storetest

import (
	"slices"
	"testing"
	"time"
)

func testRateCounter(t *testing.T, b *bundle) {
	t.Run("Counts", func(t *testing.T) {
		ctx, st := b.setup(t)
		w, exp := t0.Truncate(time.Minute), t0.Add(time.Minute)
		for want := 1; want <= 3; want++ {
			n, err := st.CountRateHit(ctx, "checkouts|10.0.0.1", w, exp)
			must(t, err)
			if n != want {
				t.Fatalf("hit %d counted %d", want, n)
			}
		}
		for _, hit := range []struct {
			key    string
			window time.Time
		}{{"checkouts|10.0.0.2", w}, {"checkouts|10.0.0.1", w.Add(time.Minute)}} {
			if n, err := st.CountRateHit(ctx, hit.key, hit.window, exp); err != nil || n != 1 {
				t.Fatalf("first hit of %s at %v = %d, %v; want 1", hit.key, hit.window, n, err)
			}
		}
	})
	t.Run("ConcurrentHitsAreAllCounted", func(t *testing.T) {
		ctx, st := b.setup(t)
		const n = 50
		got, errs := parallel(n, func(int) (int, error) { return st.CountRateHit(ctx, "k", t0, t0.Add(time.Minute)) })
		noErrors(t, errs)
		slices.Sort(got)
		for i, c := range got {
			if c != i+1 {
				t.Fatalf("counts = %v, want 1 to %d once each", got, n)
			}
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		ctx, st := b.setup(t)
		for i, key := range []string{"a", "b", "c"} {
			_, err := st.CountRateHit(ctx, key, t0, t0.Add(time.Duration(i)*time.Minute))
			must(t, err)
		}
		n, err := st.DeleteExpiredRateCounters(ctx, t0.Add(time.Minute))
		must(t, err)
		if n != 2 {
			t.Fatalf("deleted %d counters, want 2 (expiry at or before now)", n)
		}
		if c, err := st.CountRateHit(ctx, "c", t0, t0.Add(time.Hour)); err != nil || c != 2 {
			t.Fatalf("surviving counter = %d, %v; want 2", c, err)
		}
	})
}
