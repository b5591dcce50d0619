package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"payd"
)

// Webhook deliveries (docs/webhook-delivery.md). The rows are the queue:
// the loop claims due rows by setting a lease and counting the version on
// in one UPDATE … RETURNING (with FOR UPDATE SKIP LOCKED in its subquery
// on PostgreSQL), and saves a result only under the version it claimed.

// UndispatchedEvents returns up to limit events still to fan out, oldest
// first, locking them inside a PostgreSQL transaction.
func (q *queries) UndispatchedEvents(ctx context.Context, limit int) (_ []*payd.Event, err error) {
	defer fail(&err, "event", "store.UndispatchedEvents")
	return queryAll(ctx, q.ex, scanEvent, `SELECT `+eventColumns+` FROM events WHERE dispatched_at IS NULL
		ORDER BY created_at, id LIMIT $1`+q.skipLocked(), limit)
}

// DispatchEvents marks up to limit undispatched events dispatched at at,
// oldest first, and returns them, in one statement: the fan-out's first
// and only read of the events. On PostgreSQL the subquery locks the rows
// it takes and skips those another fan-out holds, so replicas never take
// one event twice; on SQLite the writer runs one transaction at a time.
func (q *queries) DispatchEvents(ctx context.Context, limit int, at time.Time) (_ []*payd.Event, err error) {
	defer fail(&err, "event", "store.DispatchEvents")
	lock := ""
	if q.dialect == dialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	evs, err := queryAll(ctx, q.ex, scanEvent, `UPDATE events SET dispatched_at = $1
		WHERE id IN (SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT $2`+lock+`)
		RETURNING `+eventColumns, micros(at), limit)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(evs, func(a, b *payd.Event) int { // RETURNING keeps no order
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return evs, nil
}

// insertChunks are the row counts of the INSERTs CreateDeliveries makes,
// largest first: three statement texts for the statement cache, and 18
// parameters a row stays well inside both databases' limits.
var insertChunks = []int{100, 10, 1}

// nextChunk splits the first chunk of insertChunks' sizes off rows.
func nextChunk[T any](rows []T) (chunk, rest []T) {
	size := insertChunks[len(insertChunks)-1]
	for _, n := range insertChunks {
		if len(rows) >= n {
			size = n
			break
		}
	}
	return rows[:size], rows[size:]
}

// CreateDeliveries stores new deliveries, many rows per statement: a
// fan-out page stores hundreds at once, and one statement per row was most
// of its cost.
func (q *queries) CreateDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) (err error) {
	if len(ds) == 0 {
		return nil
	}
	defer fail(&err, "webhook delivery", "store.CreateDeliveries(%s)", ds[0].ID)
	if q.dialect == dialectPostgres {
		return q.pgCreateDeliveries(ctx, ds)
	}
	for len(ds) > 0 {
		var chunk []*payd.WebhookDelivery
		chunk, ds = nextChunk(ds)
		args := make([]any, 0, 18*len(chunk))
		var sb strings.Builder
		sb.WriteString(`INSERT INTO webhook_deliveries (` + deliveryColumns + `) VALUES `)
		for i, d := range chunk {
			row, err := deliveryArgs(d)
			if err != nil {
				return err
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(" + placeholders(len(args)+1, 18) + ")")
			args = append(args, row...)
		}
		if _, err := q.ex.ExecContext(ctx, sb.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// ClaimDueDeliveries leases due, free deliveries in one statement; see
// payd.DeliveryStore. The subquery walks the partial index
// webhook_deliveries_due in due order; rows of the endpoints in skip (the
// loop's busy ones) are passed over there, so they cost a look each but
// are never leased. A claimed row is also due again at the lease's end:
// that is when it must be attempted if its holder vanishes, and it takes
// the rows in flight out of the way of the next claim's walk (the holder
// saves the real next attempt; the payd.DeliveryStore contract is kept,
// since a leased row is not claimable before then anyway).
func (q *queries) ClaimDueDeliveries(ctx context.Context, now, until time.Time, limit int, skip ...string) (_ []*payd.WebhookDelivery, err error) {
	defer fail(&err, "webhook delivery", "store.ClaimDueDeliveries")
	lock := ""
	if q.dialect == dialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	args := []any{micros(until), micros(now), limit}
	except := ""
	switch {
	case len(skip) > 0 && q.dialect == dialectPostgres: // one statement text for any count
		args = append(args, skip)
		except = " AND webhook_id <> ALL($4::text[])"
	case len(skip) > 0:
		marks := make([]string, len(skip))
		for i, id := range skip {
			args = append(args, id)
			marks[i] = "$" + strconv.Itoa(len(args))
		}
		except = " AND webhook_id NOT IN (" + strings.Join(marks, ", ") + ")"
	}
	return queryAll(ctx, q.ex, scanDelivery, `UPDATE webhook_deliveries SET lease_until = $1, next_attempt_at = $1,
			version = version + 1
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $2
			AND (lease_until IS NULL OR lease_until <= $2)`+except+` ORDER BY next_attempt_at, id LIMIT $3`+lock+`)
		RETURNING `+deliveryColumns, args...)
}

// ClaimDelivery leases one delivery for a manual attempt; see
// payd.DeliveryStore.
func (q *queries) ClaimDelivery(ctx context.Context, businessID, id string, now, until time.Time) (_ *payd.WebhookDelivery, err error) {
	defer fail(&err, "webhook delivery", "store.ClaimDelivery(%s)", id)
	d, err := scanDelivery(q.ex.QueryRowContext(ctx, `UPDATE webhook_deliveries SET lease_until = $4, version = version + 1
		WHERE business_id = $1 AND id = $2 AND (lease_until IS NULL OR lease_until <= $3)
		RETURNING `+deliveryColumns, businessID, id, micros(now), micros(until)))
	if err == sql.ErrNoRows {
		if _, err := q.DeliveryByID(ctx, businessID, id); err != nil {
			return nil, err
		}
		return nil, payd.Errorf(payd.ErrConflict, "an attempt of delivery %s is in progress; try again shortly", id)
	}
	return d, err
}

// SaveDelivery writes d's state under the version its holder claimed.
func (q *queries) SaveDelivery(ctx context.Context, d *payd.WebhookDelivery) (err error) {
	defer fail(&err, "webhook delivery", "store.SaveDelivery(%s)", d.ID)
	attempts, headers, err := encodeDeliveryJSON(d)
	if err != nil {
		return err
	}
	err = affected(q.ex.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $3, attempts = $4,
			next_attempt_at = $5, lease_until = $6, version = version + 1, request_headers = $7, error = $8, updated_at = $9
		WHERE id = $1 AND version = $2`, d.ID, d.Version, string(d.Status), attempts, nullMicros(d.NextAttemptAt),
		nullMicros(d.LeaseUntil), headers, d.Error, micros(d.UpdatedAt)))
	if err == sql.ErrNoRows {
		if _, err := q.DeliveryByID(ctx, d.BusinessID, d.ID); err != nil {
			return err
		}
		return payd.Errorf(payd.ErrConflict, "delivery %s was claimed by another holder meanwhile", d.ID)
	}
	if err == nil {
		d.Version++
	}
	return err
}

// saveColumns are the values SaveDeliveries sends per row, typed so that
// PostgreSQL reads the VALUES list right (CAST is in both dialects).
var saveColumns = []string{"CAST($%d AS TEXT)", "CAST($%d AS INTEGER)", "CAST($%d AS TEXT)", "CAST($%d AS TEXT)",
	"CAST($%d AS BIGINT)", "CAST($%d AS BIGINT)", "CAST($%d AS TEXT)", "CAST($%d AS TEXT)", "CAST($%d AS BIGINT)"}

// SaveDeliveries writes each of ds under the version its holder claimed,
// many rows per statement (the delivery loop saves its results in
// batches), and counts the saved ones' versions on. It returns the ids of
// those not saved: their lease was lost to another holder, or they were
// deleted.
func (q *queries) SaveDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) (lost []string, err error) {
	if len(ds) == 0 {
		return nil, nil
	}
	defer fail(&err, "webhook delivery", "store.SaveDeliveries(%s)", ds[0].ID)
	if q.dialect == dialectPostgres {
		return q.pgSaveDeliveries(ctx, ds)
	}
	for len(ds) > 0 {
		var chunk []*payd.WebhookDelivery
		chunk, ds = nextChunk(ds)
		missed, err := q.saveChunk(ctx, chunk)
		if err != nil {
			return nil, err
		}
		lost = append(lost, missed...)
	}
	return lost, nil
}

// saveChunk is one statement of SaveDeliveries.
func (q *queries) saveChunk(ctx context.Context, ds []*payd.WebhookDelivery) ([]string, error) {
	var sb strings.Builder
	sb.WriteString(`WITH v (id, version, status, attempts, next_attempt_at, lease_until, request_headers, error, updated_at) AS (VALUES `)
	args := make([]any, 0, len(saveColumns)*len(ds))
	for i, d := range ds {
		attempts, headers, err := encodeDeliveryJSON(d)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(")
		for j, c := range saveColumns {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(strings.Replace(c, "%d", strconv.Itoa(len(args)+j+1), 1))
		}
		sb.WriteString(")")
		args = append(args, d.ID, d.Version, string(d.Status), attempts, nullMicros(d.NextAttemptAt),
			nullMicros(d.LeaseUntil), headers, d.Error, micros(d.UpdatedAt))
	}
	sb.WriteString(`) UPDATE webhook_deliveries SET status = v.status, attempts = v.attempts,
		next_attempt_at = v.next_attempt_at, lease_until = v.lease_until, version = webhook_deliveries.version + 1,
		request_headers = v.request_headers, error = v.error, updated_at = v.updated_at
		FROM v WHERE webhook_deliveries.id = v.id AND webhook_deliveries.version = v.version
		RETURNING webhook_deliveries.id`)
	saved, err := queryAll(ctx, q.ex, scanID, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	return settle(ds, saved), nil
}

// settle counts the versions of the saved deliveries of ds on and returns
// the ids of the others.
func settle(ds []*payd.WebhookDelivery, saved []string) (lost []string) {
	ok := make(map[string]bool, len(saved))
	for _, id := range saved {
		ok[id] = true
	}
	for _, d := range ds {
		if ok[d.ID] {
			d.Version++
		} else {
			lost = append(lost, d.ID)
		}
	}
	return lost
}

// DeliveryByID returns the business's delivery; not_found otherwise.
func (q *queries) DeliveryByID(ctx context.Context, businessID, id string) (_ *payd.WebhookDelivery, err error) {
	defer fail(&err, "webhook delivery", "store.DeliveryByID(%s)", id)
	return scanDelivery(q.ex.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE business_id = $1 AND id = $2`, businessID, id))
}

// ListDeliveries returns a page of the business's deliveries matching f,
// newest first.
func (q *queries) ListDeliveries(ctx context.Context, businessID string, f payd.DeliveryFilter) (_ []*payd.WebhookDelivery, err error) {
	defer fail(&err, "webhook delivery", "store.ListDeliveries(%s)", businessID)
	w := newConds(businessID)
	if f.WebhookID != nil {
		w.add("webhook_id = " + w.arg(*f.WebhookID))
	}
	if f.EventID != nil {
		w.add("event_id = " + w.arg(*f.EventID))
	}
	if f.Status != nil {
		w.add("status = " + w.arg(string(*f.Status)))
	}
	w.created(nil, nil, f.AfterCreated, f.AfterID)
	return queryAll(ctx, q.ex, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE `+w.sql()+` ORDER BY created_at DESC, id DESC LIMIT `+w.arg(f.Limit), w.args...)
}

// UndispatchedEvents returns events still to fan out.
func (db *DB) UndispatchedEvents(ctx context.Context, limit int) ([]*payd.Event, error) {
	return db.reader(ctx).UndispatchedEvents(ctx, limit)
}

// DispatchEvents marks up to limit events dispatched and returns them, in
// ctx's transaction when it carries one.
func (db *DB) DispatchEvents(ctx context.Context, limit int, at time.Time) (evs []*payd.Event, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		evs, err = q.DispatchEvents(ctx, limit, at)
		return err
	})
	return evs, err
}

// CreateDeliveries stores new deliveries together.
func (db *DB) CreateDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.CreateDeliveries(ctx, ds) })
}

// ClaimDueDeliveries leases due deliveries; see payd.DeliveryStore.
func (db *DB) ClaimDueDeliveries(ctx context.Context, now, until time.Time, limit int, skip ...string) (ds []*payd.WebhookDelivery, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		ds, err = q.ClaimDueDeliveries(ctx, now, until, limit, skip...)
		return err
	})
	return ds, err
}

// ClaimDelivery leases one delivery for a manual attempt.
func (db *DB) ClaimDelivery(ctx context.Context, businessID, id string, now, until time.Time) (d *payd.WebhookDelivery, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		d, err = q.ClaimDelivery(ctx, businessID, id, now, until)
		return err
	})
	return d, err
}

// SaveDelivery writes d under its claimed version. A failed write leaves
// the version as it was, and a write the SQLite writer runs again starts
// from it, as UpdateCheckout does.
func (db *DB) SaveDelivery(ctx context.Context, d *payd.WebhookDelivery) error {
	v := d.Version
	err := db.write(ctx, func(ctx context.Context, q *queries) error {
		d.Version = v
		return q.SaveDelivery(ctx, d)
	})
	if err != nil {
		d.Version = v
	}
	return err
}

// SaveDeliveries writes each of ds under its claimed version, in ctx's
// transaction when it carries one; see payd.DeliveryStore. On PostgreSQL,
// outside a transaction, it commits asynchronously (synchronous_commit
// off for its own transaction alone): the commit does not wait for the
// WAL flush nor ask for one, so the loop's saves no longer add flushes
// that the API's commits queue behind. A database crash can lose the last
// fraction of a second of such saves; each of those deliveries is then as
// its claim or fan-out left it, leased, and is attempted again when the
// lease lapses, which at-least-once delivery allows (docs/webhook-delivery.md).
func (db *DB) SaveDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) (lost []string, err error) {
	versions := make([]int, len(ds))
	for i, d := range ds {
		versions[i] = d.Version
	}
	save := func(ctx context.Context, q *queries) error {
		for i, d := range ds { // a write run again starts afresh
			d.Version = versions[i]
		}
		lost, err = q.SaveDeliveries(ctx, ds)
		return err
	}
	if db.dialect == dialectPostgres && db.txFrom(ctx) == nil {
		err = db.pgTx(ctx, func(ctx context.Context, q *queries) error {
			if _, err := q.ex.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return err
			}
			return save(ctx, q)
		})
	} else {
		err = db.write(ctx, save)
	}
	if err != nil {
		for i, d := range ds {
			d.Version = versions[i]
		}
	}
	return lost, err
}

// DeliveryByID returns the business's delivery; not_found otherwise.
func (db *DB) DeliveryByID(ctx context.Context, businessID, id string) (*payd.WebhookDelivery, error) {
	return db.reader(ctx).DeliveryByID(ctx, businessID, id)
}

// ListDeliveries returns a page of the business's deliveries.
func (db *DB) ListDeliveries(ctx context.Context, businessID string, f payd.DeliveryFilter) ([]*payd.WebhookDelivery, error) {
	return db.reader(ctx).ListDeliveries(ctx, businessID, f)
}
