// Package store is payd's database: payd.Store on SQLite (embedded, the
// default) and on PostgreSQL (for scale and several replicas), through
// database/sql with one copy of the SQL in the subset both databases share.
//
// SQL lives only here. Every query method is named for its result, maps
// driver errors to payd's codes at this boundary, and stores timestamps as
// BIGINT Unix microseconds UTC. On SQLite one writer goroutine
// group-commits every write; see docs/storage.md.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"payd"
	"payd/clock"
)

// DB is payd's database. It implements payd.Store and is safe for
// concurrent use.
type DB struct {
	dialect string
	clock   clock.Clock
	log     *slog.Logger
	// read is the SQLite read pool (query_only connections) or the
	// PostgreSQL pool, which serves writes too.
	read *sql.DB
	// pool runs reads, and on PostgreSQL writes, outside a transaction.
	pool *queries
	// dsn is the PostgreSQL DSN, for Lane.
	dsn string
	// side is PostgreSQL's small pool for work that commits apart from
	// the transaction asking for it (queries.side); a lane has none.
	side *sql.DB
	// keyIdentity fills in the identities of wallet keys stored before
	// they were kept (migration 16); see SetKeyIdentity.
	keyIdentity KeyIdentity

	// SQLite only: the file, the writer and its connection, the checkpointer.
	path       string
	writer     *writer
	writerDB   *sql.DB
	writerConn *sql.Conn
	ckpt       *checkpointer

	closeOnce sync.Once
	closeErr  error
}

var _ payd.Store = (*DB)(nil)

// Open opens the database named by dsn: "sqlite:PATH" or a bare file path
// for SQLite, "postgres://…", "postgresql://…" or libpq's keyword form
// ("host=… dbname=…") for PostgreSQL (see SQLitePath). It does
// not migrate; call Migrate. clk stamps the times the store records itself,
// so the development clock moves them too.
func Open(ctx context.Context, dsn string, clk clock.Clock, log *slog.Logger) (*DB, error) {
	if clk == nil || log == nil {
		return nil, errors.New("store.Open: a clock and a logger are required")
	}
	db := &DB{clock: clk, log: log}
	var err error
	if path, ok := SQLitePath(dsn); ok {
		db.dialect = dialectSQLite
		err = openSQLite(ctx, db, path)
	} else {
		db.dialect = dialectPostgres
		if err = openPostgres(ctx, db, dsn, pgMaxConns, pgMaxConns/2); err == nil {
			err = openSide(db)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store.Open(%s): %w", db.dialect, err)
	}
	var ex execer = db.read
	if db.dialect == dialectSQLite {
		ex = newStmtCache(db.read, false) // pgx keeps its own statement cache
	}
	db.pool = &queries{ex: ex, dialect: db.dialect, clock: clk, side: db.side}
	return db, nil
}

// Lane returns db for a background loop that must not wait behind the
// API for a connection: on PostgreSQL a DB over the same database with a
// pool of its own of at most conns connections (when the API's requests
// hold all of the main pool's, the loop's statements still run at once,
// and the loop cannot starve the API either); on SQLite, where every
// write goes through the one writer anyway, db itself. Close the lane once
// its loop has stopped: on PostgreSQL that closes its pool alone, on
// SQLite it closes db, whose later Close then returns the same result.
func (db *DB) Lane(ctx context.Context, conns int) (*DB, error) {
	if db.dialect != dialectPostgres {
		return db, nil
	}
	lane := &DB{dialect: db.dialect, clock: db.clock, log: db.log}
	if err := openPostgres(ctx, lane, db.dsn, conns, conns); err != nil {
		return nil, fmt.Errorf("store.Lane: %w", err)
	}
	lane.pool = &queries{ex: lane.read, dialect: lane.dialect, clock: lane.clock}
	return lane, nil
}

// Dialect names the database: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect }

// Analyze refreshes the query planner's statistics after a bulk load
// (payd dev seed). On PostgreSQL it runs ANALYZE, which autovacuum does in
// time, and never where autovacuum is off: without statistics PostgreSQL
// guessed a page of 25 payments' events at 225,000 rows and compiled the
// query with JIT, 40 ms a page at a million payments. SQLite is left
// without statistics on purpose: payd's queries are written for its
// planner as it is without them (docs/listing.md).
func (db *DB) Analyze(ctx context.Context) error {
	if db.dialect != dialectPostgres {
		return nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return fmt.Errorf("store.Analyze: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return fmt.Errorf("store.Analyze: %w", err)
		}
		tables = append(tables, t)
	}
	if err := closeRows(rows); err != nil || len(tables) == 0 {
		return err
	}
	if _, err := db.read.ExecContext(ctx, "ANALYZE "+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("store.Analyze: %w", err)
	}
	return nil
}

// Close finishes every queued write, then releases the database. On SQLite
// it also truncates the WAL. Calls after the first return its result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if db.writer != nil {
			db.closeErr = db.closeSQLite()
			return
		}
		db.closeErr = db.read.Close()
		if db.side != nil {
			db.closeErr = errors.Join(db.closeErr, db.side.Close())
		}
	})
	return db.closeErr
}
