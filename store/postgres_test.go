package store_test

import (
	"os"
	"testing"

	"payd"
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
	storetest.TwoProcesses(t, dsn)
}
