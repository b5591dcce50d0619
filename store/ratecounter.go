package store

import (
	"context"
	"time"
)

// CountRateHit adds one hit to (key, window) and returns the count after
// it, in one atomic upsert, so replicas sharing a database share a budget.
func (q *queries) CountRateHit(ctx context.Context, key string, window, expiresAt time.Time) (_ int, err error) {
	defer fail(&err, "rate counter", "store.CountRateHit(%s)", key)
	var n int
	err = q.ex.QueryRowContext(ctx, `
		INSERT INTO rate_counters (key, window_start, count, expires_at) VALUES ($1, $2, 1, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1
		RETURNING count`, key, micros(window), micros(expiresAt)).Scan(&n)
	return n, err
}

// CountWindowHit adds one hit to the window of the given length starting at
// window and returns its count and the previous window's, in one statement
// (the request path of every limited route pays for it). The row lives until
// the end of the next window, where it is the previous one.
func (q *queries) CountWindowHit(ctx context.Context, key string, window time.Time, length time.Duration) (cur, prev int, err error) {
	defer fail(&err, "rate counter", "store.CountWindowHit(%s)", key)
	err = q.ex.QueryRowContext(ctx, `
		INSERT INTO rate_counters (key, window_start, count, expires_at) VALUES ($1, $2, 1, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1
		RETURNING count, COALESCE((SELECT p.count FROM rate_counters p WHERE p.key = $1 AND p.window_start = $4), 0)`,
		key, micros(window), micros(window.Add(2*length)), micros(window.Add(-length))).Scan(&cur, &prev)
	return cur, prev, err
}

// DeleteExpiredRateCounters removes counters whose expiry is at or before now.
func (q *queries) DeleteExpiredRateCounters(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "rate counter", "store.DeleteExpiredRateCounters(%s)", now.Format(time.RFC3339))
	return count(q.ex.ExecContext(ctx, `DELETE FROM rate_counters WHERE expires_at <= $1`, micros(now)))
}
