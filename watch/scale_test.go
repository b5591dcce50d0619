package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestWatchScale measures the watcher at a business's week of checkouts
// (docs/benchmarks.md): PAYD_WATCH_SCALE checkouts on polygon, one in a
// hundred still taking funds and the rest ended, watched for late funds.
// It logs, on each database, the median of five of: the store's read of
// every watched checkout and of the live ones, and a watcher run over each
// with nothing changed. It runs only when asked:
//
//	PAYD_WATCH_SCALE=100000 go test -run TestWatchScale -v ./watch
func TestWatchScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PAYD_WATCH_SCALE"))
	if n <= 0 {
		t.Skip("set PAYD_WATCH_SCALE=N to measure the watcher over N watched checkouts")
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, now := context.Background(), clock.Real{}.Now()
		seedWatched(t, db, n, now)
		w := NewWatcher(db, &askedNet{}, clock.Real{}, slog.New(slog.DiscardHandler), Options{})
		for _, tc := range []struct {
			name string
			from payd.WatchCursor
		}{{"every watched checkout", payd.WatchCursor{}}, {"the live ones", payd.WatchCursor{Until: payd.LiveWatchUntil}}} {
			var count int
			read := median5(t, func() (err error) {
				count, err = storetest.CountWatched(ctx, db, money.Polygon, now, tc.from)
				return err
			})
			run := median5(t, func() error { _, err := w.run(ctx, tc.from); return err })
			t.Logf("%s, %s (%d): store read %v, watcher run %v", db.Dialect(), tc.name, count, read, run)
		}
	})
}

// seedWatched stores n polygon checkouts of one business, 500 a
// transaction: every hundredth live, the others ended at now.
func seedWatched(t *testing.T, db *store.DB, n int, now time.Time) {
	w := newShop(t, db, now)
	for i := 0; i < n; i += 500 {
		must(t, db.Tx(context.Background(), func(ctx context.Context, q payd.Queries) error {
			for j := i; j < min(i+500, n); j++ {
				if _, err := storeCheckout(ctx, q, w, now, fmt.Sprintf("0x%040d", j), j%100 != 0); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// median5 runs fn five times and returns the median duration.
func median5(t *testing.T, fn func() error) time.Duration {
	clk := clock.Real{}
	var took []time.Duration
	for range 5 {
		start := clk.Now()
		must(t, fn())
		took = append(took, clk.Now().Sub(start).Round(100*time.Microsecond))
	}
	slices.Sort(took)
	return took[2]
}
