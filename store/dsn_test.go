package store_test

import (
	"context"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// TestSQLitePath tells the DSN forms apart: libpq's keyword form is
// PostgreSQL's, never a file named after its password.
func TestSQLitePath(t *testing.T) {
	for dsn, want := range map[string]string{
		"sqlite:./payd.db":   "./payd.db",
		"sqlite:///var/payd": "/var/payd",
		"./payd.db":          "./payd.db",
		"data=1/payd.db":     "data=1/payd.db", // "data" is no libpq keyword
		"sqlite:host=x.db":   "host=x.db",      // the prefix says SQLite
		"postgres://u:p@h/d": "",
		"postgresql://h/d":   "",
		"host=db dbname=payd user=payd password=s3cret": "",
		"dbname=payd":              "",
		"  host = db port=5432":    "",
		"user=payd password='a b'": "",
	} {
		got, ok := store.SQLitePath(dsn)
		if got != want || ok != (want != "") {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q", dsn, got, ok, want)
		}
	}
}

// TestSQLiteFile names the files payd creates and checks.
func TestSQLiteFile(t *testing.T) {
	for dsn, want := range map[string]string{
		"sqlite:./payd.db": "./payd.db", "payd.db": "payd.db", "sqlite::memory:": "", "sqlite:file:x.db?mode=memory": "",
		"host=db": "", "postgres://db/payd": "",
	} {
		if got, ok := store.SQLiteFile(dsn); got != want || ok != (want != "") {
			t.Errorf("SQLiteFile(%q) = %q, %v; want %q", dsn, got, ok, want)
		}
	}
}

// TestRedactDSN hides the password of both PostgreSQL forms.
func TestRedactDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://payd:s3cret@db:5432/payd?sslmode=disable": "postgres://payd:xxxxx@db:5432/payd?sslmode=disable",
		"postgres://db/payd?password=s3cret&user=payd":        "postgres://db/payd?password=xxxxx&user=payd",
		"postgres://payd@db/payd":                             "postgres://payd@db/payd",
		"host=db password=s3cret dbname=payd":                 "host=db password=xxxxx dbname=payd",
		"host=db password = s3cret":                           "host=db password = xxxxx",
		`host=db password='s3 \'cret' dbname=payd`:            "host=db password=xxxxx dbname=payd",
		"password=s3cret":                                     "password=xxxxx",
		// A keyword DSN with "://" in a value is still read as keywords.
		"host=/run/pg password=s3cret application_name=svc://payd": "host=/run/pg password=xxxxx application_name=svc://payd",
		// The client key's passphrase is a password too.
		"host=db sslpassword=keypw password=s3cret": "host=db sslpassword=xxxxx password=xxxxx",
		"postgres://db/payd?sslpassword=keypw":      "postgres://db/payd?sslpassword=xxxxx",
		"sqlite:./payd.db":                          "sqlite:./payd.db",
	} {
		if got := store.RedactDSN(dsn); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// FuzzRedactDSN checks that a password put in either PostgreSQL form
// never survives redaction, and that no DSN makes the parsers panic.
func FuzzRedactDSN(f *testing.F) {
	for _, s := range []string{"s3cret", "a b'c", `\\'`, "p@ss/word?x=1", "#%"} {
		f.Add(s, "db")
	}
	f.Fuzz(func(t *testing.T, pw, host string) {
		store.SQLitePath(pw)
		store.RedactDSN(pw)
		if len(pw) < 6 || strings.ContainsAny(host, " '\\=") || strings.Contains("host= password= dbname=payd xxxxx"+host, pw) {
			return
		}
		quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		kw := "host=" + host + " password=" + quoted + " dbname=payd"
		if got := store.RedactDSN(kw); strings.Contains(got, pw) {
			t.Fatalf("RedactDSN(%q) = %q keeps the password", kw, got)
		}
		u := (&url.URL{Scheme: "postgres", User: url.UserPassword("payd", pw), Host: "db", Path: "/payd"}).String()
		if got := store.RedactDSN(u); strings.Contains(got, pw) || strings.Contains(got, url.PathEscape(pw)) ||
			strings.Contains(got, url.QueryEscape(pw)) {
			t.Fatalf("RedactDSN(%q) = %q keeps the password", u, got)
		}
	})
}

// TestOpenKeywordDSN opens PostgreSQL by a keyword-form DSN, and leaves no
// file behind named after it.
func TestOpenKeywordDSN(t *testing.T) {
	kw := storetest.PostgresKeywordDSN(t) + " password=unused"
	t.Chdir(t.TempDir())
	db, err := store.Open(context.Background(), kw, clock.Real{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if db.Dialect() != "postgres" {
		t.Fatalf("Dialect = %q", db.Dialect())
	}
	if left, _ := os.ReadDir("."); len(left) > 0 {
		t.Fatalf("opening %q made %s", store.RedactDSN(kw), left[0].Name())
	}
}

// TestSQLiteFilesArePrivate creates the database, its WAL and its shared
// memory readable by their owner only: they hold webhook secrets and
// customers' data.
func TestSQLiteFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payd.db")
	db, err := store.Open(context.Background(), "sqlite:"+path, clock.Real{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if mode := st.Mode() & fs.ModePerm; mode != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), mode)
		}
	}
}

// TestOpenUnparsableDSNHidesPassword opens DSNs that pgx cannot parse,
// written so that pgx's own redaction misses the password: the error must
// quote only the redacted form.
func TestOpenUnparsableDSNHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"host=127.0.0.1 dbname=test password = s3cret sslmode=bogus",
		`host=127.0.0.1 dbname=test password='s3\'cret c' sslmode=bogus`,
	} {
		db, err := store.Open(context.Background(), dsn, clock.Real{}, slog.New(slog.DiscardHandler))
		if err == nil {
			db.Close()
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if !strings.Contains(err.Error(), "cannot parse") || strings.Contains(err.Error(), "s3") || strings.Contains(err.Error(), "cret") {
			t.Errorf("Open(%q) error shows the password: %v", dsn, err)
		}
	}
}
