package store

import (
	"log/slog"
	"path/filepath"
	"testing"

	"payd/clock"
	"payd/loop/looptest"
)

// TestCheckpointerStartStop holds the WAL checkpointer to the loop
// package's promises, as cmd/payd's TestLoopsStartStop does for the
// exported loops. Open starts one; this checks a second, not yet started
// one on the same database.
func TestCheckpointerStartStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	log := slog.New(slog.DiscardHandler)
	db, err := Open(t.Context(), path, clock.Real{}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := openSQLiteDB(t.Context(), path, "checkpoint", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	looptest.Check(t, &checkpointer{conn: conn, walPath: path + "-wal", clock: clock.Real{}, log: log,
		kicks: make(chan struct{}, 1)})
}
