package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
)

// CreateBusiness stores a new business; conflict if its id is taken.
func (q *queries) CreateBusiness(ctx context.Context, b *payd.Business) (err error) {
	defer fail(&err, "business", "store.CreateBusiness(%s)", b.ID)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO businesses (id, name, email, website, support_email, live, suspended_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		b.ID, b.Name, b.Email, b.Website, b.SupportEmail, b.Live, nullMicros(b.SuspendedAt), micros(b.CreatedAt), micros(b.UpdatedAt))
	return err
}

// BusinessByID returns the business; not_found otherwise.
func (q *queries) BusinessByID(ctx context.Context, id string) (_ *payd.Business, err error) {
	defer fail(&err, "business", "store.BusinessByID(%s)", id)
	var b payd.Business
	var suspended sql.NullInt64
	var created, updated int64
	err = q.ex.QueryRowContext(ctx, `
		SELECT id, name, email, website, support_email, live, suspended_at, created_at, updated_at
		FROM businesses WHERE id = $1`, id).
		Scan(&b.ID, &b.Name, &b.Email, &b.Website, &b.SupportEmail, &b.Live, &suspended, &created, &updated)
	if err != nil {
		return nil, err
	}
	b.SuspendedAt, b.CreatedAt, b.UpdatedAt = fromNullMicros(suspended), fromMicros(created), fromMicros(updated)
	return &b, nil
}

// SetBusinessSuspended suspends (at non-nil) or reinstates (nil) a
// business; not_found otherwise.
func (q *queries) SetBusinessSuspended(ctx context.Context, id string, at *time.Time) (err error) {
	defer fail(&err, "business", "store.SetBusinessSuspended(%s)", id)
	return affected(q.ex.ExecContext(ctx, `
		UPDATE businesses SET suspended_at = $2, updated_at = $3 WHERE id = $1`,
		id, nullMicros(at), micros(q.now())))
}
