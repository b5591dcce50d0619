package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) payd.Store { return storetest.OpenSQLite(t) })
}

// TestSQLiteBindsDollarByNumber pins down how modernc.org/sqlite binds the
// shared $N placeholders: by number, not by order of appearance. SQLite
// treats $2 as a parameter named "$2", one slot per distinct name, and the
// driver fills the slot named $N with the Nth argument. So $2 before $1 and
// $1 used twice need no rewriting.
func TestSQLiteBindsDollarByNumber(t *testing.T) {
	sdb, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "bind.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var got string
	err = sdb.QueryRow(`SELECT $2 || '-' || $1 || '-' || $1 || '-' || $3`, "one", "two", "three").Scan(&got)
	if err != nil {
		t.Fatal(err)
	}
	if want := "two-one-one-three"; got != want {
		t.Fatalf("$2,$1,$1,$3 bound as %q, want %q", got, want)
	}
}

// TestSQLiteOpenForms accepts "sqlite:PATH" and a bare path alike.
func TestSQLiteOpenForms(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{"sqlite:" + filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), "sqlite://" + filepath.Join(dir, "c.db")} {
		db, err := store.Open(context.Background(), dsn, clock.Real{}, storetest.Logger(t))
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate(%q): %v", dsn, err)
		}
		if db.Dialect() != "sqlite" {
			t.Fatalf("Dialect = %q", db.Dialect())
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQLiteTwoProcesses opens one file twice, as the server and the CLI
// do: both migrate at once, then two writers contend for the write lock
// while claims, counters and settings stay exact across them.
func TestSQLiteTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	storetest.TwoProcesses(t, path)
}
