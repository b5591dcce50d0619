package store

import (
	"context"
	"database/sql"
	"runtime/debug"
	"strconv"
	"sync/atomic"

	"payd"
)

// txFunc is a unit of work run inside a transaction. ctx is marked with the
// transaction, so a Tx or a *DB method called with it joins the transaction
// instead of starting another.
type txFunc func(ctx context.Context, q *queries) error

// txKey is the context key under which an open transaction is kept.
type txKey struct{}

// txState is an open transaction: the queries bound to it and how deep its
// savepoints nest.
type txState struct {
	db    *DB
	q     *queries
	depth int
	// ended is set once the transaction function has returned, so that a
	// context kept past it no longer reaches a connection that now serves
	// other transactions.
	ended atomic.Bool
}

// newTxState returns the state of a transaction starting on q.
func newTxState(db *DB, q *queries) *txState { return &txState{db: db, q: q} }

// txFrom returns the open transaction of db that ctx carries, if any. A
// transaction of another DB, or one that has ended, cannot be joined.
func (db *DB) txFrom(ctx context.Context) *txState {
	st, _ := ctx.Value(txKey{}).(*txState)
	if st == nil || st.db != db || st.ended.Load() {
		return nil
	}
	return st
}

// Tx runs fn in one write transaction and commits if fn returns nil (see
// payd.Store). On SQLite fn runs on the writer goroutine inside its own
// savepoint of a group commit; on PostgreSQL it runs on the caller's
// goroutine and is retried on serialization failures and deadlocks.
//
// The ctx fn receives carries the transaction: a Tx or *DB method called
// with it runs inline, inside a nested savepoint of the same transaction,
// where otherwise it would deadlock on SQLite's single writer. Like q, that
// context belongs to fn's goroutine and to fn's run: other goroutines must
// not use it meanwhile, and after fn returns it no longer joins anything.
// On SQLite it is not cancelled with the caller's ctx: a job is only
// cancelled before it starts, because interrupting a statement would roll
// back its whole batch.
func (db *DB) Tx(ctx context.Context, fn func(ctx context.Context, q payd.Queries) error) error {
	return db.transact(ctx, func(ctx context.Context, q *queries) error { return fn(ctx, q) })
}

// transact runs fn inline when ctx already carries a transaction of db,
// and as a new transaction otherwise.
func (db *DB) transact(ctx context.Context, fn txFunc) error {
	if st := db.txFrom(ctx); st != nil {
		return st.nested(ctx, fn)
	}
	if db.writer != nil {
		return db.writer.submit(ctx, fn)
	}
	return db.pgTx(ctx, fn)
}

// reader returns where a read through db runs: the transaction ctx
// carries, else the read pool.
func (db *DB) reader(ctx context.Context) *queries {
	if st := db.txFrom(ctx); st != nil {
		return st.q
	}
	return db.pool
}

// snapshot runs a read of several statements on one snapshot of the
// database: in the transaction ctx carries, else in a read-only
// transaction of its own. Outside a transaction each statement reads the
// latest commit, so a write committing between two of them would show half
// of itself: a payment row from before an update with the events appended
// by it. PostgreSQL needs REPEATABLE READ for that (READ COMMITTED takes a
// snapshot per statement); a SQLite read transaction keeps the snapshot
// of its first read.
func (db *DB) snapshot(ctx context.Context, fn func(q *queries) error) error {
	if st := db.txFrom(ctx); st != nil {
		return fn(st.q)
	}
	var opts *sql.TxOptions
	if db.dialect == dialectPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(&queries{ex: tx, dialect: db.dialect, clock: db.clock})
}

// write runs a single write through db: inline in ctx's transaction, as a
// job of the SQLite writer, or straight on the PostgreSQL pool, where each
// statement is atomic by itself.
func (db *DB) write(ctx context.Context, fn txFunc) error {
	if st := db.txFrom(ctx); st != nil {
		return fn(ctx, st.q)
	}
	if db.writer != nil {
		return db.writer.submitSingle(ctx, fn)
	}
	return fn(ctx, db.pool)
}

// nested runs fn in a savepoint of the open transaction, so that its
// failure undoes only its own writes and the caller decides what follows.
func (st *txState) nested(ctx context.Context, fn txFunc) error {
	st.depth++
	defer func() { st.depth-- }()
	name := "nested_" + strconv.Itoa(st.depth)
	err, broken := st.db.savepoint(ctx, st.q.ex, name, func() error { return fn(ctx, st.q) })
	if broken != nil {
		return broken
	}
	return err
}

// savepoint runs fn between SAVEPOINT and RELEASE, rolling back to the
// savepoint when fn fails or panics. It returns fn's error, and broken when
// the savepoint could not be made, undone or released: the enclosing
// transaction is then unusable and must be rolled back.
func (db *DB) savepoint(ctx context.Context, ex execer, name string, fn func() error) (err, broken error) {
	if _, err := ex.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return err, err
	}
	if err = db.protect(ctx, fn); err != nil {
		if _, rerr := ex.ExecContext(ctx, "ROLLBACK TO "+name); rerr != nil {
			return err, rerr
		}
	}
	if _, rerr := ex.ExecContext(ctx, "RELEASE "+name); rerr != nil {
		return err, rerr
	}
	return err, nil
}

// protect calls fn and turns a panic into an error, logged with its stack,
// so that one bad transaction function fails alone.
func (db *DB) protect(ctx context.Context, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			db.log.ErrorContext(ctx, "store: transaction function panicked", "panic", r, "stack", string(debug.Stack()))
			err = panicError{r}
		}
	}()
	return fn()
}
