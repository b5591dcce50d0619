package storetest

import (
	"database/sql"
	"os"
	"slices"
	"testing"
)

// PostgresRows returns every row of every table of the schema dsn names,
// as lower-case text, for tests that look for what must never be stored
// (cmd/payd's check that no recovery phrase reaches the database).
func PostgresRows(t testing.TB, dsn string) []string {
	t.Helper()
	sdb, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	tables := texts(t, sdb, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if !slices.Contains(tables, "wallet_keys") {
		t.Fatalf("tables %v: the schema was not found", tables)
	}
	var out []string
	for _, table := range tables {
		out = append(out, texts(t, sdb, `SELECT lower(CAST(t AS TEXT)) FROM "`+table+`" t`)...)
	}
	return out
}

// texts returns the one text column of every row q selects.
func texts(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ResetPostgresSchema drops the schema name, with everything in it, from
// the database PAYD_TEST_POSTGRES names and creates it empty, for a test
// that keeps a schema across runs (api's benchmark over a million payments)
// and must start again after an unfinished one.
func ResetPostgresSchema(t testing.TB, name string) {
	t.Helper()
	admin, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{"DROP SCHEMA IF EXISTS " + name + " CASCADE", "CREATE SCHEMA " + name} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}
