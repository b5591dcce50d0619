package store

import (
	"context"
	"math"
	"strings"
	"time"

	"payd"
)

// The payment_days rollup (migration 00005) holds, per business, UTC day,
// status and rail, the count and US-cent sums of payments created that day.
// Triggers append each payment change's deltas in the transaction that
// writes it, and reads add the deltas not folded yet (store/rollup.go), so
// reading it is exact. It answers GET /metrics and the status_counts of a list
// filtered by nothing but status, rail and a created range, whatever the
// number of payments (docs/listing.md).

// dayMicros is one UTC day in the stored unit.
const dayMicros = int64(24 * time.Hour / time.Microsecond)

// PaymentStatusCounts counts the payments matching f per status, ignoring
// its status, sort, position and limit.
func (q *queries) PaymentStatusCounts(ctx context.Context, f payd.PaymentFilter) (counts map[payd.PaymentStatus]int64, err error) {
	defer fail(&err, "payment", "store.PaymentStatusCounts(%s)", f.BusinessID)
	counts = make(map[payd.PaymentStatus]int64, len(payd.PaymentStatuses))
	for _, s := range payd.PaymentStatuses {
		counts[s] = 0
	}
	if f.Query != "" || f.Reference != nil || f.CustomerID != nil || f.LinkID != nil || len(f.Metadata) > 0 {
		return counts, q.countPayments(ctx, f, counts)
	}
	return counts, q.countFromDays(ctx, f, counts)
}

// countPayments counts the matching rows themselves, through the index of
// the narrowest filter.
func (q *queries) countPayments(ctx context.Context, f payd.PaymentFilter, counts map[payd.PaymentStatus]int64) error {
	m, err := q.matchQuery(ctx, f)
	if err != nil || m.none() {
		return err
	}
	pq := q.newPaymentQuery(f, false, m)
	// Grouping by an expression keeps SQLite from walking the business's
	// whole payments_status for its order instead of the filter's index.
	query := "SELECT p.status || '', COUNT(*) FROM " + pq.from + " WHERE " + pq.whereSQL() + " GROUP BY p.status || ''"
	return q.addCounts(ctx, query, pq.args, counts)
}

// countFromDays sums the whole UTC days inside the created range from the
// rollup, and counts the rows of the partial days at its ends (at most two
// days of rows) from the payments themselves.
func (q *queries) countFromDays(ctx context.Context, f payd.PaymentFilter, counts map[payd.PaymentStatus]int64) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if f.CreatedAfter != nil {
		lo = ceilMicros(*f.CreatedAfter)
	}
	if f.CreatedBefore != nil {
		hi = ceilMicros(*f.CreatedBefore)
	}
	firstDay, endDay := ceilDiv(lo, dayMicros), floorDiv(hi, dayMicros)
	if f.CreatedAfter == nil {
		firstDay = math.MinInt64
	}
	if f.CreatedBefore == nil {
		endDay = math.MaxInt64
	}
	if firstDay >= endDay {
		return q.countSpan(ctx, f, lo, hi, counts)
	}
	if err := q.countDays(ctx, f, firstDay, endDay, counts); err != nil {
		return err
	}
	if f.CreatedAfter != nil {
		if err := q.countSpan(ctx, f, lo, firstDay*dayMicros, counts); err != nil {
			return err
		}
	}
	if f.CreatedBefore != nil {
		return q.countSpan(ctx, f, endDay*dayMicros, hi, counts)
	}
	return nil
}

// countSpan counts the payments created in [lo, hi) from the rows.
func (q *queries) countSpan(ctx context.Context, f payd.PaymentFilter, lo, hi int64, counts map[payd.PaymentStatus]int64) error {
	if lo >= hi {
		return nil
	}
	after, before := time.UnixMicro(lo), time.UnixMicro(hi)
	f.CreatedAfter, f.CreatedBefore = &after, &before
	pq := q.newPaymentQuery(f, false, nil) // f has no q here: see PaymentStatusCounts
	// Left to itself SQLite, which has no statistics, counts by walking
	// all of the business's payments_status (it covers status and gives
	// the GROUP BY its order) rather than the day or two of payments_created.
	from := "payments p"
	if q.dialect == dialectSQLite {
		from = "payments p INDEXED BY payments_created"
	}
	query := "SELECT p.status, COUNT(*) FROM " + from + " WHERE " + pq.whereSQL() + " GROUP BY p.status"
	return q.addCounts(ctx, query, pq.args, counts)
}

// countDays sums the rollup over the days [firstDay, endDay); MinInt64 and
// MaxInt64 leave that end open.
func (q *queries) countDays(ctx context.Context, f payd.PaymentFilter, firstDay, endDay int64, counts map[payd.PaymentStatus]int64) error {
	var args sqlArgs
	where := []string{"business_id = " + args.add(f.BusinessID)}
	if firstDay != math.MinInt64 {
		where = append(where, "day >= "+args.add(firstDay))
	}
	if endDay != math.MaxInt64 {
		where = append(where, "day < "+args.add(endDay))
	}
	if f.Rail != nil {
		where = append(where, "rail = "+args.add(string(*f.Rail)))
	}
	query := "SELECT status, CAST(SUM(payments) AS BIGINT) FROM " + paymentDaysLive + " WHERE " +
		strings.Join(where, " AND ") + " GROUP BY status"
	return q.addCounts(ctx, query, args, counts)
}

// addCounts adds the (status, count) rows of query to counts.
func (q *queries) addCounts(ctx context.Context, query string, args sqlArgs, counts map[payd.PaymentStatus]int64) error {
	rows, err := q.ex.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return err
		}
		counts[payd.PaymentStatus(status)] += n
	}
	return rows.Err()
}

// floorDiv and ceilDiv divide rounding toward minus and plus infinity.
func floorDiv(a, b int64) int64 {
	d := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		d--
	}
	return d
}

func ceilDiv(a, b int64) int64 {
	d := a / b
	if a%b != 0 && (a < 0) == (b < 0) {
		d++
	}
	return d
}

// PaymentDays returns the rollup rows of the UTC days from through to.
func (q *queries) PaymentDays(ctx context.Context, businessID string, from, to time.Time) (days []payd.PaymentDay, err error) {
	defer fail(&err, "payment", "store.PaymentDays(%s)", businessID)
	return queryAll(ctx, q.ex, func(row rowScanner) (payd.PaymentDay, error) {
		var d payd.PaymentDay
		var day int64
		err := row.Scan(&day, &d.Status, &d.Rail, &d.Payments, &d.AmountUSD, &d.FeeUSD)
		d.Date = fromMicros(day * dayMicros)
		return d, err
	}, `SELECT day, status, rail, CAST(SUM(payments) AS BIGINT), CAST(SUM(amount_usd) AS BIGINT), CAST(SUM(fee_usd) AS BIGINT)
		FROM `+paymentDaysLive+` WHERE business_id = $1 AND day >= $2 AND day <= $3
		GROUP BY day, status, rail HAVING SUM(payments) <> 0 ORDER BY day, status, rail`,
		businessID, floorDiv(micros(from), dayMicros), floorDiv(micros(to), dayMicros))
}

// PaymentStatusCounts counts payments per status; see payd.ListStore.
func (db *DB) PaymentStatusCounts(ctx context.Context, f payd.PaymentFilter) (map[payd.PaymentStatus]int64, error) {
	return db.reader(ctx).PaymentStatusCounts(ctx, f)
}

// PaymentDays returns daily payment totals; see payd.ListStore.
func (db *DB) PaymentDays(ctx context.Context, businessID string, from, to time.Time) ([]payd.PaymentDay, error) {
	return db.reader(ctx).PaymentDays(ctx, businessID, from, to)
}
