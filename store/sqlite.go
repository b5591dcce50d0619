package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

const dialectSQLite = "sqlite"

// SQLite settings, set in this one place for every connection (STYLE 7).
// synchronous=FULL fsyncs the WAL at every commit: an acknowledged payment
// survives a power cut. busy_timeout makes a connection wait, with SQLite's
// own backoff, while another process holds the write lock.
var sqliteBase = []string{
	"busy_timeout(5000)",
	"foreign_keys(1)",
	"synchronous(FULL)",
}

// sqlitePragmas lists the extra settings of each kind of connection.
var sqlitePragmas = map[string][]string{
	// The writer sets WAL (persistent, so every later connection uses it),
	// leaves checkpoints to the checkpointer and cuts a large WAL back.
	// Its page cache is 64 MiB (SQLite's default is 2 MiB): under steady
	// writes to growing tables the default cache made every batch read
	// index pages back from the file, and throughput fell run after run.
	"writer": {"journal_mode(WAL)", "wal_autocheckpoint(0)", fmt.Sprintf("journal_size_limit(%d)", walCapBytes), "cache_size(-65536)"},
	// Readers cannot write by accident: every write must go through the
	// writer. Each keeps a 32 MiB page cache for the same reason.
	"reader": {"query_only(1)", "cache_size(-32768)"},
	// The checkpointer only checkpoints; it never commits, so it never
	// checkpoints automatically either.
	"checkpoint": {"wal_autocheckpoint(0)"},
	// The backup only reads the database, but VACUUM INTO writes another
	// file, which query_only forbids.
	"backup": {"wal_autocheckpoint(0)"},
	// Migration transactions take the write lock at BEGIN (_txlock below),
	// so two processes migrating at once never interleave inside one
	// migration; the one that loses the race retries (migrateSQLite).
	"migrate": {"journal_mode(WAL)"},
}

// sqliteDSN builds the modernc.org/sqlite DSN of one kind of connection.
func sqliteDSN(path, kind string) string {
	v := url.Values{}
	for _, p := range append(append([]string{}, sqliteBase...), sqlitePragmas[kind]...) {
		v.Add("_pragma", p)
	}
	if kind == "migrate" {
		v.Set("_txlock", "immediate")
	}
	return path + "?" + v.Encode()
}

// openSQLiteDB opens a pool of at most n connections of one kind.
func openSQLiteDB(ctx context.Context, path, kind string, n int) (*sql.DB, error) {
	sdb, err := sql.Open("sqlite", sqliteDSN(path, kind))
	if err != nil {
		return nil, err
	}
	sdb.SetMaxOpenConns(n)
	sdb.SetMaxIdleConns(n)
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return sdb, nil
}

// openSQLite opens the writer first (it creates the file and turns WAL
// on), then the read pool and the checkpointer's connection.
func openSQLite(ctx context.Context, db *DB, path string) (err error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return fmt.Errorf("store: SQLite path %q must be non-empty and contain neither ? nor #", path)
	}
	db.path = path
	if err := createPrivate(path); err != nil {
		return err
	}
	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()
	wdb, err := openSQLiteDB(ctx, path, "writer", 1)
	if err != nil {
		return err
	}
	closers = append(closers, wdb.Close)
	conn, err := wdb.Conn(ctx)
	if err != nil {
		return err
	}
	closers = append(closers, conn.Close)
	if err := checkWAL(ctx, conn); err != nil {
		return err
	}
	db.read, err = openSQLiteDB(ctx, path, "reader", max(4, runtime.GOMAXPROCS(0)))
	if err != nil {
		return err
	}
	closers = append(closers, db.read.Close)
	cdb, err := openSQLiteDB(ctx, path, "checkpoint", 1)
	if err != nil {
		return err
	}
	if db.ckpt, err = newCheckpointer(ctx, cdb, path, db.clock, db.log); err != nil {
		_ = cdb.Close()
		return err
	}
	closers = append(closers, db.ckpt.close)
	if db.writer, err = newWriter(db, conn, db.ckpt); err != nil {
		return err
	}
	db.writerDB, db.writerConn = wdb, conn
	if sqliteConfigErr != nil {
		db.log.Warn("store: SQLite statement journals spill to disk early", "error", sqliteConfigErr)
	}
	return nil
}

// createPrivate creates the database file, readable and writable by its
// owner only, when it does not exist yet: it holds webhook secrets and
// customers' data, and SQLite would create it 0644. SQLite gives the -wal
// and -shm files it makes beside it the database file's permissions
// (unix VFS, robust_open with the mode of the main file), so they are
// 0600 too. An existing file keeps the permissions its operator gave it.
func createPrivate(path string) error {
	if !plainFile(path) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: creating the SQLite file: %w", err)
	}
	return f.Close()
}

// checkWAL refuses a database that did not switch to WAL (for example one
// on a file system without shared memory): the store's concurrency and
// durability reasoning depends on it.
func checkWAL(ctx context.Context, conn *sql.Conn) error {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("store: SQLite journal_mode is %q, want wal", mode)
	}
	return nil
}

// closeSQLite drains the writer, then closes the readers, truncates the WAL
// and closes the write connection.
func (db *DB) closeSQLite() error {
	db.writer.close()
	errs := []error{db.read.Close(), db.ckpt.close()}
	errs = append(errs, db.writerConn.Close(), db.writerDB.Close())
	return errors.Join(errs...)
}
