package store_test

import (
	"os"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

func TestPostgres(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set", storetest.PostgresEnv)
	}
	storetest.Run(t, func(t *testing.T) payd.Store { return storetest.OpenPostgres(t) })
}

// TestPostgresTwoProcesses opens one schema twice, as two replicas do.
// Both migrate at once (the advisory lock makes them take turns), then
// race on claims, counters and settings.
func TestPostgresTwoProcesses(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	stores, errs := make([]payd.Store, 2), make(chan error, 2)
	for i := range stores {
		db, err := store.Open(t.Context(), dsn, clock.Real{}, storetest.Logger(t))
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
	storetest.SharedDatabase(t, stores[0], stores[1])
}
