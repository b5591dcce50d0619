package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
	"payd/clock"
)

// execer is what a query runs on: a pool, the writer's connection or a
// transaction. Every query method is written once against it.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries implements payd.Queries on one execer. Inside a transaction it is
// bound to that transaction, so reads see the transaction's own writes.
type queries struct {
	ex      execer
	dialect string
	clock   clock.Clock
	// at, when set, is the time fixed at the start of the transaction, so
	// that every row one transaction touches carries the same time.
	at time.Time
	// side, on PostgreSQL, runs work that must commit on its own, whatever
	// becomes of the transaction q runs in (refillAddressPool).
	side *sql.DB
}

var _ payd.Queries = (*queries)(nil)

// scanString reads a row of one text column, such as an id.
func scanString(row rowScanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// queryAll runs query on ex and reads every row with scan.
func queryAll[T any](ctx context.Context, ex execer, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := ex.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// now is the time a write records when the caller did not pass one.
func (q *queries) now() time.Time {
	if !q.at.IsZero() {
		return q.at
	}
	return q.clock.Now()
}

// micros is how every timestamp is stored: BIGINT Unix microseconds UTC,
// exact and identical on both databases.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros turns a stored timestamp back into a UTC time.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// nullMicros stores an optional time as NULL or microseconds.
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// fromNullMicros reads an optional time.
func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// affected turns an UPDATE or DELETE that matched no row into sql.ErrNoRows,
// which the boundary maps to not_found.
func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}

// count returns how many rows a DELETE removed.
func count(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
