package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// BenchmarkList measures GET /payments' store queries, status_counts and
// metrics over one business with PAYD_LIST_BENCH_N payments (default
// 1,000,000) spread over a year. The seeded database is kept and reused:
// an SQLite file at PAYD_LIST_BENCH_DB (default /tmp/payd-list-bench.db),
// and on PostgreSQL (PAYD_TEST_POSTGRES) the schema list_bench_N.
//
//	go test -run '^$' -bench BenchmarkList -benchtime 200x ./store
//
// Each case reports its median and p99 in ms besides the mean (ns/op).
func BenchmarkList(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("PAYD_LIST_BENCH_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	b.Run("sqlite", func(b *testing.B) {
		path := os.Getenv("PAYD_LIST_BENCH_DB")
		if path == "" {
			path = "/tmp/payd-list-bench.db"
		}
		benchList(b, "sqlite:"+path, n)
	})
	if dsn := os.Getenv("PAYD_TEST_POSTGRES"); dsn != "" {
		b.Run("postgres", func(b *testing.B) {
			schema := fmt.Sprintf("list_bench_%d", n)
			pg, err := sql.Open("pgx", dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer pg.Close()
			if _, err := pg.Exec("CREATE SCHEMA IF NOT EXISTS " + schema); err != nil {
				b.Fatal(err)
			}
			benchList(b, dsn+"&search_path="+schema, n)
		})
	}
}

// benchBiz is the seeded business.
const benchBiz = "biz_listbench0000000000000"

// benchEnd is the newest payment's time; the oldest is a year before.
var benchEnd = time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)

func benchList(b *testing.B, dsn string, n int) {
	ctx := context.Background()
	db, err := Open(ctx, dsn, clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if err := benchSeed(ctx, db, n); err != nil {
		b.Fatal(err)
	}
	deep := benchEnd.Add(-330 * 24 * time.Hour) // about 90% of the way down
	deepPos := &payd.PaymentPosition{CreatedAt: deep, ID: "pmt_zzzzzzzzzzzzzzzzzzzzzzzz"}
	base := payd.PaymentFilter{BusinessID: benchBiz, Sort: payd.SortCreatedDesc, Limit: 26}
	with := func(edit func(f *payd.PaymentFilter)) payd.PaymentFilter {
		f := base
		edit(&f)
		return f
	}
	succeeded, card := payd.PaymentSucceeded, payd.RailCard
	customer, link := "cst_bench00000000000000042", "lnk_bench00000000000000007"
	month := benchEnd.Add(-30 * 24 * time.Hour)
	lists := map[string]payd.PaymentFilter{
		"first":           base,
		"deep":            with(func(f *payd.PaymentFilter) { f.After = deepPos }),
		"status first":    with(func(f *payd.PaymentFilter) { f.Status = &succeeded }),
		"status deep":     with(func(f *payd.PaymentFilter) { f.Status, f.After = &succeeded, deepPos }),
		"rail deep":       with(func(f *payd.PaymentFilter) { f.Rail, f.After = &card, deepPos }),
		"customer":        with(func(f *payd.PaymentFilter) { f.CustomerID = &customer }),
		"link deep":       with(func(f *payd.PaymentFilter) { f.LinkID, f.After = &link, deepPos }),
		"metadata rare":   with(func(f *payd.PaymentFilter) { f.Metadata = []payd.MetadataPair{{Key: "order_id", Value: "A-777"}} }),
		"metadata common": with(func(f *payd.PaymentFilter) { f.Metadata = []payd.MetadataPair{{Key: "plan", Value: "pro"}} }),
		"range":           with(func(f *payd.PaymentFilter) { f.CreatedAfter, f.CreatedBefore = &deep, &month }),
		"amount first":    with(func(f *payd.PaymentFilter) { f.Sort = payd.SortAmountDesc }),
		"amount deep": with(func(f *payd.PaymentFilter) {
			f.Sort, f.After = payd.SortAmountAsc, &payd.PaymentPosition{Amount: 90_000, ID: "pmt_"}
		}),
		"amount status deep": with(func(f *payd.PaymentFilter) {
			f.Sort, f.Status, f.After = payd.SortAmountDesc, &succeeded, &payd.PaymentPosition{Amount: 10_000, ID: "pmt_"}
		}),
		"reference":       with(func(f *payd.PaymentFilter) { f.Reference = ptrTo("ord-4242") }),
		"q common":        with(func(f *payd.PaymentFilter) { f.Query = "books" }),
		"status+customer": with(func(f *payd.PaymentFilter) { f.Status, f.CustomerID = &succeeded, &customer }),
	}
	for name, f := range lists {
		b.Run("list "+name, func(b *testing.B) {
			timeIt(b, func() error { _, err := db.ListPayments(ctx, f); return err })
		})
	}
	counts := map[string]payd.PaymentFilter{
		"all": base,
		"range": with(func(f *payd.PaymentFilter) {
			f.CreatedAfter, f.CreatedBefore = ptrTo(deep.Add(time.Hour)), ptrTo(month.Add(time.Hour))
		}),
		"rail":     with(func(f *payd.PaymentFilter) { f.Rail = &card }),
		"customer": with(func(f *payd.PaymentFilter) { f.CustomerID = &customer }),
	}
	for name, f := range counts {
		b.Run("status_counts "+name, func(b *testing.B) {
			timeIt(b, func() error { _, err := db.PaymentStatusCounts(ctx, f); return err })
		})
	}
	b.Run("metrics 366 days", func(b *testing.B) {
		timeIt(b, func() error {
			_, err := db.PaymentDays(ctx, benchBiz, benchEnd.AddDate(0, 0, -365), benchEnd)
			return err
		})
	})
}

func ptrTo[T any](v T) *T { return &v }

// timeIt runs fn b.N times and reports the median and p99.
func timeIt(b *testing.B, fn func() error) {
	durs := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := clock.Real{}.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, clock.Real{}.Now().Sub(start))
	}
	slices.Sort(durs)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
	b.ReportMetric(ms(durs[len(durs)*99/100]), "p99-ms")
}

// benchSeed fills the business with n payments unless it has them.
func benchSeed(ctx context.Context, db *DB, n int) error {
	var have int
	if err := db.pool.ex.QueryRowContext(ctx, `SELECT COUNT(*) FROM payments WHERE business_id = $1`, benchBiz).Scan(&have); err != nil {
		return err
	}
	if have >= n {
		return nil
	}
	if have == 0 {
		if err := benchBusiness(ctx, db); err != nil {
			return err
		}
	}
	workers := 1
	if db.Dialect() == dialectPostgres {
		workers = 8
	}
	// Each worker seeds its own stretch of time: workers inserting into one
	// day's rollup rows in different orders would deadlock.
	const batch = 500
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	per := (n - have + workers - 1) / workers
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := min(have+(w+1)*per, n)
			for start := have + w*per; start < end; start += batch {
				if err := db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
					for i := start; i < min(start+batch, end); i++ {
						if err := q.CreatePayment(ctx, benchPayment(i, n)); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// benchBusiness stores the business and its 2,000 customers.
func benchBusiness(ctx context.Context, db *DB) error {
	return db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		biz, err := payd.NewBusiness("Bench Books", "bench@example.com", false, benchEnd.AddDate(-1, 0, 0))
		if err != nil {
			return err
		}
		biz.ID = benchBiz
		if err := q.CreateBusiness(ctx, biz); err != nil {
			return err
		}
		for i := range 2000 {
			c, err := payd.NewCustomer(benchBiz, fmt.Sprintf("Reader %d", i), fmt.Sprintf("reader%d@example.com", i), "", biz.CreatedAt)
			if err != nil {
				return err
			}
			c.ID = fmt.Sprintf("cst_bench%017d", i)
			if err := q.CreateCustomer(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchPayment is the i-th of n payments, newest last, evenly over a year,
// with a realistic mix of statuses, rails, customers, links and metadata.
func benchPayment(i, n int) *payd.Payment {
	at := benchEnd.Add(-time.Duration(n-i) * (365 * 24 * time.Hour / time.Duration(n)))
	amount := int64(100 + (i*7919)%99_900)
	p := &payd.Payment{BusinessID: benchBiz, Code: fmt.Sprintf("benchcode%011d", i), Amount: amount,
		Currency: money.USD, FeePayer: money.FeePayerBusiness,
		Reporting:   payd.Reporting{AmountUSD: amount, NetUSD: amount},
		Description: []string{"Two books", "A pen", "Gift card", "Subscription"}[i%4],
		Metadata:    map[string]string{"order_id": fmt.Sprintf("A-%d", i), "plan": []string{"free", "pro", "team", "edu", "org"}[i%5]},
		Country:     "US", CreatedAt: at,
		Events: []payd.PaymentEvent{{Type: payd.EventCreated, CreatedAt: at}}}
	p.ID = fmt.Sprintf("pmt_bench%017d", i)
	p.UpdatedAt = at
	p.Status = []payd.PaymentStatus{payd.PaymentSucceeded, payd.PaymentSucceeded, payd.PaymentSucceeded,
		payd.PaymentPending, payd.PaymentExpired, payd.PaymentSucceeded, payd.PaymentFailed, payd.PaymentSucceeded,
		payd.PaymentUnderpaid, payd.PaymentExpired, payd.PaymentSucceeded, payd.PaymentNeedsReview}[i%12]
	if i%2 == 0 {
		p.CustomerID = fmt.Sprintf("cst_bench%017d", i%2000)
	}
	if i%3 == 0 {
		p.LinkID = fmt.Sprintf("lnk_bench%017d", i%50)
	}
	if i%2 == 1 {
		p.Reference = fmt.Sprintf("ord-%d", i)
	}
	if i%5 != 4 {
		rail := []payd.Rail{payd.RailCrypto, payd.RailCrypto, payd.RailCard}[i%3]
		p.Method = &payd.Method{Rail: rail, Asset: money.USDC, Network: money.Polygon, Amount: "1.00", ExpectedAmount: "1.00",
			FromAddress: fmt.Sprintf("0xfrom%09d", i), TxHash: fmt.Sprintf("0xhash%09d", i)}
	}
	return p
}
