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
		w := NewWatcher(db, &quietNet{}, clock.Real{}, slog.New(slog.DiscardHandler), Options{})
		for _, tc := range []struct {
			name string
			from payd.WatchCursor
		}{{"every watched checkout", payd.WatchCursor{}}, {"the live ones", payd.WatchCursor{Until: payd.LiveWatchUntil}}} {
			var count int
			read := median5(t, func() (err error) { count, err = readWatched(ctx, db, now, tc.from); return err })
			run := median5(t, func() error { _, err := w.run(ctx, tc.from); return err })
			t.Logf("%s, %s (%d): store read %v, watcher run %v", db.Dialect(), tc.name, count, read, run)
		}
	})
}

// quietNet is a network on which nothing was sent.
type quietNet struct{ fakeNet }

func (*quietNet) Transfers(context.Context, []payd.Deposit) ([]payd.Transfer, error) { return nil, nil }

// seedWatched stores n polygon checkouts of one business, 500 a
// transaction: every hundredth live, the others ended at now.
func seedWatched(t *testing.T, db *store.DB, n int, now time.Time) {
	ctx := context.Background()
	biz, err := payd.NewBusiness("Shop", "shop@example.com", false, now)
	must(t, err)
	must(t, db.CreateBusiness(ctx, biz))
	w, err := payd.NewWallet(biz.ID, map[money.Network]string{money.Polygon: "xpub-" + payd.RandomString(20)},
		payd.WalletAttached, now)
	must(t, err)
	must(t, db.CreateWallet(ctx, w))
	for i := 0; i < n; i += 500 {
		must(t, db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			for j := i; j < min(i+500, n); j++ {
				p, err := payd.NewPayment(biz.ID, payd.PaymentParams{Amount: 2500, Currency: money.USD,
					FeePayer: money.FeePayerBusiness}, rates, false, now)
				if err != nil {
					return err
				}
				c, err := payd.OpenCryptoCheckout(p, payd.OpenParams{Asset: money.USDC, Network: money.Polygon,
					Rates: rates, QuoteMinutes: 15, Deposit: payd.Deposit{Address: fmt.Sprintf("0x%040d", j)},
					WalletID: w.ID, Required: 2}, now)
				if err != nil {
					return err
				}
				if j%100 != 0 {
					c.Status, c.WatchUntil = payd.CheckoutExpired, now.Add(payd.LateWindow)
				}
				if err := q.CreatePayment(ctx, p); err != nil {
					return err
				}
				if err := q.CreateCheckout(ctx, c); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// readWatched reads the watched checkouts from the cursor on, page by page
// as the watcher does, and counts them.
func readWatched(ctx context.Context, db *store.DB, now time.Time, from payd.WatchCursor) (int, error) {
	n := 0
	for after := from; ; {
		page, err := db.WatchedCheckouts(ctx, money.Polygon, now, after, 500)
		if err != nil || len(page) == 0 {
			return n, err
		}
		n, after = n+len(page), payd.WatchCursorOf(page[len(page)-1])
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
