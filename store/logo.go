package store

import (
	"context"
	"encoding/base64"

	"payd"
)

// CheckoutLogo returns the business's logo; not_found when it has none.
func (q *queries) CheckoutLogo(ctx context.Context, businessID string) (_ *payd.CheckoutLogo, err error) {
	defer fail(&err, "checkout logo", "store.CheckoutLogo(%s)", businessID)
	return q.logo(ctx, `WHERE business_id = $1`, businessID)
}

// CheckoutLogoByDigest returns a logo by its digest; not_found when no
// business has it.
func (q *queries) CheckoutLogoByDigest(ctx context.Context, digest string) (_ *payd.CheckoutLogo, err error) {
	defer fail(&err, "checkout logo", "store.CheckoutLogoByDigest(%s)", digest)
	return q.logo(ctx, `WHERE digest = $1 ORDER BY business_id LIMIT 1`, digest)
}

func (q *queries) logo(ctx context.Context, where string, arg string) (*payd.CheckoutLogo, error) {
	l := payd.CheckoutLogo{}
	var data string
	var updated int64
	err := q.ex.QueryRowContext(ctx, `SELECT business_id, digest, content_type, data, updated_at FROM checkout_logos `+where, arg).
		Scan(&l.BusinessID, &l.Digest, &l.ContentType, &data, &updated)
	if err != nil {
		return nil, err
	}
	if l.Data, err = base64.StdEncoding.DecodeString(data); err != nil {
		return nil, err
	}
	l.UpdatedAt = fromMicros(updated)
	return &l, nil
}

// SaveCheckoutLogo creates or replaces the business's logo.
func (q *queries) SaveCheckoutLogo(ctx context.Context, l *payd.CheckoutLogo) (err error) {
	defer fail(&err, "checkout logo", "store.SaveCheckoutLogo(%s)", l.BusinessID)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO checkout_logos (business_id, digest, content_type, data, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (business_id) DO UPDATE SET digest = excluded.digest, content_type = excluded.content_type,
			data = excluded.data, updated_at = excluded.updated_at`,
		l.BusinessID, l.Digest, l.ContentType, base64.StdEncoding.EncodeToString(l.Data), micros(l.UpdatedAt))
	return err
}

// DeleteCheckoutLogo removes the business's logo, if any.
func (q *queries) DeleteCheckoutLogo(ctx context.Context, businessID string) (err error) {
	defer fail(&err, "checkout logo", "store.DeleteCheckoutLogo(%s)", businessID)
	_, err = q.ex.ExecContext(ctx, `DELETE FROM checkout_logos WHERE business_id = $1`, businessID)
	return err
}

// CheckoutLogo returns the business's logo; not_found when it has none.
func (db *DB) CheckoutLogo(ctx context.Context, businessID string) (*payd.CheckoutLogo, error) {
	return db.reader(ctx).CheckoutLogo(ctx, businessID)
}

// CheckoutLogoByDigest returns a logo by its digest.
func (db *DB) CheckoutLogoByDigest(ctx context.Context, digest string) (*payd.CheckoutLogo, error) {
	return db.reader(ctx).CheckoutLogoByDigest(ctx, digest)
}

// SaveCheckoutLogo creates or replaces the business's logo.
func (db *DB) SaveCheckoutLogo(ctx context.Context, l *payd.CheckoutLogo) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveCheckoutLogo(ctx, l) })
}

// DeleteCheckoutLogo removes the business's logo, if any.
func (db *DB) DeleteCheckoutLogo(ctx context.Context, businessID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.DeleteCheckoutLogo(ctx, businessID) })
}
