package api

import (
	"context"
	"encoding/json"
	"net/http"

	"payd"
)

// Referral codes (docs/accounts.md "Referrals"): every business has its
// own code to share; a new business names the code that referred it
// (POST /businesses) and may change it until it has a wallet (PATCH
// /business, referral_locked); anyone can check a code (GET
// /public/referrals/{code}).

// publicReferral is what GET /public/referrals/{code} tells anyone: that
// the code exists, and whose it is.
type publicReferral struct {
	Kind         string `json:"kind"`
	Code         string `json:"code"`
	BusinessName string `json:"business_name"`
}

// referrer returns the business whose referral code code is, nil when
// none is: the code is malformed, unknown, or its business suspended.
func (s *Server) referrer(ctx context.Context, code string) (*payd.Business, error) {
	code, ok := payd.NormalizeReferralCode(code)
	if !ok {
		return nil, nil
	}
	b, err := s.store.BusinessByReferralCode(ctx, code)
	if payd.IsNotFound(err) || err == nil && b.SuspendedAt != nil {
		return nil, nil
	}
	return b, err
}

// referrerField returns the id of the business a request's referral_code
// names: "" for none (absent, null or ""), invalid_request on field
// referral_code for a code no business has, or the business's own.
func (s *Server) referrerField(ctx context.Context, code *string, self *payd.Business) (string, error) {
	if code == nil || *code == "" {
		return "", nil
	}
	ref, err := s.referrer(ctx, *code)
	if err != nil {
		return "", err
	}
	if ref == nil {
		return "", payd.FieldError("referral_code", "no business has this referral code")
	}
	if self != nil && ref.ID == self.ID {
		return "", payd.FieldError("referral_code", "a business cannot name its own referral code")
	}
	return ref.ID, nil
}

// getPublicReferral answers whether a referral code exists, with the
// referring business's name; not_found otherwise.
func (s *Server) getPublicReferral(w http.ResponseWriter, r *http.Request) error {
	b, err := s.referrer(r.Context(), r.PathValue("code"))
	if err != nil {
		return err
	}
	if b == nil {
		return payd.Errorf(payd.ErrNotFound, "no business has this referral code")
	}
	writeJSON(w, http.StatusOK, single{publicReferral{Kind: "referral", Code: b.ReferralCode, BusinessName: b.Name}})
	return nil
}

type businessPatch struct {
	// ReferralCode is the code that referred the business; null or ""
	// clears it.
	ReferralCode *string `json:"referral_code"`
}

// patchBusiness changes the business the session acts for: for now the
// code that referred it, which owners and admins (the route's teamManage)
// may change until the business has a wallet.
func (s *Server) patchBusiness(w http.ResponseWriter, r *http.Request) error {
	var req businessPatch
	if err := decode(r, &req); err != nil {
		return err
	}
	c := callOf(r.Context())
	// Absent is not null: a PATCH without the field must not clear it.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &fields); err != nil || fields["referral_code"] == nil {
		return payd.FieldError("referral_code", "referral_code is required (null or \"\" clears it)")
	}
	ctx := r.Context()
	ref, err := s.referrerField(ctx, req.ReferralCode, c.biz)
	if err != nil {
		return err
	}
	if err := s.store.SetReferrer(ctx, c.biz.ID, ref); err != nil {
		return err
	}
	b, err := s.store.BusinessByID(ctx, c.biz.ID)
	if err != nil {
		return err
	}
	m, err := s.store.Member(ctx, b.ID, c.user.ID)
	if err != nil {
		return err
	}
	out, err := s.toMembership(ctx, b, m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{out})
	return nil
}

// referredBy is the referral code of the business that referred b, nil
// when none did.
func (s *Server) referredBy(ctx context.Context, b *payd.Business) (*string, error) {
	if b.ReferredBy == "" {
		return nil, nil
	}
	ref, err := s.store.BusinessByID(ctx, b.ReferredBy)
	if err != nil {
		return nil, err
	}
	return &ref.ReferralCode, nil
}
