package store_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// The benchmarks measure durable commits: one small INSERT per transaction,
// with SQLite at synchronous=FULL. Run them with
//
//	go test -run '^$' -bench . ./store/
//
// Single commits one after another show the cost of one fsync; 64
// goroutines committing at once show what group commit buys.

func BenchmarkSQLiteSingleCommit(b *testing.B) {
	benchSequential(b, storetest.OpenSQLite(b))
}

func BenchmarkSQLiteGroupCommit64(b *testing.B) {
	benchConcurrent(b, storetest.OpenSQLite(b), 64)
}

func BenchmarkPostgresSingleCommit(b *testing.B) {
	benchSequential(b, openPostgresBench(b))
}

func BenchmarkPostgresGroupCommit64(b *testing.B) {
	benchConcurrent(b, openPostgresBench(b), 64)
}

func openPostgresBench(b *testing.B) *store.DB {
	if os.Getenv(storetest.PostgresEnv) == "" {
		b.Skipf("%s is not set", storetest.PostgresEnv)
	}
	return storetest.Open(b, "postgres", clock.Real{})
}

// insert commits one new settings row in its own transaction.
func insert(ctx context.Context, db *store.DB, n int64) error {
	return db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		_, err := q.EnsureSetting(ctx, "bench_"+strconv.FormatInt(n, 10), "v")
		return err
	})
}

func benchSequential(b *testing.B, db *store.DB) {
	ctx := context.Background()
	var n int64
	for b.Loop() {
		n++
		if err := insert(ctx, db, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

func benchConcurrent(b *testing.B, db *store.DB, goroutines int) {
	ctx := context.Background()
	var n atomic.Int64
	// RunParallel starts parallelism×GOMAXPROCS goroutines.
	b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := insert(ctx, db, n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
