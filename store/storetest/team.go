package storetest

import (
	"testing"
	"time"

	"payd"
)

func testTeam(t *testing.T, b *bundle) {
	t.Run("Invitations", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		u, _ := payd.NewUser("owner@example.com", "Owner", "", t0)
		must(t, st.CreateUser(ctx, u))
		tok1, first, err := payd.NewInvitation(biz.ID, "Bo@Example.com", payd.RoleDeveloper, u.ID, t0)
		must(t, err)
		must(t, st.CreateInvitation(ctx, first))
		got, err := st.InvitationByToken(ctx, payd.SecretHash(tok1))
		must(t, err)
		if got.ID != first.ID || got.Role != payd.RoleDeveloper || got.Status != payd.InvitationPending ||
			!got.ExpiresAt.Equal(t0.Add(payd.InvitationTTL)) || got.EndedAt != nil || got.Email != "Bo@Example.com" {
			t.Fatalf("InvitationByToken = %+v", got)
		}
		// A second invitation to the address (in any case) replaces the first.
		_, second, _ := payd.NewInvitation(biz.ID, "bo@example.com", payd.RoleViewer, u.ID, t0.Add(time.Minute))
		must(t, st.CreateInvitation(ctx, second))
		_, elsewhere, _ := payd.NewInvitation(other.ID, "bo@example.com", payd.RoleAdmin, u.ID, t0)
		must(t, st.CreateInvitation(ctx, elsewhere))
		got, err = st.InvitationByToken(ctx, payd.SecretHash(tok1))
		must(t, err)
		if got.Status != payd.InvitationReplaced || got.EndedAt == nil || !got.EndedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("replaced invitation = %+v", got)
		}
		pending, err := st.PendingInvitations(ctx, biz.ID)
		must(t, err)
		if len(pending) != 1 || pending[0].ID != second.ID {
			t.Fatalf("PendingInvitations = %+v", pending)
		}
		n, err := st.CountInvitations(ctx, biz.ID, "", t0)
		must(t, err)
		na, err := st.CountInvitations(ctx, biz.ID, "BO@example.com", t0.Add(time.Second))
		must(t, err)
		if n != 2 || na != 1 {
			t.Fatalf("CountInvitations = %d, %d; want 2, 1", n, na)
		}
		wantCode(t, st.EndInvitation(ctx, other.ID, second.ID, payd.InvitationRevoked, t0), payd.ErrNotFound)
		must(t, st.EndInvitation(ctx, biz.ID, second.ID, payd.InvitationAccepted, t0))
		wantCode(t, st.EndInvitation(ctx, biz.ID, second.ID, payd.InvitationRevoked, t0), payd.ErrNotFound)
		_, err = st.InvitationByToken(ctx, payd.SecretHash("nothing"))
		wantCode(t, err, payd.ErrNotFound)
		dup := *elsewhere
		dup.ID = payd.NewID(payd.PrefixInvitation)
		wantCode(t, st.CreateInvitation(ctx, &dup), payd.ErrConflict) // the token hash is unique
	})
	t.Run("Members", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		owner, _ := payd.NewUser("owner@example.com", "Owner", "", t0)
		dev, _ := payd.NewUser("dev@example.com", "Dev", "", t0)
		for i, u := range []*payd.User{owner, dev} {
			must(t, st.CreateUser(ctx, u))
			role := []payd.MemberRole{payd.RoleOwner, payd.RoleDeveloper}[i]
			must(t, st.AddMember(ctx, &payd.Membership{BusinessID: biz.ID, UserID: u.ID, Role: role, CreatedAt: t0.Add(time.Duration(i) * time.Second)}))
		}
		ms, err := st.TeamMembers(ctx, biz.ID)
		must(t, err)
		if len(ms) != 2 || ms[0].UserID != owner.ID || ms[0].Email != "owner@example.com" || ms[1].Name != "Dev" ||
			ms[1].Role != payd.RoleDeveloper || !ms[1].CreatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("TeamMembers = %+v", ms)
		}
		must(t, st.SetMemberRole(ctx, biz.ID, dev.ID, payd.RoleAdmin))
		m, err := st.Member(ctx, biz.ID, dev.ID)
		must(t, err)
		if m.Role != payd.RoleAdmin {
			t.Fatalf("role after SetMemberRole = %s", m.Role)
		}
		wantCode(t, st.SetMemberRole(ctx, biz.ID, "usr_nobody", payd.RoleAdmin), payd.ErrNotFound)
		must(t, st.RemoveMember(ctx, biz.ID, dev.ID))
		wantCode(t, st.RemoveMember(ctx, biz.ID, dev.ID), payd.ErrNotFound)
		_, err = st.Member(ctx, biz.ID, dev.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
}
