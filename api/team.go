package api

import (
	"context"
	"net/http"
	"time"

	"payd"
)

// Teams (docs/accounts.md "Teams"): a business's owner and admins invite
// people by email with a role, change roles and remove members; any member
// sees the team and may leave it; the owner is never removed or demoted.

// Access rules of the team routes: every member reads the team, the roles
// that manage it change it.
var (
	teamRead   = access{sessionOnly: true}
	teamManage = access{sessionOnly: true, may: payd.MemberRole.ManagesTeam}
)

// teamMember is a member of the business on the wire.
type teamMember struct {
	Kind   string `json:"kind"`
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Name   string `json:"name"`
	Role   string `json:"role"`
	// You marks the person asking.
	You      bool `json:"you"`
	JoinedAt Time `json:"joined_at"`
}

func toTeamMember(m *payd.TeamMember, you string) teamMember {
	return teamMember{Kind: "team_member", UserID: m.UserID, Email: m.Email, Name: m.Name, Role: string(m.Role),
		You: m.UserID == you, JoinedAt: Time(m.CreatedAt)}
}

// invitation is a pending invitation on the wire; its token is only in
// the email.
type invitation struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	Status    string `json:"status"`
	InvitedBy string `json:"invited_by"`
	CreatedAt Time   `json:"created_at"`
	ExpiresAt Time   `json:"expires_at"`
}

// toInvitation renders an invitation as it stands at now: a pending one
// past its expiry shows as expired.
func toInvitation(i *payd.Invitation, now time.Time) invitation {
	status := string(i.Status)
	if i.Status == payd.InvitationPending && !now.Before(i.ExpiresAt) {
		status = "expired"
	}
	return invitation{ID: i.ID, Kind: "invitation", Email: i.Email, Role: string(i.Role), Status: status,
		InvitedBy: i.InvitedBy, CreatedAt: Time(i.CreatedAt), ExpiresAt: Time(i.ExpiresAt)}
}

type inviteRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

type roleRequest struct {
	Role string `json:"role"`
}

type acceptRequest struct {
	Token string `json:"token"`
}

// invitationPath is the dashboard page an invitation's link opens; it
// signs the person in (or up) and then accepts with the token, which
// travels in the fragment, as reset and undo links' do, so it never
// reaches a proxy's log or a Referer header.
const invitationPath = "/dashboard/invitations/accept#token="

// listMembers serves GET /team/members, oldest first.
func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	ms, err := s.store.TeamMembers(r.Context(), c.biz.ID)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(ms))}
	for _, m := range ms {
		out.Data = append(out.Data, toTeamMember(m, c.user.ID))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// invite serves POST /team/invitations: a pending invitation, emailed
// with its link, replacing an earlier one to the same address.
func (s *Server) invite(w http.ResponseWriter, r *http.Request) error {
	var req inviteRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	role, err := payd.ParseRole(req.Role)
	if err != nil {
		return err
	}
	c := callOf(r.Context())
	now := s.clock.Now()
	token, inv, err := payd.NewInvitation(c.biz.ID, req.Email, role, c.user.ID, now)
	if err != nil {
		return err
	}
	if err := s.mailable(); err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := s.invitable(ctx, q, inv, now); err != nil {
			return nil, err
		}
		if err := q.CreateInvitation(ctx, inv); err != nil {
			return nil, err
		}
		e, err := s.opts.Letters.Invitation(inv.Email, inviterOf(c.user), c.biz.Name, role,
			s.opts.PublicURL+invitationPath+token, now)
		if err != nil {
			return nil, err
		}
		return toInvitation(inv, now), q.CreateEmail(ctx, e)
	})
}

// invitable refuses an invitation to someone already in the team, and
// one over the business's daily bounds (too_many_emails).
func (s *Server) invitable(ctx context.Context, q payd.Queries, inv *payd.Invitation, now time.Time) error {
	u, err := q.UserByEmail(ctx, inv.Email)
	if err == nil {
		if _, err = q.Member(ctx, inv.BusinessID, u.ID); err == nil {
			return payd.FieldError("email", "%s is already a member of this business", inv.Email)
		}
	}
	if err != nil && !payd.IsNotFound(err) {
		return err
	}
	day := now.Add(-24 * time.Hour)
	all, err := q.CountInvitations(ctx, inv.BusinessID, "", day)
	if err != nil {
		return err
	}
	// An address's invitations count across businesses (anyone can make
	// a business), from the outbox.
	to, err := q.CountEmails(ctx, inv.Email, []string{payd.EmailInvitation}, day)
	if err != nil {
		return err
	}
	if all >= payd.InvitationsPerDay || to >= payd.InvitationsPerAddressDay {
		return payd.TooManyEmails(24*time.Hour, "as many invitations as may go out today have been sent (50 per business, 5 to one address from all businesses); try again tomorrow")
	}
	return nil
}

// inviterOf names the inviter in the email: their name and address, so
// that a name alone cannot pass for someone else.
func inviterOf(u *payd.User) string {
	if u.Name == "" {
		return u.Email
	}
	return u.Name + " (" + u.Email + ")"
}

// listInvitations serves GET /team/invitations: the pending ones, expired
// ones too, newest first.
func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request) error {
	invs, err := s.store.PendingInvitations(r.Context(), callOf(r.Context()).biz.ID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	out := objectList{Data: make([]any, 0, len(invs))}
	for _, i := range invs {
		out.Data = append(out.Data, toInvitation(i, now))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// withdrawInvitation serves DELETE /team/invitations/{id}: its link stops
// working; a second DELETE is 404.
func (s *Server) withdrawInvitation(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.store.EndInvitation(r.Context(), callOf(r.Context()).biz.ID, id, payd.InvitationRevoked, s.clock.Now()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{deletedObject{ID: id, Kind: "invitation", Deleted: true}})
	return nil
}

// acceptInvitation serves POST /invitations/accept: the signed-in person
// whose address the invitation was sent to becomes a member with its
// role. Someone already a member keeps their role.
func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	var req acceptRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if !validToken(req.Token) {
		return payd.InvalidInvitation()
	}
	c := callOf(r.Context())
	now := s.clock.Now()
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		inv, err := q.InvitationByToken(ctx, payd.SecretHash(req.Token))
		if payd.IsNotFound(err) {
			return nil, payd.InvalidInvitation()
		} else if err != nil {
			return nil, err
		}
		if err := inv.AcceptableBy(c.user, now); err != nil {
			return nil, err
		}
		if err := q.EndInvitation(ctx, inv.BusinessID, inv.ID, payd.InvitationAccepted, now); payd.IsNotFound(err) {
			return nil, payd.InvalidInvitation()
		} else if err != nil {
			return nil, err
		}
		m, err := q.Member(ctx, inv.BusinessID, c.user.ID)
		if payd.IsNotFound(err) {
			m = &payd.Membership{BusinessID: inv.BusinessID, UserID: c.user.ID, Role: inv.Role, CreatedAt: now}
			err = q.AddMember(ctx, m)
		}
		if err != nil {
			return nil, err
		}
		b, err := q.BusinessByID(ctx, inv.BusinessID)
		if err != nil {
			return nil, err
		}
		// The referrer is read in this transaction (ctx carries it).
		return s.toMembership(ctx, b, m)
	})
}

// updateMember serves PATCH /team/members/{user_id}: a new role (admin,
// developer or viewer); the owner's never changes.
func (s *Server) updateMember(w http.ResponseWriter, r *http.Request) error {
	var req roleRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	role, err := payd.ParseRole(req.Role)
	if err != nil {
		return err
	}
	c := callOf(r.Context())
	id := r.PathValue("user_id")
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		m, err := q.Member(ctx, c.biz.ID, id)
		if err != nil {
			return nil, err
		}
		if err := m.OwnerProtected(); err != nil {
			return nil, err
		}
		if err := q.SetMemberRole(ctx, c.biz.ID, id, role); err != nil {
			return nil, err
		}
		u, err := q.UserByID(ctx, id)
		if err != nil {
			return nil, err
		}
		m.Role = role
		return toTeamMember(&payd.TeamMember{Membership: *m, Email: u.Email, Name: u.Name}, c.user.ID), nil
	})
}

// removeMember serves DELETE /team/members/{user_id}: an owner or admin
// removes a member, or a member leaves; the owner never goes.
func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	id := r.PathValue("user_id")
	if id != c.user.ID && !c.role.ManagesTeam() {
		return payd.Errorf(payd.ErrPermissionDenied, "as %s of this business you can leave it, not remove others", c.role)
	}
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		m, err := q.Member(ctx, c.biz.ID, id)
		if err != nil {
			return nil, err
		}
		if err := m.OwnerProtected(); err != nil {
			return nil, err
		}
		return deletedObject{ID: id, Kind: "team_member", Deleted: true}, q.RemoveMember(ctx, c.biz.ID, id)
	})
}
