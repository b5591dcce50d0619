package store

import (
	"context"
	"errors"
)

// SetSearchWindow sets how many newest entries a search segment scans
// before it turns to the trigram index, and returns the previous value.
func SetSearchWindow(n int64) int64 { return searchWindow.Swap(n) }

// SetMaxIndexCandidates sets how many trigram candidates a search reads
// into memory before segments query the index one by one, and returns the
// previous value.
func SetMaxIndexCandidates(n int64) int64 { return maxIndexCandidates.Swap(n) }

// MigrateTo applies the migrations up to version to, as a database that
// older payd left there.
func (db *DB) MigrateTo(ctx context.Context, to int64) error { return db.migrateTo(ctx, to) }

// ExecRaw runs one statement outside the store's methods, to write rows as
// an older payd did; on SQLite on a connection of its own, as migrations.
func (db *DB) ExecRaw(ctx context.Context, query string, args ...any) error {
	if db.dialect == dialectPostgres {
		_, err := db.read.ExecContext(ctx, query, args...)
		return err
	}
	sdb, err := openSQLiteDB(ctx, db.path, "migrate", 1)
	if err != nil {
		return err
	}
	defer sdb.Close()
	_, err = sdb.ExecContext(ctx, query, args...)
	return err
}

// ExecInTx runs one statement in the transaction ctx carries, as another
// part of payd might have before it calls the method under test.
func (db *DB) ExecInTx(ctx context.Context, query string, args ...any) error {
	st := db.txFrom(ctx)
	if st == nil {
		return errors.New("store.ExecInTx: ctx carries no transaction")
	}
	_, err := st.q.ex.ExecContext(ctx, query, args...)
	return err
}
