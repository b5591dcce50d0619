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
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	Live     bool   `json:"live"`
	JoinedAt Time   `json:"joined_at"`
}

type businessRequest struct {
	Name string `json:"name"`
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
	writeJSON(w, http.StatusCreated, single{toMembership(b, m)})
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
		out.Data = append(out.Data, toMembership(b, m))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func toMembership(b *payd.Business, m *payd.Membership) membership {
	return membership{Kind: "membership", ID: b.ID, Name: b.Name, Role: string(m.Role), Live: b.Live, JoinedAt: Time(m.CreatedAt)}
}
