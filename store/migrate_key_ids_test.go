package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// legacyIdentity stands in for hd.KeyIdentity: "k1" and "k1#other" are
// two spellings of one key, and "bad" does not parse.
func legacyIdentity(n money.Network, key string) (string, error) {
	if key == "bad" {
		return "", errors.New("not a key")
	}
	base, _, _ := strings.Cut(key, "#")
	return "id-" + base, nil
}

// TestMigrateFillsKeyIDs writes wallets as payd wrote them before key
// identities (schema version 14), one key attached twice under two
// spellings, and migrates: the older wallet's key gets its identity, the
// later twin and the unparsable key get none (and are logged), and from
// then on the key is refused in any spelling.
func TestMigrateFillsKeyIDs(t *testing.T) {
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
			if err := db.MigrateTo(ctx, 14); err != nil {
				t.Fatal(err)
			}
			first, twin, odd := legacyWallet(t, db, "k1", 1), legacyWallet(t, db, "k1#other", 2), legacyWallet(t, db, "bad", 3)
			if err := db.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "SetKeyIdentity") {
				t.Fatalf("migrating stored keys without their identity: %v", err)
			}
			db.SetKeyIdentity(legacyIdentity)
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for biz, want := range map[string]string{first: "id-k1", twin: "", odd: ""} {
				w, err := db.WalletByBusiness(ctx, biz)
				if err != nil || w.KeyIDs[money.Tron] != want {
					t.Fatalf("wallet of %s: %+v, %v; want key id %q", biz, w, err, want)
				}
			}
			for _, biz := range []string{first, twin} { // both derive the same addresses
				if w, err := db.WalletByBusiness(ctx, biz); err != nil || !w.Overlap[money.Tron] {
					t.Fatalf("wallet of %s: %+v, %v; want tron marked as overlapping", biz, w, err)
				}
			}
			b, err := payd.NewBusiness("Late", "late@example.com", false, time.Unix(4, 0))
			if err != nil || db.CreateBusiness(ctx, b) != nil {
				t.Fatal(err)
			}
			w, err := payd.NewWallet(b.ID, map[money.Network]string{money.Tron: "k1#third"},
				map[money.Network]string{money.Tron: "id-k1"}, payd.WalletAttached, time.Unix(4, 0))
			if err != nil {
				t.Fatal(err)
			}
			if err := db.CreateWallet(ctx, w); payd.ErrorCode(err) != payd.ErrInvalidRequest {
				t.Fatalf("a third spelling of the key: %v", err)
			}
		})
	}
}

// legacyWallet stores a business and a tron-only wallet of key as schema
// version 14 held them, created at second sec, and returns the business.
func legacyWallet(t *testing.T, db *store.DB, key string, sec int64) string {
	t.Helper()
	ctx := context.Background()
	b, err := payd.NewBusiness("Legacy", "legacy@example.com", false, time.Unix(sec, 0))
	if err != nil {
		t.Fatal(err)
	}
	// As version 14 held a business: no referral code yet (migration 25).
	if err := db.ExecRaw(ctx, `INSERT INTO businesses (id, name, email, website, support_email, live, created_at, updated_at)
		VALUES ($1, $2, $3, '', '', FALSE, $4, $4)`, b.ID, b.Name, b.Email, sec*1_000_000); err != nil {
		t.Fatal(err)
	}
	id := payd.NewID(payd.PrefixWallet)
	if err := db.ExecRaw(ctx, `INSERT INTO wallets (id, business_id, source, created_at) VALUES ($1, $2, 'attached', $3)`,
		id, b.ID, sec*1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := db.ExecRaw(ctx, `INSERT INTO wallet_keys (wallet_id, network, account_key, next_index) VALUES ($1, 'tron', $2, 0)`,
		id, key); err != nil {
		t.Fatal(err)
	}
	return b.ID
}
