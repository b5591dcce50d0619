package payd

import (
	"testing"
	"time"
)

// FuzzKeyRequestPermissions checks the dashboard's permissions object: any
// areas and levels give a clean invalid_request or permissions that name
// only known areas and round-trip through ParsePermissions.
func FuzzKeyRequestPermissions(f *testing.F) {
	f.Add("payments", "read", "links", "write")
	f.Add("payments:read", "x", "", "")
	f.Add("wallet", "write", "wallet", "read")
	f.Fuzz(func(t *testing.T, a1, l1, a2, l2 string) {
		kind, mode := KeyRestricted, ModeTest
		req := KeyRequest{Kind: &kind, Mode: &mode, Permissions: map[string]string{a1: l1, a2: l2}}
		_, k, err := NewDashboardKey("biz_x", req, time.Unix(0, 0))
		if err != nil {
			if ErrorCode(err) != ErrInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		again, err := ParsePermissions(k.Permissions.String())
		if err != nil || again.String() != k.Permissions.String() {
			t.Fatalf("permissions %v do not round-trip: %v", k.Permissions, err)
		}
	})
}

// TestRoleCovers checks who may hand out which key.
func TestRoleCovers(t *testing.T) {
	secret := &APIKey{Kind: KeySecret}
	links := &APIKey{Kind: KeyRestricted, Permissions: Permissions{AreaLinks: AccessWrite}}
	wallet := &APIKey{Kind: KeyRestricted, Permissions: Permissions{AreaWallet: AccessWrite}}
	for _, c := range []struct {
		role             MemberRole
		secret, links, w bool
	}{
		{RoleOwner, true, true, true}, {RoleAdmin, true, true, true},
		{RoleDeveloper, false, true, false}, {RoleViewer, false, false, false},
	} {
		if c.role.Covers(secret) != c.secret || c.role.Covers(links) != c.links || c.role.Covers(wallet) != c.w {
			t.Errorf("%s covers secret/links:write/wallet:write = %v/%v/%v, want %v/%v/%v", c.role,
				c.role.Covers(secret), c.role.Covers(links), c.role.Covers(wallet), c.secret, c.links, c.w)
		}
	}
}

// TestInvitationAcceptableBy checks an invitation's address, status and expiry.
func TestInvitationAcceptableBy(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	_, inv, err := NewInvitation("biz_x", "Bo@Example.com", RoleViewer, "usr_a", now)
	if err != nil {
		t.Fatal(err)
	}
	bo, eve := &User{Email: "bo@example.com"}, &User{Email: "eve@example.com"}
	if err := inv.AcceptableBy(bo, now.Add(InvitationTTL-time.Second)); err != nil {
		t.Fatalf("acceptable: %v", err)
	}
	for name, err := range map[string]error{
		"expired":       inv.AcceptableBy(bo, now.Add(InvitationTTL)),
		"other address": inv.AcceptableBy(eve, now),
	} {
		if ErrorCode(err) != ErrInvalidToken {
			t.Errorf("%s: %v, want invalid_token", name, err)
		}
	}
	inv.Status = InvitationReplaced
	if ErrorCode(inv.AcceptableBy(bo, now)) != ErrInvalidToken {
		t.Error("a replaced invitation is acceptable")
	}
	if _, _, err := NewInvitation("biz_x", "bo@example.com", RoleOwner, "usr_a", now); ErrorCode(err) != ErrInvalidRequest {
		t.Errorf("an invitation as owner: %v", err)
	}
}
