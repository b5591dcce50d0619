package store_test

import (
	"database/sql"
	"os"
	"testing"

	"payd/clock"

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

// TestPostgresAnalyze refreshes the statistics of payd's own tables, in
// its own schema, whether or not autovacuum runs.
func TestPostgresAnalyze(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set", storetest.PostgresEnv)
	}
	dsn := storetest.PostgresDSN(t)
	db := storetest.OpenDSN(t, dsn, clock.Real{})
	if err := db.Analyze(t.Context()); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var tables, missing int
	err = conn.QueryRowContext(t.Context(), `SELECT count(*), count(*) FILTER (WHERE last_analyze IS NULL)
		FROM pg_stat_user_tables WHERE schemaname = current_schema()`).Scan(&tables, &missing)
	if err != nil || tables < 10 || missing != 0 {
		t.Fatalf("%d of payd's %d tables not analyzed (%v)", missing, tables, err)
	}
}
