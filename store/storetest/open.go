package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"payd/clock"
	"payd/store"
)

// PostgresEnv names the variable holding the PostgreSQL DSN tests run
// against, such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
// When it is unset, PostgreSQL tests are skipped.
const PostgresEnv = "PAYD_TEST_POSTGRES"

// OpenSQLite returns a migrated SQLite store in a new temporary file on the
// real clock. It is closed when the test ends.
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, "sqlite", clock.Real{})
}

// OpenPostgres returns a migrated PostgreSQL store in a new schema of the
// database PAYD_TEST_POSTGRES names, on the real clock, and skips the test
// when that variable is unset. The schema is dropped when the test ends,
// so tests and packages running in parallel never see each other's rows.
func OpenPostgres(t testing.TB) *store.DB {
	t.Helper()
	return Open(t, "postgres", clock.Real{})
}

// Open returns a migrated store of the given dialect ("sqlite" or
// "postgres") on clk, for tests that drive a fake clock.
func Open(t testing.TB, dialect string, clk clock.Clock) *store.DB {
	t.Helper()
	dsn := SQLiteDSN(t)
	if dialect == "postgres" {
		dsn = PostgresDSN(t)
	}
	return OpenDSN(t, dsn, clk)
}

// OpenDSN opens and migrates the database dsn names, and closes it when the
// test ends. Two calls with one DSN act like two processes.
func OpenDSN(t testing.TB, dsn string, clk clock.Clock) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, clk, Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dsns.Delete(db)
		if err := db.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dsns.Store(db, dsn)
	return db
}

// dsns holds the DSN each store OpenDSN opened was opened on, for ExecRaw.
var dsns sync.Map // *store.DB → string

// ExecRaw runs one statement on db's database outside the store's methods,
// on a connection of its own, for tests that leave a row as an older payd
// did (a wallet key without identity, say). db must come from OpenDSN (or
// Open, Each).
func ExecRaw(t testing.TB, db *store.DB, query string, args ...any) {
	t.Helper()
	dsn, ok := dsns.Load(db)
	if !ok {
		t.Fatal("storetest.ExecRaw: the store was not opened by storetest")
	}
	driver, source := "pgx", dsn.(string)
	if path, ok := store.SQLitePath(source); ok {
		driver, source = "sqlite", "file:"+path+"?_pragma=busy_timeout(5000)"
	}
	sdb, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// Dialects lists the databases a test can ask Open for. A test that needs
// its own clock loops over it the way Each does.
var Dialects = []string{"sqlite", "postgres"}

// Each runs fn as a subtest on every database available: SQLite always,
// PostgreSQL when PAYD_TEST_POSTGRES is set (skipped otherwise).
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, dialect := range Dialects {
		t.Run(dialect, func(t *testing.T) { fn(t, Open(t, dialect, clock.Real{})) })
	}
}

// Logger returns a logger that writes warnings and errors to the test log.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// SQLiteDSN returns the DSN of a new SQLite file in the test's temporary
// directory, for tests that start payd itself.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "payd.db")
}

// PostgresDSN creates a schema with a random name in the database
// PAYD_TEST_POSTGRES names, drops it when the test ends, and returns the
// DSN that puts it first on the search path. It skips the test when the
// variable is unset.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s is not set", PostgresEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	schema := "payd_test_" + randomHex(8) // letters and digits: safe to splice into SQL
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresKeywordDSN is PostgresDSN in libpq's keyword form ("host=…
// port=… dbname=…"), the other form an operator may write.
func PostgresKeywordDSN(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	kw := "host=" + u.Hostname() + " port=" + u.Port() + " dbname=" + strings.TrimPrefix(u.Path, "/") +
		" user=" + u.User.Username() + " search_path=" + u.Query().Get("search_path")
	if mode := u.Query().Get("sslmode"); mode != "" {
		kw += " sslmode=" + mode
	}
	return kw
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
