package web

import (
	"net/http"
	"strings"
)

// The person's own profile (/dashboard/account): the name, the email
// address (changed with a code emailed to the new one), the password and
// the theme.

// groupsOfFour spaces a secret every four characters, for typing in.
func groupsOfFour(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// profilePage is the profile page; EmailSent, when set, is the address a
// code was just sent to, and the page asks for it.
type profilePage struct {
	Name      string
	NewEmail  string
	EmailSent string
	// Form names the form a refusal is about: name, email, verify,
	// password.
	Form string
}

func (d *dashReq) profile(status int, p profilePage) {
	d.page.Title, d.page.Data = "Profile", p
	d.render(status, "dash/account.html")
}

// showProfile serves GET /dashboard/account.
func (h *Handler) showProfile(d *dashReq) {
	d.profile(http.StatusOK, profilePage{Name: d.page.Me.Name})
}

// saveName serves POST /dashboard/account/name: PATCH /me.
func (h *Handler) saveName(d *dashReq) {
	p := profilePage{Name: strings.TrimSpace(d.form.Get("name")), Form: "name"}
	if err := d.call("PATCH", "/me", map[string]string{"name": p.Name}, nil); err != nil {
		if d.refuse(err) {
			d.profile(d.status(err), p)
		}
		return
	}
	d.redirect(dashBase+"/account", "name_saved")
}

// changeEmail serves POST /dashboard/account/email: POST /me/email sends
// a code to the new address, and the answer asks for it.
func (h *Handler) changeEmail(d *dashReq) {
	p := profilePage{Name: d.page.Me.Name, NewEmail: strings.TrimSpace(d.form.Get("email")), Form: "email"}
	body := map[string]any{"email": p.NewEmail}
	if d.page.Me.HasPassword {
		body["current_password"] = d.form.Get("current_password")
	}
	var out struct {
		Email string `json:"email"`
	}
	if err := d.call("POST", "/me/email", body, &out); err != nil {
		if d.refuse(err) {
			d.profile(d.status(err), p)
		}
		return
	}
	p.EmailSent, p.Form = out.Email, ""
	d.page.Flash = dashFlash["email_code_sent"]
	d.profile(http.StatusOK, p)
}

// verifyEmail serves POST /dashboard/account/email/verify: the code of
// POST /me/email/verify finishes the change.
func (h *Handler) verifyEmail(d *dashReq) {
	p := profilePage{Name: d.page.Me.Name, EmailSent: d.form.Get("new_email"), Form: "verify"}
	if err := d.call("POST", "/me/email/verify", map[string]string{"code": strings.TrimSpace(d.form.Get("code"))}, nil); err != nil {
		if d.refuse(err) {
			d.profile(d.status(err), p)
		}
		return
	}
	d.redirect(dashBase+"/account", "email_changed")
}

// resendEmail serves POST /dashboard/account/email/resend.
func (h *Handler) resendEmail(d *dashReq) {
	p := profilePage{Name: d.page.Me.Name, EmailSent: d.form.Get("new_email"), Form: "verify"}
	if err := d.call("POST", "/me/email/resend", nil, nil); err != nil {
		if d.refuse(err) {
			d.profile(d.status(err), p)
		}
		return
	}
	p.Form = ""
	d.page.Flash = dashFlash["email_code_sent"]
	d.profile(http.StatusOK, p)
}

// changePassword serves POST /dashboard/account/password. The API ends
// every other session; this one stays signed in.
func (h *Handler) changePassword(d *dashReq) {
	p := profilePage{Name: d.page.Me.Name, Form: "password"}
	body := map[string]any{"password": d.form.Get("password")}
	if d.page.Me.HasPassword {
		body["current_password"] = d.form.Get("current_password")
	}
	if err := d.call("POST", "/me/password", body, nil); err != nil {
		if d.refuse(err) {
			d.profile(d.status(err), p)
		}
		return
	}
	d.redirect(dashBase+"/account", "password_changed")
}

// saveTheme serves POST /dashboard/account/theme: the choice is a cookie
// of this browser's (web/dash.go reads it into page.Theme), not the
// account's, so each device may keep its own. It is Secure when the
// form came from an https page (its Origin, which the cross-origin check
// has matched with the public URL).
func (h *Handler) saveTheme(d *dashReq) {
	c := &http.Cookie{Name: "payd_theme", Path: dashBase, SameSite: http.SameSiteLaxMode, HttpOnly: true,
		Secure: d.r.TLS != nil || strings.HasPrefix(d.r.Header.Get("Origin"), "https:")}
	switch v := d.form.Get("theme"); v {
	case "light", "dark":
		c.Value, c.MaxAge = v, 365*24*3600
	default:
		c.MaxAge = -1
	}
	http.SetCookie(d.w, c)
	d.redirect(dashBase+"/account", "theme_saved")
}
