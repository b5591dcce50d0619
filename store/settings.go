package store

import (
	"context"
	"encoding/json"
	"strings"

	"payd"
	"payd/money"
)

// CheckoutSettings returns the business's settings; not_found when it never
// saved any.
func (q *queries) CheckoutSettings(ctx context.Context, businessID string) (_ *payd.CheckoutSettings, err error) {
	defer fail(&err, "checkout settings", "store.CheckoutSettings(%s)", businessID)
	s := payd.CheckoutSettings{BusinessID: businessID}
	var rails, assets string
	var updated int64
	err = q.ex.QueryRowContext(ctx, `
		SELECT quote_minutes, collect_email, fee_payer, accepted_rails, accepted_assets, updated_at
		FROM checkout_settings WHERE business_id = $1`, businessID).
		Scan(&s.QuoteMinutes, &s.CollectEmail, &s.FeePayer, &rails, &assets, &updated)
	if err != nil {
		return nil, err
	}
	for _, r := range strings.Split(rails, ",") {
		if r != "" {
			s.AcceptedRails = append(s.AcceptedRails, payd.Rail(r))
		}
	}
	if err := json.Unmarshal([]byte(assets), &s.AcceptedAssets); err != nil {
		return nil, err
	}
	s.UpdatedAt = fromMicros(updated)
	return &s, nil
}

// SaveCheckoutSettings creates or replaces the business's settings in one
// upsert.
func (q *queries) SaveCheckoutSettings(ctx context.Context, s *payd.CheckoutSettings) (err error) {
	defer fail(&err, "checkout settings", "store.SaveCheckoutSettings(%s)", s.BusinessID)
	rails := make([]string, len(s.AcceptedRails))
	for i, r := range s.AcceptedRails {
		rails[i] = string(r)
	}
	assets := s.AcceptedAssets
	if assets == nil {
		assets = map[money.Network][]money.Asset{}
	}
	b, err := json.Marshal(assets)
	if err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO checkout_settings (business_id, quote_minutes, collect_email, fee_payer, accepted_rails,
			accepted_assets, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (business_id) DO UPDATE SET quote_minutes = excluded.quote_minutes,
			collect_email = excluded.collect_email, fee_payer = excluded.fee_payer,
			accepted_rails = excluded.accepted_rails, accepted_assets = excluded.accepted_assets,
			updated_at = excluded.updated_at`,
		s.BusinessID, s.QuoteMinutes, s.CollectEmail, string(s.FeePayer), strings.Join(rails, ","), string(b),
		micros(s.UpdatedAt))
	return err
}

// CheckoutSettings returns the business's settings; not_found when it never
// saved any.
func (db *DB) CheckoutSettings(ctx context.Context, businessID string) (*payd.CheckoutSettings, error) {
	return db.reader(ctx).CheckoutSettings(ctx, businessID)
}

// SaveCheckoutSettings creates or replaces the business's settings.
func (db *DB) SaveCheckoutSettings(ctx context.Context, s *payd.CheckoutSettings) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveCheckoutSettings(ctx, s) })
}
