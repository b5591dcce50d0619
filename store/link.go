package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"payd"
)

// linkColumns are read by every link query, in scanLink's order.
const linkColumns = `id, business_id, code, name, description, amount, currency, success_url, status,
	archived_at, disabled_at, disabled_reason, payments_count, volume_usd, created_at, updated_at`

// scanLink reads one row of linkColumns.
func scanLink(row rowScanner) (*payd.Link, error) {
	var l payd.Link
	var success sql.NullString
	var archived, disabled sql.NullInt64
	var created, updated int64
	err := row.Scan(&l.ID, &l.BusinessID, &l.Code, &l.Name, &l.Description, &l.Amount, &l.Currency, &success,
		&l.Status, &archived, &disabled, &l.DisabledReason, &l.Stats.Payments, &l.Stats.VolumeUSD, &created, &updated)
	if err != nil {
		return nil, err
	}
	l.SuccessURL = success.String
	l.ArchivedAt, l.DisabledAt = fromNullMicros(archived), fromNullMicros(disabled)
	l.CreatedAt, l.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &l, nil
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateLink stores a new link; conflict if its id or code is taken.
func (q *queries) CreateLink(ctx context.Context, l *payd.Link) (err error) {
	defer fail(&err, "link", "store.CreateLink(%s)", l.ID)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO links (id, business_id, code, name, description, amount, currency, success_url, status,
			archived_at, disabled_at, disabled_reason, payments_count, volume_usd, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		l.ID, l.BusinessID, l.Code, l.Name, l.Description, l.Amount, string(l.Currency), nullString(l.SuccessURL),
		string(l.Status), nullMicros(l.ArchivedAt), nullMicros(l.DisabledAt), l.DisabledReason,
		l.Stats.Payments, l.Stats.VolumeUSD, micros(l.CreatedAt), micros(l.UpdatedAt))
	return err
}

// LinkByID returns the business's link; not_found otherwise.
func (q *queries) LinkByID(ctx context.Context, businessID, id string) (_ *payd.Link, err error) {
	defer fail(&err, "link", "store.LinkByID(%s)", id)
	return q.linkRow(ctx, q.ex.QueryRowContext(ctx, `SELECT `+linkColumns+`
		FROM links WHERE business_id = $1 AND id = $2`+q.lockRow(), businessID, id))
}

// LinkByCode returns the link with the public code, whatever its status,
// with the stats folded so far (see payd.LinkStore); not_found otherwise.
func (q *queries) LinkByCode(ctx context.Context, code string) (_ *payd.Link, err error) {
	defer fail(&err, "link", "store.LinkByCode(%s)", code)
	return scanLink(q.ex.QueryRowContext(ctx, `SELECT `+linkColumns+`
		FROM links WHERE code = $1`+q.lockRow(), code))
}

// UpdateLink writes every mutable field but the stats; not_found, or
// link_disabled when the link was disabled since it was read.
func (q *queries) UpdateLink(ctx context.Context, l *payd.Link) (err error) {
	defer fail(&err, "link", "store.UpdateLink(%s)", l.ID)
	err = affected(q.ex.ExecContext(ctx, `
		UPDATE links SET name = $3, description = $4, amount = $5, currency = $6, success_url = $7,
			status = $8, archived_at = $9, disabled_at = $10, disabled_reason = $11, updated_at = $12
		WHERE business_id = $1 AND id = $2 AND (status <> 'disabled' OR $8 = 'disabled')`,
		l.BusinessID, l.ID, l.Name, l.Description, l.Amount, string(l.Currency), nullString(l.SuccessURL),
		string(l.Status), nullMicros(l.ArchivedAt), nullMicros(l.DisabledAt), l.DisabledReason, micros(l.UpdatedAt)))
	if err == sql.ErrNoRows {
		return q.whyNotChanged(ctx, l.BusinessID, l.ID, (*payd.Link).CheckChange)
	}
	return err
}

// whyNotChanged explains a guarded UPDATE or DELETE of a link that matched
// no row: the link is gone, or check, the domain rule the guard repeats,
// now refuses it.
func (q *queries) whyNotChanged(ctx context.Context, businessID, id string, check func(*payd.Link) error) error {
	l, err := q.LinkByID(ctx, businessID, id)
	if err != nil {
		return err
	}
	if err := check(l); err != nil {
		return err
	}
	return sql.ErrNoRows
}

// AddLinkStats appends d's payments and volume to the link's stats
// (store/rollup.go: the link's row is not locked); not_found otherwise.
func (q *queries) AddLinkStats(ctx context.Context, businessID, id string, d payd.StatsDelta) (err error) {
	defer fail(&err, "link", "store.AddLinkStats(%s)", id)
	return q.addStats(ctx, statsLink, businessID, id, payd.StatsDelta{Payments: d.Payments, VolumeUSD: d.VolumeUSD})
}

// linkRow scans one link and adds its unfolded stats deltas
// (store/rollup.go).
func (q *queries) linkRow(ctx context.Context, row rowScanner) (*payd.Link, error) {
	l, err := scanLink(row)
	if err != nil {
		return nil, err
	}
	return l, q.withPendingLinks(ctx, l.BusinessID, l)
}

// DeleteLink removes a link that is not disabled and has no payments;
// not_found, link_disabled or link_has_payments otherwise.
func (q *queries) DeleteLink(ctx context.Context, businessID, id string) (err error) {
	defer fail(&err, "link", "store.DeleteLink(%s)", id)
	if q.dialect == dialectPostgres {
		// Wait for the payments of the link still running (each holds a
		// key-share lock on its row, see addStats), so that the DELETE,
		// a statement of its own, sees the stats deltas they committed.
		if _, err := q.ex.ExecContext(ctx, `SELECT 1 FROM links WHERE business_id = $1 AND id = $2 FOR UPDATE`,
			businessID, id); err != nil {
			return err
		}
	}
	err = affected(q.ex.ExecContext(ctx, `
		DELETE FROM links WHERE business_id = $1 AND id = $2 AND status <> 'disabled' AND payments_count = 0
			AND NOT EXISTS (SELECT 1 FROM stats_deltas WHERE business_id = $1 AND kind = 'link' AND id = $2 AND payments <> 0)`,
		businessID, id))
	if err == sql.ErrNoRows {
		return q.whyNotChanged(ctx, businessID, id, (*payd.Link).CheckDelete)
	}
	return err
}

// DisableLink disables the link with this id, keeping the first disabled
// time, and returns it; not_found otherwise.
func (q *queries) DisableLink(ctx context.Context, id, reason string, now time.Time) (_ *payd.Link, err error) {
	defer fail(&err, "link", "store.DisableLink(%s)", id)
	err = affected(q.ex.ExecContext(ctx, `
		UPDATE links SET status = 'disabled', disabled_at = COALESCE(disabled_at, $2), disabled_reason = $3,
			updated_at = $2
		WHERE id = $1`, id, micros(now), reason))
	if err != nil {
		return nil, err
	}
	return q.linkRow(ctx, q.ex.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM links WHERE id = $1`, id))
}

// ListLinks returns up to f.Limit of the business's links matching f,
// newest first.
func (q *queries) ListLinks(ctx context.Context, businessID string, f payd.LinkFilter) (_ []*payd.Link, err error) {
	defer fail(&err, "link", "store.ListLinks(%s)", businessID)
	w := newConds(businessID)
	if f.Query != "" {
		p := w.arg(likeContains(f.Query))
		w.add(`(lower(name) LIKE ` + p + ` ESCAPE '\' OR lower(description) LIKE ` + p +
			` ESCAPE '\' OR lower(code) LIKE ` + p + ` ESCAPE '\')`)
	}
	if f.Status != "" {
		w.add(`status = ` + w.arg(string(f.Status)))
	}
	if f.Currency != "" {
		w.add(`currency = ` + w.arg(string(f.Currency)))
	}
	w.created(f.CreatedAfter, f.CreatedBefore, f.AfterCreated, f.AfterID)
	ls, err := queryAll(ctx, q.ex, scanLink, `SELECT `+linkColumns+` FROM links WHERE `+w.sql()+`
		ORDER BY created_at DESC, id DESC LIMIT `+w.arg(f.Limit), w.args...)
	if err != nil {
		return nil, err
	}
	return ls, q.withPendingLinks(ctx, businessID, ls...)
}

// conds builds the WHERE clause of a list query over one business's rows,
// numbering its $N parameters as they are added.
type conds struct {
	parts []string
	args  []any
}

func newConds(businessID string) *conds {
	return &conds{parts: []string{"business_id = $1"}, args: []any{businessID}}
}

// arg adds a parameter and returns its placeholder.
func (c *conds) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

func (c *conds) add(cond string) { c.parts = append(c.parts, cond) }

func (c *conds) sql() string { return strings.Join(c.parts, " AND ") }

// created adds the created range (after inclusive, before exclusive) and
// the page position (strictly older than the last row shown).
func (c *conds) created(after, before *time.Time, posCreated time.Time, posID string) {
	if after != nil {
		c.add("created_at >= " + c.arg(ceilMicros(*after)))
	}
	if before != nil {
		c.add("created_at < " + c.arg(ceilMicros(*before)))
	}
	if posID != "" {
		at, id := c.arg(micros(posCreated)), c.arg(posID)
		c.add("(created_at < " + at + " OR (created_at = " + at + " AND id < " + id + "))")
	}
}

// likeContains is a LIKE pattern (with ESCAPE '\') matching text that
// contains s in lower case.
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// CreateLink stores a new link; conflict if its id or code is taken.
func (db *DB) CreateLink(ctx context.Context, l *payd.Link) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateLink(ctx, l) })
}

// LinkByID returns the business's link; not_found otherwise.
func (db *DB) LinkByID(ctx context.Context, businessID, id string) (*payd.Link, error) {
	return db.reader(ctx).LinkByID(ctx, businessID, id)
}

// LinkByCode returns the link with the public code; not_found otherwise.
func (db *DB) LinkByCode(ctx context.Context, code string) (*payd.Link, error) {
	return db.reader(ctx).LinkByCode(ctx, code)
}

// UpdateLink writes a link's mutable fields; not_found or link_disabled.
func (db *DB) UpdateLink(ctx context.Context, l *payd.Link) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.UpdateLink(ctx, l) })
}

// AddLinkStats adds d to the link's stats; not_found otherwise.
func (db *DB) AddLinkStats(ctx context.Context, businessID, id string, d payd.StatsDelta) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.AddLinkStats(ctx, businessID, id, d) })
}

// DeleteLink removes a link; not_found, link_disabled or link_has_payments.
func (db *DB) DeleteLink(ctx context.Context, businessID, id string) error {
	return db.transact(ctx, func(ctx context.Context, q *queries) error { return q.DeleteLink(ctx, businessID, id) })
}

// ListLinks returns a page of the business's links, newest first.
func (db *DB) ListLinks(ctx context.Context, businessID string, f payd.LinkFilter) ([]*payd.Link, error) {
	return db.reader(ctx).ListLinks(ctx, businessID, f)
}

// DisableLink disables a link whatever its business and returns it; not_found otherwise.
func (db *DB) DisableLink(ctx context.Context, id, reason string, now time.Time) (l *payd.Link, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		l, err = q.DisableLink(ctx, id, reason, now)
		return err
	})
	return l, err
}
