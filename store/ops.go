package store

import (
	"context"
	"database/sql"

	"payd"
)

// PoolStats are database/sql's figures of the pools payd reads and writes
// through, by name, for the operator's metrics: "read" (SQLite's read
// pool) and "write" (its one writer connection), or "pool" on PostgreSQL,
// where one pool serves both.
func (db *DB) PoolStats() map[string]payd.PoolStats {
	if db.writer != nil {
		return map[string]payd.PoolStats{"read": poolStats(db.read.Stats()), "write": poolStats(db.writerDB.Stats())}
	}
	return map[string]payd.PoolStats{"pool": poolStats(db.read.Stats())}
}

func poolStats(s sql.DBStats) payd.PoolStats {
	return payd.PoolStats{InUse: s.InUse, Idle: s.Idle, WaitCount: s.WaitCount, WaitDuration: s.WaitDuration}
}

// WriterQueue is how many write jobs wait for SQLite's one writer (0 on
// PostgreSQL, whose writes go through the pool): a queue that keeps
// growing means writes come faster than the disk commits them.
func (db *DB) WriterQueue() int {
	if db.writer == nil {
		return 0
	}
	return len(db.writer.jobs)
}

// PaymentStatusTotals counts every business's payments by status, from
// the payment_days rollup (one row per business, day, status and rail),
// for the operator's metrics.
func (db *DB) PaymentStatusTotals(ctx context.Context) (_ map[payd.PaymentStatus]int64, err error) {
	defer fail(&err, "payment", "store.PaymentStatusTotals")
	type total struct {
		status string
		n      int64
	}
	rows, err := queryAll(ctx, db.reader(ctx).ex, func(row rowScanner) (total, error) {
		var t total
		err := row.Scan(&t.status, &t.n)
		return t, err
	}, `SELECT status, CAST(SUM(payments) AS BIGINT) FROM `+paymentDaysLive+` GROUP BY status`)
	if err != nil {
		return nil, err
	}
	out := make(map[payd.PaymentStatus]int64, len(payd.PaymentStatuses))
	for _, s := range payd.PaymentStatuses {
		out[s] = 0
	}
	for _, t := range rows {
		out[payd.PaymentStatus(t.status)] = t.n
	}
	return out, nil
}
