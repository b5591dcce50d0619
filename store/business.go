package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
)

// CreateBusiness stores a new business, giving it a referral code when
// it has none (businesses made outside payd.NewBusiness, as payd/seed
// makes them); conflict if its id or referral code is taken.
func (q *queries) CreateBusiness(ctx context.Context, b *payd.Business) (err error) {
	defer fail(&err, "business", "store.CreateBusiness(%s)", b.ID)
	if b.ReferralCode == "" {
		b.ReferralCode = payd.NewReferralCode()
	}
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO businesses (id, name, email, website, support_email, live, suspended_at, referral_code, referred_by,
			created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		b.ID, b.Name, b.Email, b.Website, b.SupportEmail, b.Live, nullMicros(b.SuspendedAt), b.ReferralCode, b.ReferredBy,
		micros(b.CreatedAt), micros(b.UpdatedAt))
	return err
}

const businessColumns = `id, name, email, website, support_email, live, suspended_at, referral_code, referred_by,
	created_at, updated_at`

func scanBusiness(row rowScanner) (*payd.Business, error) {
	var b payd.Business
	var suspended sql.NullInt64
	var created, updated int64
	err := row.Scan(&b.ID, &b.Name, &b.Email, &b.Website, &b.SupportEmail, &b.Live, &suspended, &b.ReferralCode,
		&b.ReferredBy, &created, &updated)
	if err != nil {
		return nil, err
	}
	b.SuspendedAt, b.CreatedAt, b.UpdatedAt = fromNullMicros(suspended), fromMicros(created), fromMicros(updated)
	return &b, nil
}

// BusinessByID returns the business; not_found otherwise.
func (q *queries) BusinessByID(ctx context.Context, id string) (_ *payd.Business, err error) {
	defer fail(&err, "business", "store.BusinessByID(%s)", id)
	return scanBusiness(q.ex.QueryRowContext(ctx, `SELECT `+businessColumns+` FROM businesses WHERE id = $1`, id))
}

// BusinessByReferralCode returns the business whose own referral code is
// code; not_found otherwise.
func (q *queries) BusinessByReferralCode(ctx context.Context, code string) (_ *payd.Business, err error) {
	defer fail(&err, "business", "store.BusinessByReferralCode(%s)", code)
	return scanBusiness(q.ex.QueryRowContext(ctx, `SELECT `+businessColumns+` FROM businesses WHERE referral_code = $1`, code))
}

// SetReferrer sets or clears the business that referred business id. The
// wallet check is part of the update, so a wallet attached meanwhile
// cannot slip between a check and the write: referral_locked when the
// business has (or had) a wallet, not_found when there is no such
// business.
func (q *queries) SetReferrer(ctx context.Context, id, referrerID string) (err error) {
	defer fail(&err, "business", "store.SetReferrer(%s)", id)
	res, err := q.ex.ExecContext(ctx, `
		UPDATE businesses SET referred_by = $2, updated_at = $3
		WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM wallets WHERE business_id = $1)`, id, referrerID, micros(q.now()))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	if _, err := q.BusinessByID(ctx, id); err != nil {
		return err
	}
	return payd.ReferralLocked()
}

// SetBusinessSuspended suspends (at non-nil) or reinstates (nil) a
// business; not_found otherwise.
func (q *queries) SetBusinessSuspended(ctx context.Context, id string, at *time.Time) (err error) {
	defer fail(&err, "business", "store.SetBusinessSuspended(%s)", id)
	return affected(q.ex.ExecContext(ctx, `
		UPDATE businesses SET suspended_at = $2, updated_at = $3 WHERE id = $1`,
		id, nullMicros(at), micros(q.now())))
}
