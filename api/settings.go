package api

import (
	"context"
	"net/http"

	"payd"
	"payd/money"
)

// checkoutSettings is the wire form of payd.CheckoutSettings. updated_at
// is null while the business still has the defaults.
type checkoutSettings struct {
	Kind           string                          `json:"kind"`
	QuoteMinutes   int                             `json:"quote_minutes"`
	CollectEmail   bool                            `json:"collect_email"`
	FeePayer       money.FeePayer                  `json:"fee_payer"`
	AcceptedRails  []payd.Rail                     `json:"accepted_rails"`
	AcceptedAssets map[money.Network][]money.Asset `json:"accepted_assets"`
	UpdatedAt      *Time                           `json:"updated_at"`
}

func toCheckoutSettings(cs *payd.CheckoutSettings) checkoutSettings {
	out := checkoutSettings{Kind: "checkout_settings", QuoteMinutes: cs.QuoteMinutes, CollectEmail: cs.CollectEmail,
		FeePayer: cs.FeePayer, AcceptedRails: cs.AcceptedRails, AcceptedAssets: cs.AcceptedAssets}
	if !cs.UpdatedAt.IsZero() {
		out.UpdatedAt = timePtr(&cs.UpdatedAt)
	}
	return out
}

// checkoutSettings returns the business's settings, or the defaults when
// it never saved any (without the card rail while no card provider is
// configured).
func (s *Server) checkoutSettings(ctx context.Context, q payd.CheckoutSettingsStore, bizID string) (*payd.CheckoutSettings, error) {
	cs, err := q.CheckoutSettings(ctx, bizID)
	if payd.IsNotFound(err) {
		return s.avail().Defaults(bizID), nil
	}
	return cs, err
}

// getCheckoutSettings serves GET /checkout-settings.
func (s *Server) getCheckoutSettings(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.checkoutSettings(r.Context(), s.store, callOf(r.Context()).biz.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toCheckoutSettings(cs)})
	return nil
}

// patchSettingsRequest is the body of PATCH /checkout-settings: fields
// left out (or null) keep their value; accepted_assets, when sent,
// replaces the whole map.
type patchSettingsRequest struct {
	QuoteMinutes   *int                             `json:"quote_minutes"`
	CollectEmail   *bool                            `json:"collect_email"`
	FeePayer       *money.FeePayer                  `json:"fee_payer"`
	AcceptedRails  *[]payd.Rail                     `json:"accepted_rails"`
	AcceptedAssets *map[money.Network][]money.Asset `json:"accepted_assets"`
}

// apply writes the sent fields over cs.
func (req *patchSettingsRequest) apply(cs *payd.CheckoutSettings) {
	if req.QuoteMinutes != nil {
		cs.QuoteMinutes = *req.QuoteMinutes
	}
	if req.CollectEmail != nil {
		cs.CollectEmail = *req.CollectEmail
	}
	if req.FeePayer != nil {
		cs.FeePayer = *req.FeePayer
	}
	if req.AcceptedRails != nil {
		cs.AcceptedRails = *req.AcceptedRails
	}
	if req.AcceptedAssets != nil {
		cs.AcceptedAssets = *req.AcceptedAssets
	}
}

// patchCheckoutSettings serves PATCH /checkout-settings.
func (s *Server) patchCheckoutSettings(w http.ResponseWriter, r *http.Request) error {
	var req patchSettingsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	bizID := callOf(r.Context()).biz.ID
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		cs, err := s.checkoutSettings(ctx, q, bizID)
		if err != nil {
			return nil, err
		}
		req.apply(cs)
		if err := cs.Validate(); err != nil {
			return nil, err
		}
		if req.AcceptedRails != nil {
			if err := s.avail().CheckRails(cs.AcceptedRails); err != nil {
				return nil, err
			}
		}
		cs.UpdatedAt = s.clock.Now()
		if err := q.SaveCheckoutSettings(ctx, cs); err != nil {
			return nil, err
		}
		return toCheckoutSettings(cs), nil
	})
}
