package store_test

import (
	"context"
	"testing"

	"payd"
	"payd/clock"
	"payd/store/storetest"
)

// TestLane checks that a lane sees and writes the same database as its
// DB, that on SQLite it is the DB itself, and that closing a PostgreSQL
// lane leaves the DB open.
func TestLane(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Open(t, dialect, clock.Real{})
			ctx := context.Background()
			lane, err := db.Lane(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if (lane == db) != (dialect == "sqlite") {
				t.Fatalf("%s: lane is the DB itself: %t", dialect, lane == db)
			}
			now := clock.Real{}.Now()
			b := &payd.Business{ID: payd.NewID(payd.PrefixBusiness), Name: "Lane", CreatedAt: now, UpdatedAt: now}
			if err := lane.CreateBusiness(ctx, b); err != nil {
				t.Fatal(err)
			}
			if lane != db {
				if err := lane.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.BusinessByID(ctx, b.ID); err != nil {
				t.Fatalf("the DB does not see what the lane wrote: %v", err)
			}
		})
	}
}
