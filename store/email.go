package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"payd"
)

// The email outbox (docs/email.md). The rows are the queue, worked like
// webhook_deliveries: the loop claims due rows by setting a lease and
// counting the version on in one UPDATE … RETURNING (with FOR UPDATE SKIP
// LOCKED in its subquery on PostgreSQL), and saves a result only under the
// version it claimed.

// emailColumns are read by every email query, in scanEmail's order.
const emailColumns = `id, recipient, subject, text_body, html_body, kind, status, attempts, next_attempt_at,
	lease_until, version, sent_at, last_error, created_at, updated_at`

// scanEmail reads one row of emailColumns.
func scanEmail(row rowScanner) (*payd.Email, error) {
	var e payd.Email
	var status string
	var next, lease, sent sql.NullInt64
	var created, updated int64
	err := row.Scan(&e.ID, &e.To, &e.Subject, &e.Text, &e.HTML, &e.Kind, &status, &e.Attempts, &next, &lease,
		&e.Version, &sent, &e.LastError, &created, &updated)
	if err != nil {
		return nil, err
	}
	e.Status = payd.EmailStatus(status)
	e.NextAttemptAt, e.LeaseUntil, e.SentAt = fromNullMicros(next), fromNullMicros(lease), fromNullMicros(sent)
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}

// CreateEmail stores a new email; see payd.EmailStore.
func (q *queries) CreateEmail(ctx context.Context, e *payd.Email) (err error) {
	defer fail(&err, "email", "store.CreateEmail(%s)", e.ID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO emails (id, recipient, recipient_key, subject, text_body, html_body,
			kind, status, attempts, next_attempt_at, lease_until, version, sent_at, last_error, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		e.ID, e.To, payd.EmailKey(e.To), e.Subject, e.Text, e.HTML, e.Kind, string(e.Status), e.Attempts,
		nullMicros(e.NextAttemptAt), nullMicros(e.LeaseUntil), e.Version, nullMicros(e.SentAt), e.LastError,
		micros(e.CreatedAt), micros(e.UpdatedAt))
	return err
}

// ClaimDueEmails leases due, free emails in one statement; see
// payd.EmailStore. The subquery walks the partial index emails_due in due
// order; a claimed row is due again at the lease's end, when it must be
// sent if its holder vanishes (the holder saves the real outcome).
func (q *queries) ClaimDueEmails(ctx context.Context, now, until time.Time, limit int) (_ []*payd.Email, err error) {
	defer fail(&err, "email", "store.ClaimDueEmails")
	lock := ""
	if q.dialect == dialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	es, err := queryAll(ctx, q.ex, scanEmail, `UPDATE emails SET lease_until = $1, next_attempt_at = $1,
			version = version + 1
		WHERE id IN (SELECT id FROM emails WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= $2
			AND (lease_until IS NULL OR lease_until <= $2) ORDER BY next_attempt_at, id LIMIT $3`+lock+`)
		RETURNING `+emailColumns, micros(until), micros(now), limit)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(es, func(a, b *payd.Email) int { // RETURNING keeps no order
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return es, nil
}

// SaveEmail writes e's state under the version its holder claimed.
func (q *queries) SaveEmail(ctx context.Context, e *payd.Email) (err error) {
	defer fail(&err, "email", "store.SaveEmail(%s)", e.ID)
	err = affected(q.ex.ExecContext(ctx, `UPDATE emails SET text_body = $3, html_body = $4, status = $5,
			attempts = $6, next_attempt_at = $7, lease_until = $8, version = version + 1, sent_at = $9,
			last_error = $10, updated_at = $11
		WHERE id = $1 AND version = $2`, e.ID, e.Version, e.Text, e.HTML, string(e.Status), e.Attempts,
		nullMicros(e.NextAttemptAt), nullMicros(e.LeaseUntil), nullMicros(e.SentAt), e.LastError, micros(e.UpdatedAt)))
	if err == sql.ErrNoRows {
		if _, err := q.EmailByID(ctx, e.ID); err != nil {
			return err
		}
		return payd.Errorf(payd.ErrConflict, "email %s was claimed by another holder meanwhile", e.ID)
	}
	if err == nil {
		e.Version++
	}
	return err
}

// EmailByID returns the email; not_found otherwise.
func (q *queries) EmailByID(ctx context.Context, id string) (_ *payd.Email, err error) {
	defer fail(&err, "email", "store.EmailByID(%s)", id)
	return scanEmail(q.ex.QueryRowContext(ctx, `SELECT `+emailColumns+` FROM emails WHERE id = $1`, id))
}

// ListEmails returns up to limit emails to the address, newest first.
func (q *queries) ListEmails(ctx context.Context, to string, limit int) (_ []*payd.Email, err error) {
	defer fail(&err, "email", "store.ListEmails")
	return queryAll(ctx, q.ex, scanEmail, `SELECT `+emailColumns+` FROM emails WHERE recipient_key = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, payd.EmailKey(to), limit)
}

// CreateEmail stores a new email, in ctx's transaction when it carries one.
func (db *DB) CreateEmail(ctx context.Context, e *payd.Email) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateEmail(ctx, e) })
}

// ClaimDueEmails leases due emails; see payd.EmailStore.
func (db *DB) ClaimDueEmails(ctx context.Context, now, until time.Time, limit int) (es []*payd.Email, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		es, err = q.ClaimDueEmails(ctx, now, until, limit)
		return err
	})
	return es, err
}

// SaveEmail writes e under its claimed version. A failed write leaves the
// version as it was, and a write the SQLite writer runs again starts from
// it, as SaveDelivery does.
func (db *DB) SaveEmail(ctx context.Context, e *payd.Email) error {
	v := e.Version
	err := db.write(ctx, func(ctx context.Context, q *queries) error {
		e.Version = v
		return q.SaveEmail(ctx, e)
	})
	if err != nil {
		e.Version = v
	}
	return err
}

// EmailByID returns the email; not_found otherwise.
func (db *DB) EmailByID(ctx context.Context, id string) (*payd.Email, error) {
	return db.reader(ctx).EmailByID(ctx, id)
}

// ListEmails returns up to limit emails to the address, newest first.
func (db *DB) ListEmails(ctx context.Context, to string, limit int) ([]*payd.Email, error) {
	return db.reader(ctx).ListEmails(ctx, to, limit)
}
