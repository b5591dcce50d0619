package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
)

// TwoProcesses opens the database dsn names twice, as two processes or
// replicas would, migrating both at once, and runs SharedDatabase on them.
func TwoProcesses(t *testing.T, dsn string) {
	stores, errs := make([]payd.Store, 2), make(chan error, 2)
	for i := range stores {
		db, err := store.Open(t.Context(), dsn, clock.Real{}, Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		stores[i] = db
		go func() { errs <- db.Migrate(t.Context()) }()
	}
	for range stores {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	SharedDatabase(t, stores[0], stores[1])
}

// SharedDatabase checks that two stores opened on one database, as two
// processes or replicas would open it, share idempotency claims, rate
// counters and settings exactly while racing each other.
func SharedDatabase(t *testing.T, a, b payd.Store) {
	ctx := context.Background()
	stores := []payd.Store{a, b}
	const n = 40
	held, errs := parallel(n, func(i int) (*payd.IdempotencyRecord, error) {
		return stores[i%2].ClaimIdempotencyKey(ctx, claim("biz_a", "shared", "h", t0), t0)
	})
	noErrors(t, errs)
	if winners := n - len(slices.DeleteFunc(held, func(h *payd.IdempotencyRecord) bool { return h == nil })); winners != 1 {
		t.Fatalf("%d of %d claims across two stores won, want 1", winners, n)
	}
	counts, errs := parallel(n, func(i int) (int, error) {
		return stores[i%2].CountRateHit(ctx, "shared", t0, t0.Add(time.Minute))
	})
	noErrors(t, errs)
	slices.Sort(counts)
	if counts[0] != 1 || counts[n-1] != n || len(slices.Compact(counts)) != n {
		t.Fatalf("counts across two stores = %v, want 1 to %d once each", counts, n)
	}
	values, errs := parallel(n, func(i int) (string, error) {
		return stores[i%2].EnsureSetting(ctx, "shared", fmt.Sprint(i))
	})
	noErrors(t, errs)
	if len(slices.Compact(slices.Sorted(slices.Values(values)))) != 1 {
		t.Fatalf("settings across two stores = %v, want one value", values)
	}
	sharedWallets(t, a, b)
}

// sharedWallets races businesses on two stores for one account key, then
// both stores for one wallet's receive indexes: one wallet gets the key,
// and every index is handed out once.
func sharedWallets(t *testing.T, a, b payd.Store) {
	ctx := context.Background()
	stores := []payd.Store{a, b}
	const n = 20
	ws := make([]*payd.Wallet, n)
	for i := range ws {
		ws[i] = mustNewWallet(t, mustBusiness(t, ctx, stores[i%2]).ID, map[money.Network]string{
			money.Bitcoin: "zpub-shared", money.Tron: fmt.Sprint("xpub-", i)})
	}
	_, errs := parallel(n, func(i int) (struct{}, error) { return struct{}{}, stores[i%2].CreateWallet(ctx, ws[i]) })
	wantOneWinner(t, errs, "keys.bitcoin")
	winner := ws[slices.Index(errs, nil)]
	got, errs := parallel(n, func(i int) (uint32, error) {
		return stores[i%2].NextAddressIndex(ctx, winner.ID, money.Bitcoin)
	})
	noErrors(t, errs)
	wantContiguous(t, got, 0, n)
}
