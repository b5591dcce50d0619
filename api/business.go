package api

import (
	"context"
	"net/http"

	"payd"
)

// Businesses of the signed-in person (CONTRACT.md "Accounts and
// sessions", docs/accounts.md): a person creates businesses, owns them and
// acts for one at a time with Service-Business.

// membership is a business the person belongs to, with their role.
type membership struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
	Live bool   `json:"live"`
	// ReferralCode is the business's own code to share; ReferredBy the
	// code that referred it, null for none (docs/accounts.md).
	ReferralCode string  `json:"referral_code"`
	ReferredBy   *string `json:"referred_by"`
	JoinedAt     Time    `json:"joined_at"`
}

type businessRequest struct {
	Name string `json:"name"`
	// ReferralCode names the business whose code referred this one.
	ReferralCode *string `json:"referral_code"`
}

// createBusiness makes a business owned by the signed-in person, with its
// publishable key; secret keys are made when they are needed (POST
// /api-keys), shown once.
func (s *Server) createBusiness(w http.ResponseWriter, r *http.Request) error {
	var req businessRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c := callOf(r.Context())
	now := s.clock.Now()
	b, err := payd.NewBusiness(req.Name, c.user.Email, false, now)
	if err != nil {
		return err
	}
	if b.ReferredBy, err = s.referrerField(r.Context(), req.ReferralCode, nil); err != nil {
		return err
	}
	_, pk := payd.NewAPIKey(b.ID, payd.KeyPublishable, payd.ModeLive, nil, now)
	m := &payd.Membership{BusinessID: b.ID, UserID: c.user.ID, Role: payd.RoleOwner, CreatedAt: now}
	err = s.store.Tx(r.Context(), func(ctx context.Context, q payd.Queries) error {
		if err := q.CreateBusiness(ctx, b); err != nil {
			return err
		}
		if err := q.CreateAPIKey(ctx, pk); err != nil {
			return err
		}
		return q.AddMember(ctx, m)
	})
	if err != nil {
		return err
	}
	c.session.BusinessID = b.ID
	if err := s.store.TouchSession(r.Context(), c.session.ID, c.session.LastSeenAt, b.ID); err != nil && !payd.IsNotFound(err) {
		return err
	}
	out, err := s.toMembership(r.Context(), b, m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, single{out})
	return nil
}

// listBusinesses lists the businesses the person belongs to, oldest first.
func (s *Server) listBusinesses(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	ms, err := s.store.MembershipsByUser(r.Context(), c.user.ID)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(ms))}
	for _, m := range ms {
		b, err := s.store.BusinessByID(r.Context(), m.BusinessID)
		if err != nil {
			return err
		}
		wm, err := s.toMembership(r.Context(), b, m)
		if err != nil {
			return err
		}
		out.Data = append(out.Data, wm)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) toMembership(ctx context.Context, b *payd.Business, m *payd.Membership) (membership, error) {
	ref, err := s.referredBy(ctx, b)
	if err != nil {
		return membership{}, err
	}
	return membership{Kind: "membership", ID: b.ID, Name: b.Name, Role: string(m.Role), Live: b.Live,
		ReferralCode: b.ReferralCode, ReferredBy: ref, JoinedAt: Time(m.CreatedAt)}, nil
}
