package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"payd"
	"payd/clock"
	"payd/store/storetest"
)

// storedBusiness stores a live business for a command to act on.
func storedBusiness(t *testing.T, db payd.Store) *payd.Business {
	t.Helper()
	biz, err := payd.NewBusiness("Shop", "shop@example.com", true, clock.Real{}.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateBusiness(context.Background(), biz); err != nil {
		t.Fatal(err)
	}
	return biz
}

// TestBusinessSuspend suspends and reinstates a business through the
// command line, on both databases, and checks what the store then says.
func TestBusinessSuspend(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := storetest.OpenDSN(t, dsn, clock.Real{})
		biz := storedBusiness(t, db)
		var out struct {
			BusinessID string `json:"business_id"`
			Suspended  bool   `json:"suspended"`
		}
		if err := json.Unmarshal(cli(t, dsn, "business", "suspend", "--business", biz.ID, "--json"), &out); err != nil {
			t.Fatal(err)
		}
		got, err := db.BusinessByID(ctx, biz.ID)
		if err != nil || !out.Suspended || out.BusinessID != biz.ID || got.SuspendedAt == nil {
			t.Fatalf("suspend: %+v, stored %+v, %v", out, got, err)
		}
		cli(t, dsn, "business", "reinstate", "--business", biz.ID)
		if got, err = db.BusinessByID(ctx, biz.ID); err != nil || got.SuspendedAt != nil {
			t.Fatalf("reinstate: stored %+v, %v", got, err)
		}
		var stderr bytes.Buffer
		err = run(ctx, []string{"business", "suspend", "--business", "biz_nope", "--database", dsn},
			func(string) string { return "" }, &bytes.Buffer{}, &stderr)
		if payd.ErrorCode(err) != payd.ErrNotFound {
			t.Fatalf("unknown business: %v", err)
		}
	})
}
