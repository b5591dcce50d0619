package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestOpsFigures reads what the operator's metrics show (ops.State) on
// both databases: every business's payments by status from the rollup,
// the pools by name, and an idle writer queue.
func TestOpsFigures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		totals, err := db.PaymentStatusTotals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(totals) != len(payd.PaymentStatuses) || totals[payd.PaymentPending] != 0 {
			t.Fatalf("totals of an empty database = %v", totals)
		}
		for i := range 3 {
			biz, err := payd.NewBusiness("Shop", "shop@example.com", false, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.CreateBusiness(ctx, biz); err != nil {
				t.Fatal(err)
			}
			for range i + 1 {
				p, err := payd.NewPayment(biz.ID, payd.PaymentParams{Amount: 2500, Currency: money.USD,
					FeePayer: money.FeePayerBusiness}, nil, false, now.Add(time.Duration(i)*24*time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if err := db.CreatePayment(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if totals, err = db.PaymentStatusTotals(ctx); err != nil || totals[payd.PaymentPending] != 6 ||
			totals[payd.PaymentSucceeded] != 0 {
			t.Fatalf("totals of 6 pending payments of 3 businesses over 3 days = %v, %v", totals, err)
		}
		pools := db.PoolStats()
		want := []string{"pool"}
		if db.Dialect() == "sqlite" {
			want = []string{"read", "write"}
		}
		var names []string
		for name := range pools {
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Fatalf("pools %v, want %v", names, want)
		}
		if q := db.WriterQueue(); q != 0 {
			t.Fatalf("writer queue at rest = %d", q)
		}
	})
}
