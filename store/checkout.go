package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
	"payd/money"
)

// CreateCheckout stores a new checkout; conflict when its id or its
// deposit (network, address and Solana reference) is taken. The row count
// tells, not a unique violation (see insertCheckout), so the caller's
// transaction stays usable.
func (q *queries) CreateCheckout(ctx context.Context, c *payd.Checkout) (err error) {
	defer fail(&err, "checkout", "store.CreateCheckout(%s)", c.ID)
	args, err := checkoutArgs(c)
	if err != nil {
		return err
	}
	err = affected(q.ex.ExecContext(ctx, insertCheckout,
		append([]any{c.ID, c.BusinessID, c.PaymentID, micros(c.CreatedAt), c.Version}, args...)...))
	if err == sql.ErrNoRows {
		return payd.Errorf(payd.ErrConflict, "checkout %s, or a checkout with its deposit, is already stored", c.ID)
	}
	return err
}

// CheckoutByID returns the checkout with the id, whatever its business;
// not_found otherwise. Inside a PostgreSQL transaction the row stays
// locked until commit, so two changes to one checkout take turns instead
// of the second failing on the version.
func (q *queries) CheckoutByID(ctx context.Context, id string) (_ *payd.Checkout, err error) {
	defer fail(&err, "checkout", "store.CheckoutByID(%s)", id)
	return scanCheckout(q.ex.QueryRowContext(ctx, `SELECT `+checkoutColumns+` FROM checkouts WHERE id = $1`+q.lockRow(), id))
}

// UpdateCheckout writes c's mutable fields if the stored version is still
// c.Version, and then counts c.Version on; see payd.CheckoutStore. The
// version check is in the UPDATE itself: on PostgreSQL a concurrent
// writer's UPDATE waits for the first to commit and then finds the version
// moved, so exactly one writer of each version wins.
func (q *queries) UpdateCheckout(ctx context.Context, c *payd.Checkout) (err error) {
	defer fail(&err, "checkout", "store.UpdateCheckout(%s)", c.ID)
	args, err := checkoutArgs(c)
	if err != nil {
		return err
	}
	err = affected(q.ex.ExecContext(ctx, updateCheckout, append([]any{c.ID, c.Version}, args...)...))
	if err == sql.ErrNoRows {
		return q.staleCheckout(ctx, c)
	}
	if err != nil {
		return err
	}
	c.Version++
	return nil
}

// staleCheckout explains an update that matched no row: not_found when the
// checkout does not exist, conflict when another writer moved its version.
func (q *queries) staleCheckout(ctx context.Context, c *payd.Checkout) error {
	var stored int
	if err := q.ex.QueryRowContext(ctx, `SELECT version FROM checkouts WHERE id = $1`, c.ID).Scan(&stored); err != nil {
		return err
	}
	return payd.Errorf(payd.ErrConflict, "checkout %s changed meanwhile (version %d, not %d); read it again",
		c.ID, stored, c.Version)
}

// WatchedCheckouts returns a page of the checkouts on network n watched
// at now, in (watch_until, id) order after the cursor after; see
// payd.CheckoutStore. The inner query picks the page's ids from
// checkouts_watched alone, seeking to the cursor with one row-value
// comparison that both databases answer from the index, so every page
// costs its own rows and no more (a page in id order had to walk and sort
// every watched entry of the network). "Watched at now" joins that bound:
// watch_until > now is (watch_until, id) > (now + 1 µs, the empty id), ids
// being never empty. Only the page's rows are then read.
func (q *queries) WatchedCheckouts(ctx context.Context, n money.Network, now time.Time, after payd.WatchCursor, limit int) (_ []*payd.Checkout, err error) {
	defer fail(&err, "checkout", "store.WatchedCheckouts(%s, %v)", n, after)
	until, id := micros(after.Until), after.ID
	if from := micros(now) + 1; until < from {
		until, id = from, ""
	}
	return q.checkouts(ctx, `SELECT `+checkoutColumns+` FROM checkouts WHERE id IN (
			SELECT w.id FROM checkouts w WHERE w.network = $1 AND (w.watch_until, w.id) > ($2, $3)
			ORDER BY w.watch_until, w.id LIMIT $4)
		ORDER BY watch_until, id`, string(n), until, id, limit)
}

// DueCheckouts returns up to limit live checkouts whose quote ended at or
// before now, oldest quote first; see payd.CheckoutStore. The status test
// is spelled as in the partial index checkouts_due, which SQLite uses only
// for a WHERE that contains its condition word for word. Inside a
// PostgreSQL transaction the rows are locked and rows another transaction
// holds are skipped, so replicas expiring at once share the work.
// Checkouts on the held networks whose quote ended after heldSince are
// left out (card ones, with no network, never are).
func (q *queries) DueCheckouts(ctx context.Context, now time.Time, limit int, held []money.Network,
	heldSince time.Time) (_ []*payd.Checkout, err error) {
	defer fail(&err, "checkout", "store.DueCheckouts")
	args := []any{micros(now), limit}
	skip := ""
	if len(held) > 0 {
		args = append(args, micros(heldSince))
		for _, n := range held {
			args = append(args, string(n))
		}
		skip = ` AND (network IS NULL OR expires_at <= $3 OR network NOT IN (` + placeholders(4, len(held)) + `))`
	}
	return q.checkouts(ctx, `SELECT `+checkoutColumns+` FROM checkouts
		WHERE status IN ('open', 'processing', 'underpaid') AND expires_at <= $1`+skip+`
		ORDER BY expires_at, id LIMIT $2`+q.skipLocked(), args...)
}

// CheckoutByCardSession returns the checkout whose current card route is
// the provider's session; not_found otherwise. Inside a PostgreSQL
// transaction the row stays locked until commit.
func (q *queries) CheckoutByCardSession(ctx context.Context, provider, session string) (_ *payd.Checkout, err error) {
	defer fail(&err, "checkout", "store.CheckoutByCardSession(%s, %s)", provider, session)
	return scanCheckout(q.ex.QueryRowContext(ctx, `SELECT `+checkoutColumns+` FROM checkouts
		WHERE card_provider = $1 AND card_session = $2`+q.lockRow(), provider, session))
}

// PolledCardCheckouts returns up to limit card checkouts, still open or
// processing, whose current route the provider may still move, in id
// order after the id after; see
// payd.CheckoutStore. The status test is spelled as in the partial index
// checkouts_card_polled, word for word, so SQLite uses it.
func (q *queries) PolledCardCheckouts(ctx context.Context, after string, limit int) (_ []*payd.Checkout, err error) {
	defer fail(&err, "checkout", "store.PolledCardCheckouts")
	return q.checkouts(ctx, `SELECT `+checkoutColumns+` FROM checkouts
		WHERE card_status IN ('awaiting_payment', 'challenge', 'processing') AND status IN ('open', 'processing') AND id > $1
		ORDER BY id LIMIT $2`, after, limit)
}

// checkouts runs a query of checkoutColumns and reads every row.
func (q *queries) checkouts(ctx context.Context, query string, args ...any) ([]*payd.Checkout, error) {
	return queryAll(ctx, q.ex, scanCheckout, query, args...)
}

// DuePayments returns up to limit pending payments whose expires_at is at
// or before now, oldest first, with their events; see payd.CheckoutStore.
// Like DueCheckouts it matches its partial index (payments_due) word for
// word, and skips rows locked by another PostgreSQL transaction.
func (q *queries) DuePayments(ctx context.Context, now time.Time, limit int) (_ []*payd.Payment, err error) {
	defer fail(&err, "payment", "store.DuePayments")
	rows, err := q.ex.QueryContext(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= $1
		ORDER BY expires_at, id LIMIT $2`+q.skipLocked(), micros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*payd.Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close() // a transaction reads the events on this same connection
	return out, q.eventsOfAll(ctx, out)
}

// eventsOfAll loads the events of every payment in ps in one query.
func (q *queries) eventsOfAll(ctx context.Context, ps []*payd.Payment) error {
	if len(ps) == 0 {
		return nil
	}
	byID, ids := make(map[string]*payd.Payment, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		byID[p.ID], ids[i] = p, p.ID
	}
	return q.eventsOf(ctx, jsonIDs(ids), byID)
}

// skipLocked is appended to a read of due rows inside a PostgreSQL
// transaction: it locks the rows it returns and passes over those another
// transaction holds, the way the worker loops claim work (DESIGN §2).
// SQLite's single writer runs such transactions one at a time anyway.
func (q *queries) skipLocked() string {
	if q.dialect == dialectPostgres && !q.at.IsZero() {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// AcquireLease gives the lease to holder when it is free at now or holder
// has it already, in one upsert; see payd.LeaseStore. The upsert's WHERE
// leaves a lease held by another untouched, and the row count says which
// case it was. Two replicas racing for a free lease queue on the row's
// key: the second then sees the first's lease and gets nothing.
func (q *queries) AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (_ bool, err error) {
	defer fail(&err, "lease", "store.AcquireLease(%s, %s)", name, holder)
	n, err := count(q.ex.ExecContext(ctx, `
		INSERT INTO leases (name, holder, until) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.until <= $4 OR leases.holder = excluded.holder`, name, holder, micros(until), micros(now)))
	return n == 1, err
}

// ReleaseLease deletes the lease if holder has it; see payd.LeaseStore.
func (q *queries) ReleaseLease(ctx context.Context, name, holder string) (err error) {
	defer fail(&err, "lease", "store.ReleaseLease(%s, %s)", name, holder)
	_, err = q.ex.ExecContext(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder)
	return err
}

// ReleaseLease gives the lease up if holder has it; see payd.LeaseStore.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.ReleaseLease(ctx, name, holder) })
}

// CreateCheckout stores a new checkout; conflict when its id or deposit is
// taken.
func (db *DB) CreateCheckout(ctx context.Context, c *payd.Checkout) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateCheckout(ctx, c) })
}

// CheckoutByID returns the checkout with the id; not_found otherwise.
func (db *DB) CheckoutByID(ctx context.Context, id string) (*payd.Checkout, error) {
	return db.reader(ctx).CheckoutByID(ctx, id)
}

// UpdateCheckout writes c if nobody changed it since it was read; see
// payd.CheckoutStore. Every run starts from the caller's version: the
// SQLite writer runs a write again when another job broke its batch, and
// a version counted by the undone run must not count twice. A failed
// write leaves the version as it was.
func (db *DB) UpdateCheckout(ctx context.Context, c *payd.Checkout) error {
	v := c.Version
	err := db.write(ctx, func(ctx context.Context, q *queries) error {
		c.Version = v
		return q.UpdateCheckout(ctx, c)
	})
	if err != nil {
		c.Version = v
	}
	return err
}

// WatchedCheckouts returns a page of the checkouts watched on network n.
func (db *DB) WatchedCheckouts(ctx context.Context, n money.Network, now time.Time, after payd.WatchCursor, limit int) ([]*payd.Checkout, error) {
	return db.reader(ctx).WatchedCheckouts(ctx, n, now, after, limit)
}

// DueCheckouts returns live checkouts whose quote ended at or before now.
func (db *DB) DueCheckouts(ctx context.Context, now time.Time, limit int, held []money.Network,
	heldSince time.Time) ([]*payd.Checkout, error) {
	return db.reader(ctx).DueCheckouts(ctx, now, limit, held, heldSince)
}

// CheckoutByCardSession returns the checkout of a provider's session.
func (db *DB) CheckoutByCardSession(ctx context.Context, provider, session string) (*payd.Checkout, error) {
	return db.reader(ctx).CheckoutByCardSession(ctx, provider, session)
}

// PolledCardCheckouts returns card checkouts the poller still asks about.
func (db *DB) PolledCardCheckouts(ctx context.Context, after string, limit int) ([]*payd.Checkout, error) {
	return db.reader(ctx).PolledCardCheckouts(ctx, after, limit)
}

// DuePayments returns pending payments whose expires_at is at or before now.
func (db *DB) DuePayments(ctx context.Context, now time.Time, limit int) ([]*payd.Payment, error) {
	return db.reader(ctx).DuePayments(ctx, now, limit)
}

// AcquireLease gives the lease to holder if it is free or holder's; see
// payd.LeaseStore.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (ok bool, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		ok, err = q.AcquireLease(ctx, name, holder, now, until)
		return err
	})
	return ok, err
}
