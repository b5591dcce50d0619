package web

import (
	"net/http"
	"net/url"
	"strings"
)

// The team of a business (/dashboard/{biz}/team, docs/accounts.md
// "Teams"): its members and their roles, and the invitations waiting.

type dashMember struct {
	UserID   string `json:"user_id"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	You      bool   `json:"you"`
	JoinedAt string `json:"joined_at"`
}

type dashInvitation struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
}

// teamPage is the team page.
type teamPage struct {
	Members     []dashMember
	Invitations []dashInvitation
	// Manages says the person may invite, change roles and remove
	// (owner, admin).
	Manages bool
	// Roles are the roles a person may be given.
	Roles []string
	// InviteEmail and InviteRole refill the invitation form after a
	// refusal; Form names the form a refusal is about (invite, member).
	InviteEmail, InviteRole, Form, Member string
}

var givenRoles = []string{"admin", "developer", "viewer"}

// showTeam serves GET /dashboard/{biz}/team.
func (h *Handler) showTeam(d *dashReq) { d.team(http.StatusOK, teamPage{}) }

func (d *dashReq) team(status int, p teamPage) {
	p.Manages = d.page.Biz.Role == "owner" || d.page.Biz.Role == "admin"
	p.Roles = givenRoles
	if p.InviteRole == "" {
		p.InviteRole = "developer"
	}
	var members struct {
		Data []dashMember `json:"data"`
	}
	if err := d.call("GET", "/team/members", nil, whole{&members}); err != nil {
		d.fail(err)
		return
	}
	p.Members = members.Data
	if p.Manages {
		var inv struct {
			Data []dashInvitation `json:"data"`
		}
		if err := d.call("GET", "/team/invitations", nil, whole{&inv}); err != nil {
			d.fail(err)
			return
		}
		p.Invitations = inv.Data
	}
	d.page.Title, d.page.Section, d.page.Data = "Team", "team", p
	d.render(status, "dash/team.html")
}

// invite serves POST /dashboard/{biz}/team/invitations.
func (h *Handler) invite(d *dashReq) {
	p := teamPage{InviteEmail: strings.TrimSpace(d.form.Get("email")), InviteRole: d.form.Get("role"), Form: "invite"}
	if err := d.call("POST", "/team/invitations", map[string]string{"email": p.InviteEmail, "role": p.InviteRole}, nil); err != nil {
		if d.refuse(err) {
			d.team(d.status(err), p)
		}
		return
	}
	d.redirect(d.bizPath("/team"), "invitation_sent")
}

// withdrawInvitation serves POST /dashboard/{biz}/team/invitations/{id}/withdraw.
func (h *Handler) withdrawInvitation(d *dashReq) {
	if err := d.call("DELETE", "/team/invitations/"+url.PathEscape(d.r.PathValue("id")), nil, nil); err != nil {
		if d.refuse(err) {
			d.team(d.status(err), teamPage{Form: "invitations"})
		}
		return
	}
	d.redirect(d.bizPath("/team"), "invitation_withdrawn")
}

// changeRole serves POST /dashboard/{biz}/team/members/{user}/role.
func (h *Handler) changeRole(d *dashReq) {
	user := d.r.PathValue("user")
	if err := d.call("PATCH", "/team/members/"+url.PathEscape(user), map[string]string{"role": d.form.Get("role")}, nil); err != nil {
		if d.refuse(err) {
			d.team(d.status(err), teamPage{Form: "member", Member: user})
		}
		return
	}
	d.redirect(d.bizPath("/team"), "role_changed")
}

// removeMember serves POST /dashboard/{biz}/team/members/{user}/remove:
// removing someone, or leaving when it is the person themselves.
func (h *Handler) removeMember(d *dashReq) {
	user := d.r.PathValue("user")
	if err := d.call("DELETE", "/team/members/"+url.PathEscape(user), nil, nil); err != nil {
		if d.refuse(err) {
			d.team(d.status(err), teamPage{Form: "member", Member: user})
		}
		return
	}
	if user == d.page.Me.ID {
		d.redirect(dashBase+"/", "team_left")
		return
	}
	d.redirect(d.bizPath("/team"), "member_removed")
}
