package store

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"payd"
	"payd/clock"
)

// Rollups without hot rows (migration 00031, docs/storage.md). A payment
// change appends its deltas, to payment_day_deltas (by trigger) and to
// stats_deltas (AddCustomerStats, AddLinkStats), instead of updating the
// one row every payment of a business, a link or a customer shares, which
// PostgreSQL would keep locked until the change commits. Readers add the
// deltas not folded yet, so every figure stays exact; FoldRollups moves
// them into payment_days and the customers' and links' columns in the
// background (Folder).

// paymentDaysLive is payment_days with the unfolded deltas beside it, for
// reads that sum rows per business; both databases push a reader's WHERE
// into each branch.
const paymentDaysLive = `(SELECT business_id, day, status, rail, payments, amount_usd, fee_usd FROM payment_days
	UNION ALL SELECT business_id, day, status, rail, payments, amount_usd, fee_usd FROM payment_day_deltas) AS pd`

// Kinds of stats_deltas rows.
const (
	statsCustomer = "customer"
	statsLink     = "link"
)

// addStats appends d to the stats of the business's customer or link id;
// not_found when the business has none such.
//
// On PostgreSQL a link's row is key-share locked until commit: payments
// never wait for each other's such lock, but DeleteLink, which refuses a
// link with payments, waits for the payments still running and then sees
// their deltas. (Customers are never deleted.)
func (q *queries) addStats(ctx context.Context, kind, businessID, id string, d payd.StatsDelta) error {
	table, lock := "customers", ""
	if kind == statsLink {
		table = "links"
		if q.dialect == dialectPostgres {
			lock = " FOR KEY SHARE"
		}
	}
	return affected(q.ex.ExecContext(ctx, `
		INSERT INTO stats_deltas (business_id, kind, id, payments, succeeded, volume_usd, crypto, card, last_payment_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, CAST($9 AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM `+table+` WHERE business_id = $1 AND id = $3`+lock+`)`,
		businessID, kind, id, d.Payments, d.Succeeded, d.VolumeUSD, d.Crypto, d.Card, nullMicros(d.LastPaymentAt)))
}

// pendingStats adds the unfolded stats deltas of the business's customers
// or links to stats, keyed by id.
func (q *queries) pendingStats(ctx context.Context, kind, businessID string, stats map[string]*payd.Stats) error {
	if len(stats) == 0 {
		return nil
	}
	ids := make([]string, 0, len(stats))
	for id := range stats {
		ids = append(ids, id)
	}
	rows, err := q.ex.QueryContext(ctx, `
		SELECT id, SUM(payments), SUM(succeeded), SUM(volume_usd), SUM(crypto), SUM(card), MAX(last_payment_at)
		FROM stats_deltas WHERE business_id = $1 AND kind = $2 AND `+q.idsIn("id", "$3")+` GROUP BY id`,
		businessID, kind, jsonIDs(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var d payd.StatsDelta
		var last sql.NullInt64
		if err := rows.Scan(&id, &d.Payments, &d.Succeeded, &d.VolumeUSD, &d.Crypto, &d.Card, &last); err != nil {
			return err
		}
		d.LastPaymentAt = fromNullMicros(last)
		stats[id].Add(d)
	}
	return rows.Err()
}

// withPendingCustomers adds the unfolded deltas to customers of one
// business.
func (q *queries) withPendingCustomers(ctx context.Context, businessID string, cs ...*payd.Customer) error {
	stats := make(map[string]*payd.Stats, len(cs))
	for _, c := range cs {
		stats[c.ID] = &c.Stats
	}
	return q.pendingStats(ctx, statsCustomer, businessID, stats)
}

// withPendingLinks adds the unfolded deltas to links of one business.
func (q *queries) withPendingLinks(ctx context.Context, businessID string, ls ...*payd.Link) error {
	stats := make(map[string]*payd.Stats, len(ls))
	for _, l := range ls {
		stats[l.ID] = &l.Stats
	}
	return q.pendingStats(ctx, statsLink, businessID, stats)
}

// FoldRollups moves unfolded deltas into the rollups in one transaction
// and reports how many it moved; on SQLite at most max of each table.
// Replicas may fold at once: on PostgreSQL each fold deletes the deltas it
// adds in the same statement, so a delta another fold took is skipped.
func (db *DB) FoldRollups(ctx context.Context, max int) (n int, err error) {
	err = db.transact(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.FoldRollups(ctx, max)
		return err
	})
	return n, err
}

// FoldRollups folds within the current transaction; see DB.FoldRollups.
func (q *queries) FoldRollups(ctx context.Context, max int) (n int, err error) {
	defer fail(&err, "rollup", "store.FoldRollups")
	if q.dialect == dialectPostgres {
		return n, q.foldPostgres(ctx, &n)
	}
	return n, q.foldSQLite(ctx, max, &n)
}

// foldPostgres folds every visible delta. Each statement's CTEs all run,
// referred to or not; it returns how many deltas it moved.
func (q *queries) foldPostgres(ctx context.Context, n *int) error {
	for _, fold := range []string{`
		WITH moved AS (DELETE FROM payment_day_deltas RETURNING *),
		folded AS (
			INSERT INTO payment_days AS t (business_id, day, status, rail, payments, amount_usd, fee_usd)
			SELECT business_id, day, status, rail, SUM(payments), SUM(amount_usd), SUM(fee_usd)
			FROM moved GROUP BY business_id, day, status, rail
			ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
				payments = t.payments + excluded.payments,
				amount_usd = t.amount_usd + excluded.amount_usd,
				fee_usd = t.fee_usd + excluded.fee_usd)
		SELECT COUNT(*) FROM moved`, `
		WITH moved AS (DELETE FROM stats_deltas RETURNING *),
		sums AS (
			SELECT kind, id, SUM(payments) AS payments, SUM(succeeded) AS succeeded, SUM(volume_usd) AS volume_usd,
				SUM(crypto) AS crypto, SUM(card) AS card, MAX(last_payment_at) AS last_payment_at
			FROM moved GROUP BY kind, id),
		customers_folded AS (
			UPDATE customers c SET payments_count = c.payments_count + d.payments,
				succeeded_count = c.succeeded_count + d.succeeded, volume_usd = c.volume_usd + d.volume_usd,
				crypto_count = c.crypto_count + d.crypto, card_count = c.card_count + d.card,
				last_payment_at = GREATEST(c.last_payment_at, d.last_payment_at)
			FROM sums d WHERE d.kind = 'customer' AND c.id = d.id),
		links_folded AS (
			UPDATE links l SET payments_count = l.payments_count + d.payments, volume_usd = l.volume_usd + d.volume_usd
			FROM sums d WHERE d.kind = 'link' AND l.id = d.id)
		SELECT COUNT(*) FROM moved`} {
		var moved int
		if err := q.ex.QueryRowContext(ctx, fold).Scan(&moved); err != nil {
			return err
		}
		*n += moved
	}
	return nil
}

// foldSQLite folds up to max of each table's oldest deltas; the single
// writer runs nothing else meanwhile, so reading and deleting them in two
// statements is atomic.
func (q *queries) foldSQLite(ctx context.Context, limit int, n *int) error {
	for _, f := range []struct {
		table string
		folds []string
	}{
		{"payment_day_deltas", []string{`
			INSERT INTO payment_days AS t (business_id, day, status, rail, payments, amount_usd, fee_usd)
			SELECT business_id, day, status, rail, SUM(payments), SUM(amount_usd), SUM(fee_usd)
			FROM payment_day_deltas WHERE rowid <= $1 GROUP BY business_id, day, status, rail
			ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
				payments = t.payments + excluded.payments,
				amount_usd = t.amount_usd + excluded.amount_usd,
				fee_usd = t.fee_usd + excluded.fee_usd`}},
		{"stats_deltas", []string{`
			UPDATE customers SET payments_count = payments_count + d.payments,
				succeeded_count = succeeded_count + d.succeeded, volume_usd = customers.volume_usd + d.volume_usd,
				crypto_count = crypto_count + d.crypto, card_count = card_count + d.card,
				last_payment_at = ` + laterOf("customers.last_payment_at", "d.last_payment_at") + `
			FROM (SELECT id, SUM(payments) AS payments, SUM(succeeded) AS succeeded, SUM(volume_usd) AS volume_usd,
					SUM(crypto) AS crypto, SUM(card) AS card, MAX(last_payment_at) AS last_payment_at
				FROM stats_deltas WHERE rowid <= $1 AND kind = 'customer' GROUP BY id) AS d
			WHERE customers.id = d.id`, `
			UPDATE links SET payments_count = payments_count + d.payments, volume_usd = links.volume_usd + d.volume_usd
			FROM (SELECT id, SUM(payments) AS payments, SUM(volume_usd) AS volume_usd
				FROM stats_deltas WHERE rowid <= $1 AND kind = 'link' GROUP BY id) AS d
			WHERE links.id = d.id`}},
	} {
		var upto sql.NullInt64
		var count int
		err := q.ex.QueryRowContext(ctx, `SELECT MAX(rowid), COUNT(*) FROM (SELECT rowid FROM `+f.table+
			` ORDER BY rowid LIMIT $1)`, limit).Scan(&upto, &count)
		if err != nil {
			return err
		}
		if count == 0 {
			continue
		}
		for _, fold := range f.folds {
			if _, err := q.ex.ExecContext(ctx, fold, upto.Int64); err != nil {
				return err
			}
		}
		if _, err := q.ex.ExecContext(ctx, `DELETE FROM `+f.table+` WHERE rowid <= $1`, upto.Int64); err != nil {
			return err
		}
		*n = max(*n, count)
	}
	return nil
}

// Folder loop settings.
const (
	// foldEvery is how often the folder moves deltas into the rollups:
	// a read adds about this long's deltas of its rows (a link taking
	// 2,000 checkouts a second: 500 rows).
	foldEvery = 250 * time.Millisecond
	// foldBatch bounds one fold on SQLite, whose single writer it holds.
	foldBatch = 10_000
)

// Folder is the background loop that folds the rollups' deltas (see
// DB.FoldRollups): Start it once per process; replicas on one PostgreSQL
// fold safely side by side.
type Folder struct{ batchLoop }

// NewFolder returns a stopped folder over db.
func NewFolder(st payd.ListStore, clk clock.Clock, log *slog.Logger) *Folder {
	return &Folder{batchLoop{what: "folding rollups", every: foldEvery, batch: foldBatch, job: st.FoldRollups, clock: clk, log: log}}
}
