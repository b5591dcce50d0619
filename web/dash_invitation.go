package web

import (
	"net/http"
	"strings"
)

// Accepting an invitation to a business's team: the emailed link is
// /dashboard/invitations/accept#token=…, the token in the fragment as on
// the reset page. Accepting needs a session. A person who is signed out
// signs in or signs up from links that dashboard.js gives the fragment
// to; the sign-in and sign-up forms carry it in their next field (a
// POST body, never a request line), and the 303 after them goes back to
// the invitation with it in the fragment again. Without script the
// person opens the emailed link once more after signing in.

// invitationPage is the accept page: the form for a signed-in person, the
// way in for one who is not.
type invitationPage struct {
	SignedIn bool
	Email    string
}

// showInvitation serves GET /dashboard/invitations/accept.
func (h *Handler) showInvitation(d *dashReq) {
	var p invitationPage
	var ses dashSession
	if err := d.call("GET", "/sessions/current", nil, &ses); err == nil && ses.User != nil {
		p.SignedIn, p.Email = true, ses.User.Email
		d.page.Me = ses.User
	}
	d.invitationForm(http.StatusOK, p)
}

func (d *dashReq) invitationForm(status int, p invitationPage) {
	d.page.Title, d.page.Data = "Join a team", p
	d.render(status, "dash/invitation.html")
}

// acceptInvitation serves POST /dashboard/invitations/accept: POST
// /invitations/accept, then the business's home.
func (h *Handler) acceptInvitation(d *dashReq) {
	var out struct {
		ID string `json:"id"`
	}
	err := d.call("POST", "/invitations/accept", map[string]string{"token": strings.TrimSpace(d.form.Get("token"))}, &out)
	if err == nil {
		d.redirect(dashBase+"/"+out.ID+"/", "invitation_accepted")
		return
	}
	if !d.refuse(err) {
		return
	}
	p := invitationPage{SignedIn: true}
	var ses dashSession
	if d.call("GET", "/sessions/current", nil, &ses) == nil && ses.User != nil {
		p.Email, d.page.Me = ses.User.Email, ses.User
	}
	d.invitationForm(d.status(err), p)
}
