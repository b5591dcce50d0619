package store_test

import (
	"context"
	"fmt"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// TestMigrateGivesReferralCodes stores businesses as payd did before
// referral codes (schema version 21) and migrates: each gets its own
// well-formed code, by which it is found, and no referrer.
func TestMigrateGivesReferralCodes(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dsn := storetest.SQLiteDSN(t)
			if dialect == "postgres" {
				dsn = storetest.PostgresDSN(t)
			}
			ctx := context.Background()
			db, err := store.Open(ctx, dsn, clock.Real{}, storetest.Logger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.MigrateTo(ctx, 21); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i := range 20 {
				id := payd.NewID(payd.PrefixBusiness)
				if err := db.ExecRaw(ctx, `INSERT INTO businesses (id, name, email, website, support_email, live, created_at, updated_at)
					VALUES ($1, $2, 'old@example.com', '', '', FALSE, 1, 1)`, id, fmt.Sprint("Old ", i)); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, id := range ids {
				b, err := db.BusinessByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if code, ok := payd.NormalizeReferralCode(b.ReferralCode); !ok || code != b.ReferralCode || seen[code] || b.ReferredBy != "" {
					t.Fatalf("business %s after the migration: code %q, referred by %q", id, b.ReferralCode, b.ReferredBy)
				}
				seen[b.ReferralCode] = true
				if got, err := db.BusinessByReferralCode(ctx, b.ReferralCode); err != nil || got.ID != id {
					t.Fatalf("BusinessByReferralCode(%s) = %v, %v", b.ReferralCode, got, err)
				}
			}
		})
	}
}
