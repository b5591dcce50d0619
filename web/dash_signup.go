package web

import (
	"errors"
	"net/http"
	"strings"
)

// signUpPage is the sign-up form.
type signUpPage struct {
	Name, Email, Next string
	Challenge         challengeField
}

// signUpCodePage asks for the code a sign-up emailed. AskPassword shows
// the password field, which a sign-up finished in another browser than
// the one that started it needs (password_required).
type signUpCodePage struct {
	Email, Next string
	AskPassword bool
}

// afterSignUp is where a new account goes: back to an invitation it came
// from, or to make its first business.
func afterSignUp(next string) string {
	if next == "" {
		return dashBase + "/businesses/new"
	}
	return safeNext(next)
}

// showSignUp serves GET /dashboard/sign-up.
func (h *Handler) showSignUp(d *dashReq) {
	d.signUpForm(http.StatusOK, signUpPage{Next: d.r.URL.Query().Get("next")})
}

func (d *dashReq) signUpForm(status int, p signUpPage) {
	if p.Next != "" {
		p.Next = safeNext(p.Next)
	}
	p.Challenge = d.challenge("signup")
	d.page.Title, d.page.Data = "Create an account", p
	d.render(status, "dash/signup.html")
}

func (d *dashReq) signUpCodeForm(status int, p signUpCodePage) {
	d.page.Title, d.page.Data = "Check your email", p
	d.render(status, "dash/signup_code.html")
}

// signUp serves POST /dashboard/sign-up: POST /accounts, whose code is
// asked next. The API sets the sign-up cookie that binds the code to
// this browser.
func (h *Handler) signUp(d *dashReq) {
	p := signUpPage{Name: strings.TrimSpace(d.form.Get("name")), Email: strings.TrimSpace(d.form.Get("email")),
		Next: d.form.Get("next")}
	pw := d.form.Get("password")
	err := d.callWith("POST", "/accounts", d.challengeHeader(),
		map[string]any{"email": p.Email, "name": p.Name, "password": pw}, nil)
	if err != nil {
		d.gettingInRefused(err, func(status int) { d.signUpForm(status, p) })
		return
	}
	next := ""
	if p.Next != "" {
		next = safeNext(p.Next)
	}
	d.signUpCodeForm(http.StatusOK, signUpCodePage{Email: p.Email, Next: next})
}

// verifySignUp serves POST /dashboard/sign-up/verify: POST
// /accounts/verify, which opens a session (201) for the new account.
func (h *Handler) verifySignUp(d *dashReq) {
	p := signUpCodePage{Email: strings.TrimSpace(d.form.Get("email")), Next: d.form.Get("next")}
	body := map[string]any{"email": p.Email, "code": d.form.Get("code")}
	if pw := d.form.Get("password"); pw != "" {
		body["password"] = pw
		p.AskPassword = true
	}
	err := d.call("POST", "/accounts/verify", body, nil)
	if err == nil {
		d.redirect(afterSignUp(p.Next), "signed_up")
		return
	}
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "password_required" {
		p.AskPassword = true
	}
	d.gettingInRefused(err, func(status int) { d.signUpCodeForm(status, p) })
}

// resendSignUp serves POST /dashboard/sign-up/resend: a new code, within
// the wait and quota of POST /accounts/verify/resend.
func (h *Handler) resendSignUp(d *dashReq) {
	p := signUpCodePage{Email: strings.TrimSpace(d.form.Get("email")), Next: d.form.Get("next")}
	err := d.call("POST", "/accounts/verify/resend", map[string]string{"email": p.Email}, nil)
	if err != nil {
		d.gettingInRefused(err, func(status int) { d.signUpCodeForm(status, p) })
		return
	}
	d.page.Flash = dashFlash["code_sent"]
	d.signUpCodeForm(http.StatusOK, p)
}
