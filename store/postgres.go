package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

const dialectPostgres = "postgres"

const (
	// pgMaxConns bounds one process's share of PostgreSQL's connections
	// (100 by default), leaving room for replicas, the CLI and psql.
	pgMaxConns = 16
	// pgSideConns bounds the side pool (DB.side): it only refills the
	// address pool, one wallet and network at a time.
	pgSideConns = 2
	// pgTxAttempts bounds how often a transaction that lost a
	// serialization race or a deadlock runs again.
	pgTxAttempts = 8
)

// hideDSN replaces a DSN parse error, whose text quotes the DSN with
// pgx's best-effort redaction (a password written "password = x" or with
// an escaped quote shows through), by one that quotes only RedactDSN's form.
func hideDSN(dsn string, err error) error {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return err
	}
	why := "it is not a valid PostgreSQL DSN"
	if inner := errors.Unwrap(pe); inner != nil {
		why = inner.Error()
	}
	return fmt.Errorf("cannot parse the PostgreSQL DSN %s: %s", RedactDSN(dsn), why)
}

// openPostgres opens the pgx pool of at most conns connections through
// database/sql. Search path and other settings come from the DSN
// (…?search_path=name).
func openPostgres(ctx context.Context, db *DB, dsn string, conns, idle int) error {
	pdb, err := sql.Open("pgx", dsn)
	if err != nil {
		return hideDSN(dsn, err)
	}
	db.dsn = dsn
	pdb.SetMaxOpenConns(conns)
	pdb.SetMaxIdleConns(idle)
	if err := pdb.PingContext(ctx); err != nil {
		pdb.Close()
		return hideDSN(dsn, err)
	}
	db.read = pdb
	return nil
}

// openSide opens db's side pool (DB.side); it connects when first used.
func openSide(db *DB) error {
	side, err := sql.Open("pgx", db.dsn)
	if err != nil {
		return hideDSN(db.dsn, err)
	}
	side.SetMaxOpenConns(pgSideConns)
	side.SetMaxIdleConns(pgSideConns)
	db.side = side
	return nil
}

// pgTx runs fn in a read-committed transaction, where each statement sees
// every commit before it and upserts are atomic, and runs it again after a
// serialization failure or a deadlock. PostgreSQL group-commits by itself.
func (db *DB) pgTx(ctx context.Context, fn txFunc) error {
	var err error
	for range pgTxAttempts {
		if err = db.pgTxOnce(ctx, fn); !isRetryablePG(err) {
			return err
		}
		db.log.DebugContext(ctx, "store: retrying transaction", "error", err)
	}
	return err
}

// pgTxOnce runs fn once and commits if it succeeds.
func (db *DB) pgTxOnce(ctx context.Context, fn txFunc) error {
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	q := &queries{ex: tx, dialect: dialectPostgres, clock: db.clock, at: db.clock.Now(), side: db.side}
	st := newTxState(db, q)
	tctx := context.WithValue(ctx, txKey{}, st)
	err = db.protect(tctx, func() error { return fn(tctx, q) })
	st.ended.Store(true)
	if err != nil {
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			db.log.WarnContext(ctx, "store: rollback", "error", rerr)
		}
		return err
	}
	return tx.Commit()
}
