package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"payd"
)

// Backup writes a consistent copy of an SQLite database to path while
// payd goes on serving: VACUUM INTO reads one snapshot of the database
// (a read transaction, which never blocks the writer under WAL) and
// writes it as a new, compacted database file, which a fresh payd serves
// as it is (docs/operations.md). The file is made readable by its owner
// only, like the database: it holds webhook secrets and customers' data.
// invalid_request when path exists (a backup never overwrites one), and
// for a PostgreSQL database, which is backed up with its own tools
// (pg_dump, or a base backup with WAL archiving).
func (db *DB) Backup(ctx context.Context, path string) (err error) {
	if db.dialect != dialectSQLite {
		return payd.Errorf(payd.ErrInvalidRequest,
			"payd backup copies SQLite databases; back PostgreSQL up with pg_dump --format=custom (docs/operations.md)")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return payd.Errorf(payd.ErrInvalidRequest, "%s exists already: a backup never overwrites a file", path)
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	// VACUUM INTO takes an empty file. It reads the database in one read
	// transaction, but the read pool's query_only connections refuse it
	// for the file it writes: it gets a connection of its own.
	conn, err := openSQLiteDB(ctx, db.path, "backup", 1)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("store.Backup: %w", err)
	}
	if err := conn.Close(); err != nil {
		return err
	}
	// VACUUM INTO does not sync what it wrote: a backup reported done must
	// survive a crash, so the file and its directory entry are synced.
	return syncFile(path)
}

// syncFile flushes the file at path, and then the directory that holds
// it, to stable storage.
func syncFile(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("store.Backup: syncing %s: %w", p, err)
		}
	}
	return nil
}
