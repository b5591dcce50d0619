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
		SELECT cs.quote_minutes, cs.collect_email, cs.fee_payer, cs.accepted_rails, cs.accepted_assets,
			cs.display_name, cs.accent_color, b.support_email, cs.updated_at
		FROM checkout_settings cs JOIN businesses b ON b.id = cs.business_id WHERE cs.business_id = $1`, businessID).
		Scan(&s.QuoteMinutes, &s.CollectEmail, &s.FeePayer, &rails, &assets, &s.DisplayName, &s.AccentColor,
			&s.SupportEmail, &updated)
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
// upsert, and writes the support email to the business's row (its only
// home, which the public pages read).
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
			accepted_assets, display_name, accent_color, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (business_id) DO UPDATE SET quote_minutes = excluded.quote_minutes,
			collect_email = excluded.collect_email, fee_payer = excluded.fee_payer,
			accepted_rails = excluded.accepted_rails, accepted_assets = excluded.accepted_assets,
			display_name = excluded.display_name, accent_color = excluded.accent_color,
			updated_at = excluded.updated_at`,
		s.BusinessID, s.QuoteMinutes, s.CollectEmail, string(s.FeePayer), strings.Join(rails, ","), string(b),
		s.DisplayName, s.AccentColor, micros(s.UpdatedAt))
	if err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `UPDATE businesses SET support_email = $2 WHERE id = $1`, s.BusinessID, s.SupportEmail)
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
