package api

import (
	"context"
	"encoding/base64"
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
	DisplayName    *string                         `json:"display_name"`
	AccentColor    *string                         `json:"accent_color"`
	SupportEmail   *string                         `json:"support_email"`
	LogoURL        *string                         `json:"logo_url"`
	UpdatedAt      *Time                           `json:"updated_at"`
}

func (s *Server) toCheckoutSettings(ctx context.Context, q payd.CheckoutLogoStore, cs *payd.CheckoutSettings) (checkoutSettings, error) {
	out := toCheckoutSettings(cs)
	var err error
	out.LogoURL, err = s.logoURL(ctx, q, cs.BusinessID)
	return out, err
}

// logoURL is the address of the business's logo, nil when it has none.
func (s *Server) logoURL(ctx context.Context, q payd.CheckoutLogoStore, bizID string) (*string, error) {
	l, err := q.CheckoutLogo(ctx, bizID)
	if payd.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u := s.opts.PublicURL + "/static/logo/" + l.Digest + "." + l.Ext()
	return &u, nil
}

func toCheckoutSettings(cs *payd.CheckoutSettings) checkoutSettings {
	out := checkoutSettings{Kind: "checkout_settings", QuoteMinutes: cs.QuoteMinutes, CollectEmail: cs.CollectEmail,
		FeePayer: cs.FeePayer, AcceptedRails: cs.AcceptedRails, AcceptedAssets: cs.AcceptedAssets,
		DisplayName: nilIfEmpty(cs.DisplayName), AccentColor: nilIfEmpty(cs.AccentColor), SupportEmail: nilIfEmpty(cs.SupportEmail)}
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

// callerSettings is checkoutSettings for the business of the call: the
// defaults carry the business's support email, which lives on its row.
func (s *Server) callerSettings(ctx context.Context, q payd.CheckoutSettingsStore) (*payd.CheckoutSettings, error) {
	biz := callOf(ctx).biz
	cs, err := s.checkoutSettings(ctx, q, biz.ID)
	if err == nil && cs.UpdatedAt.IsZero() {
		cs.SupportEmail = biz.SupportEmail
	}
	return cs, err
}

// getCheckoutSettings serves GET /checkout-settings.
func (s *Server) getCheckoutSettings(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.callerSettings(r.Context(), s.store)
	if err != nil {
		return err
	}
	out, err := s.toCheckoutSettings(r.Context(), s.store, cs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{out})
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
	DisplayName    optionalString                   `json:"display_name"`
	AccentColor    optionalString                   `json:"accent_color"`
	SupportEmail   optionalString                   `json:"support_email"`
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
	for _, f := range []struct {
		in  optionalString
		out *string
	}{{req.DisplayName, &cs.DisplayName}, {req.AccentColor, &cs.AccentColor}, {req.SupportEmail, &cs.SupportEmail}} {
		if v := f.in.ptr(); v != nil {
			*f.out = *v
		}
	}
}

// patchCheckoutSettings serves PATCH /checkout-settings.
func (s *Server) patchCheckoutSettings(w http.ResponseWriter, r *http.Request) error {
	var req patchSettingsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		cs, err := s.callerSettings(ctx, q)
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
		return s.toCheckoutSettings(ctx, q, cs)
	})
}

// logoRequest is the body of POST /checkout-settings/logo: the image,
// base64 (standard alphabet, padded).
type logoRequest struct {
	Data string `json:"data"`
}

// putCheckoutLogo serves POST /checkout-settings/logo: the logo is
// checked by decoding it and replaces the one before.
func (s *Server) putCheckoutLogo(w http.ResponseWriter, r *http.Request) error {
	var req logoRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	data, err := base64.StdEncoding.DecodeString(req.Data)
	if err != nil {
		return payd.FieldError("data", "data must be the image in base64")
	}
	l, err := payd.NewCheckoutLogo(callOf(r.Context()).biz.ID, data, s.clock.Now())
	if err != nil {
		if pe, ok := err.(*payd.Error); ok {
			pe.Field = "data"
		}
		return err
	}
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.SaveCheckoutLogo(ctx, l); err != nil {
			return nil, err
		}
		cs, err := s.callerSettings(ctx, q)
		if err != nil {
			return nil, err
		}
		return s.toCheckoutSettings(ctx, q, cs)
	})
}

// deleteCheckoutLogo serves DELETE /checkout-settings/logo.
func (s *Server) deleteCheckoutLogo(w http.ResponseWriter, r *http.Request) error {
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.DeleteCheckoutLogo(ctx, callOf(ctx).biz.ID); err != nil {
			return nil, err
		}
		cs, err := s.callerSettings(ctx, q)
		if err != nil {
			return nil, err
		}
		return s.toCheckoutSettings(ctx, q, cs)
	})
}

// publicLogo is GET /public/checkout-logos/{digest}: the image the
// checkout pages serve at /static/logo/DIGEST.EXT.
type publicLogo struct {
	Kind        string `json:"kind"`
	Digest      string `json:"digest"`
	ContentType string `json:"content_type"`
	Data        string `json:"data"`
}

// getPublicLogo serves GET /public/checkout-logos/{digest}.
func (s *Server) getPublicLogo(w http.ResponseWriter, r *http.Request) error {
	l, err := s.store.CheckoutLogoByDigest(r.Context(), r.PathValue("digest"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{publicLogo{Kind: "checkout_logo", Digest: l.Digest, ContentType: l.ContentType,
		Data: base64.StdEncoding.EncodeToString(l.Data)}})
	return nil
}
