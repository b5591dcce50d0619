package web

import (
	"net/http"
	"strings"
)

// Password reset (docs/accounts.md "Recovery"). The emailed link is
// /dashboard/reset#token=…: the token is in the fragment, which browsers
// never send, so no server or proxy logs it. dashboard.js moves it into
// the form's token field; without script the person pastes it.

// resetPage is the reset page: the form that asks for a link, and the
// one that spends a link on a new password. Sent is set once a link was
// asked for.
type resetPage struct {
	Email, Token string
	Sent         bool
	Challenge    challengeField
}

// showReset serves GET /dashboard/reset.
func (h *Handler) showReset(d *dashReq) { d.resetForm(http.StatusOK, resetPage{}) }

func (d *dashReq) resetForm(status int, p resetPage) {
	if !p.Sent {
		p.Challenge = d.challenge("reset")
	}
	d.page.Title, d.page.Data = "Reset your password", p
	d.render(status, "dash/reset.html")
}

// askReset serves POST /dashboard/reset: POST /password-resets, which
// answers alike whether or not the address has an account.
func (h *Handler) askReset(d *dashReq) {
	p := resetPage{Email: strings.TrimSpace(d.form.Get("email"))}
	err := d.callWith("POST", "/password-resets", d.challengeHeader(), map[string]string{"email": p.Email}, nil)
	if err != nil {
		d.gettingInRefused(err, func(status int) { d.resetForm(status, p) })
		return
	}
	p.Sent = true
	d.resetForm(http.StatusOK, p)
}

// confirmReset serves POST /dashboard/reset/confirm: the link is spent on
// the new password (POST /password-resets/confirm), which refuses a used
// or expired link itself; one call, so the form counts once against the
// account_links limit. It signs nobody in: the person signs in with the
// new password, two-step sign-in included.
func (h *Handler) confirmReset(d *dashReq) {
	tok := strings.TrimSpace(d.form.Get("token"))
	err := d.call("POST", "/password-resets/confirm", map[string]string{"token": tok, "password": d.form.Get("password")}, nil)
	if err != nil {
		d.gettingInRefused(err, func(status int) { d.resetForm(status, resetPage{Token: tok}) })
		return
	}
	d.redirect(dashBase+"/sign-in", "password_reset")
}
