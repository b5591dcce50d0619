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
	t.Run("WindowHitSeesThePreviousWindow", func(t *testing.T) {
		ctx, st := b.setup(t)
		w := t0.Truncate(10 * time.Minute)
		hit := func(key string, window time.Time, wantCur, wantPrev int) {
			t.Helper()
			cur, prev, err := st.CountWindowHit(ctx, key, window, 10*time.Minute)
			if err != nil || cur != wantCur || prev != wantPrev {
				t.Fatalf("CountWindowHit(%s, %v) = %d, %d, %v; want %d, %d", key, window, cur, prev, err, wantCur, wantPrev)
			}
		}
		hit("checkouts|10.0.0.1", w, 1, 0)
		hit("checkouts|10.0.0.1", w, 2, 0)
		hit("checkouts|10.0.0.2", w, 1, 0)
		next := w.Add(10 * time.Minute)
		hit("checkouts|10.0.0.1", next, 1, 2)
		hit("checkouts|10.0.0.1", next, 2, 2)
		hit("checkouts|10.0.0.1", next.Add(10*time.Minute), 1, 2)
		// The row outlives its own window by one, while it is the previous one.
		n, err := st.DeleteExpiredRateCounters(ctx, next.Add(10*time.Minute))
		must(t, err)
		if n != 2 {
			t.Fatalf("deleted %d counters at the end of the next window, want the first window's 2", n)
		}
		hit("checkouts|10.0.0.1", next.Add(10*time.Minute), 2, 2)
	})
	t.Run("ConcurrentWindowHitsAreAllCounted", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, _, err := st.CountWindowHit(ctx, "k", t0.Add(-time.Minute), time.Minute)
		must(t, err)
		const n = 50
		got, errs := parallel(n, func(int) (int, error) {
			cur, prev, err := st.CountWindowHit(ctx, "k", t0, time.Minute)
			if err == nil && prev != 1 {
				t.Errorf("previous window counted %d, want 1", prev)
			}
			return cur, err
		})
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
