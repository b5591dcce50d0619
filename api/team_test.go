package api

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

var inviteLink = regexp.MustCompile(`(?m)^http://payd\.test/dashboard/invitations/accept#token=([0-9A-Za-z]+)$`)

// inviteToken reads the token of the newest invitation emailed to the address.
func (b *bundle) inviteToken(t *testing.T, to string) string {
	t.Helper()
	r := b.do(request{method: "GET", path: "/devnet/emails?to=" + url.QueryEscape(to)})
	for _, e := range r.json(t)["data"].([]any) {
		m := e.(map[string]any)
		if m["type"] != payd.EmailInvitation {
			continue
		}
		if l := inviteLink.FindStringSubmatch(m["text"].(string)); l != nil {
			return l[1]
		}
	}
	t.Fatalf("no invitation emailed to %s: %s", to, r.body)
	return ""
}

// invite sends an invitation from br and returns its token.
func (br *browser) invite(email, role string) string {
	br.t.Helper()
	inv := br.call(request{method: "POST", path: "/team/invitations",
		body: fmt.Sprintf(`{"email":%q,"role":%q}`, email, role)}, http.StatusCreated)["data"].(map[string]any)
	if inv["status"] != "pending" || inv["role"] != role || inv["email"] != email {
		br.t.Fatalf("invitation = %v", inv)
	}
	return br.b.inviteToken(br.t, email)
}

// accept accepts an invitation in br.
func (br *browser) accept(token string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/invitations/accept", body: fmt.Sprintf(`{"token":%q}`, token)}, status, code...)
}

// person signs up a new browser with its own session.
func (b *bundle) person(t *testing.T, email string) (*browser, string) {
	t.Helper()
	br := newBrowser(t, b)
	u := br.signUp(email)
	return br, u["id"].(string)
}

func TestTeamInvitations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		owner, ownerID := b.person(t, "owner@example.com")
		biz := owner.newShop("Team Shop")

		// An invitation goes out by email; the invited person accepts it.
		tok := owner.invite("dev@example.com", "developer")
		if got := b.emails(t, "dev@example.com"); len(got) != 1 || got[0] != payd.EmailInvitation {
			t.Fatalf("emails to the invitee = %v", got)
		}
		pending := owner.call(request{method: "GET", path: "/team/invitations"}, http.StatusOK)["data"].([]any)
		if len(pending) != 1 {
			t.Fatalf("GET /team/invitations = %v", pending)
		}
		dev, devID := b.person(t, "dev@example.com")
		m := dev.accept(tok, http.StatusOK)["data"].(map[string]any)
		if m["id"] != biz || m["role"] != "developer" {
			t.Fatalf("accepted membership = %v", m)
		}
		dev.accept(tok, http.StatusBadRequest, payd.ErrInvalidToken) // used
		dev.biz = biz
		members := dev.call(request{method: "GET", path: "/team/members"}, http.StatusOK)["data"].([]any)
		if len(members) != 2 || members[0].(map[string]any)["role"] != "owner" || members[1].(map[string]any)["you"] != true {
			t.Fatalf("GET /team/members = %v", members)
		}
		if len(owner.call(request{method: "GET", path: "/team/invitations"}, http.StatusOK)["data"].([]any)) != 0 {
			t.Fatal("an accepted invitation is still pending")
		}
		// Someone already in the team is not invited again.
		owner.call(request{method: "POST", path: "/team/invitations", body: `{"email":"DEV@example.com","role":"viewer"}`},
			http.StatusBadRequest, payd.ErrInvalidRequest)
		owner.call(request{method: "POST", path: "/team/invitations", body: `{"email":"x@example.com","role":"owner"}`},
			http.StatusBadRequest, payd.ErrInvalidRequest)

		// A link sent to one address does not let another person in; a
		// newer invitation replaces the older; a withdrawn one is dead.
		first := owner.invite("vi@example.com", "admin")
		second := owner.invite("vi@example.com", "viewer")
		eve, _ := b.person(t, "eve@example.com")
		eve.accept(second, http.StatusBadRequest, payd.ErrInvalidToken)
		vi, viID := b.person(t, "vi@example.com")
		vi.accept(first, http.StatusBadRequest, payd.ErrInvalidToken)
		vi.accept(second, http.StatusOK)
		vi.biz = biz
		gone := owner.invite("gone@example.com", "viewer")
		inv := owner.call(request{method: "GET", path: "/team/invitations"}, http.StatusOK)["data"].([]any)[0].(map[string]any)
		owner.call(request{method: "DELETE", path: "/team/invitations/" + inv["id"].(string)}, http.StatusOK)
		owner.call(request{method: "DELETE", path: "/team/invitations/" + inv["id"].(string)}, http.StatusNotFound, payd.ErrNotFound)
		gp, _ := b.person(t, "gone@example.com")
		gp.accept(gone, http.StatusBadRequest, payd.ErrInvalidToken)
		gp.accept("not a token", http.StatusBadRequest, payd.ErrInvalidToken)

		// Roles other than owner and admin do not manage the team.
		for _, br := range []*browser{dev, vi} {
			br.call(request{method: "POST", path: "/team/invitations", body: `{"email":"z@example.com","role":"viewer"}`},
				http.StatusForbidden, payd.ErrPermissionDenied)
			br.call(request{method: "GET", path: "/team/invitations"}, http.StatusForbidden, payd.ErrPermissionDenied)
			br.call(request{method: "PATCH", path: "/team/members/" + ownerID, body: `{"role":"viewer"}`},
				http.StatusForbidden, payd.ErrPermissionDenied)
		}
		dev.call(request{method: "DELETE", path: "/team/members/" + viID}, http.StatusForbidden, payd.ErrPermissionDenied)

		// The owner makes the developer an admin, who then manages the
		// team but can never remove or demote the owner.
		up := owner.call(request{method: "PATCH", path: "/team/members/" + devID, body: `{"role":"admin"}`}, http.StatusOK)["data"].(map[string]any)
		if up["role"] != "admin" || up["user_id"] != devID {
			t.Fatalf("PATCH /team/members = %v", up)
		}
		dev.invite("new@example.com", "viewer")
		dev.call(request{method: "PATCH", path: "/team/members/" + ownerID, body: `{"role":"viewer"}`},
			http.StatusForbidden, payd.ErrPermissionDenied)
		dev.call(request{method: "DELETE", path: "/team/members/" + ownerID}, http.StatusForbidden, payd.ErrPermissionDenied)
		owner.call(request{method: "DELETE", path: "/team/members/" + ownerID}, http.StatusForbidden, payd.ErrPermissionDenied)
		owner.call(request{method: "PATCH", path: "/team/members/usr_nobody", body: `{"role":"viewer"}`}, http.StatusNotFound, payd.ErrNotFound)

		// A member leaves; an admin removes another; both lose the business.
		vi.call(request{method: "DELETE", path: "/team/members/" + viID}, http.StatusOK)
		vi.call(request{method: "GET", path: "/team/members"}, http.StatusForbidden, payd.ErrBusinessForbidden)
		owner.call(request{method: "DELETE", path: "/team/members/" + devID}, http.StatusOK)
		dev.call(request{method: "GET", path: "/payments"}, http.StatusForbidden, payd.ErrBusinessForbidden)

		// Team changes need a recent proof; API keys get session_required.
		b.clock.Advance(payd.ProofTTL + time.Minute)
		owner.call(request{method: "POST", path: "/team/invitations", body: `{"email":"late@example.com","role":"viewer"}`},
			http.StatusForbidden, payd.ErrStepUpRequired)
		tb := b.newBusiness(false)
		r := b.do(request{method: "GET", path: "/team/members", key: tb.live})
		if code, _ := r.errorCode(t); r.status != http.StatusForbidden || code != payd.ErrSessionRequired {
			t.Fatalf("GET /team/members with a key: %d %s", r.status, r.body)
		}
	})
}

func TestInvitationExpires(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		owner, _ := b.person(t, "owner@example.com")
		owner.newShop("Shop")
		tok := owner.invite("late@example.com", "viewer")
		late, _ := b.person(t, "late@example.com")
		b.clock.Advance(payd.InvitationTTL)
		late.signIn("late@example.com", testPassword, http.StatusCreated)
		late.accept(tok, http.StatusBadRequest, payd.ErrInvalidToken)
		owner.signIn("owner@example.com", testPassword, http.StatusCreated)
		inv := owner.call(request{method: "GET", path: "/team/invitations"}, http.StatusOK)["data"].([]any)
		if len(inv) != 1 || inv[0].(map[string]any)["status"] != "expired" {
			t.Fatalf("GET /team/invitations after a week = %v", inv)
		}
		// The business's daily bound on invitations to one address.
		for i := 0; i < payd.InvitationsPerAddressDay; i++ {
			owner.invite("again@example.com", "viewer")
		}
		owner.call(request{method: "POST", path: "/team/invitations", body: `{"email":"again@example.com","role":"viewer"}`},
			http.StatusTooManyRequests, payd.ErrTooManyEmails)
	})
}
