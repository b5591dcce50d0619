package web

import (
	"errors"
	"net/http"
	"strings"
)

// signInPage is the sign-in form.
type signInPage struct {
	Email string
	Next  string
	// Challenge is the bot check the form carries.
	Challenge challengeField
}

// challengeField is the bot check of a getting-in form (docs/bot-check.md):
// with dev tokens (serve --dev) a token the page asked the API for, with
// Turnstile or hCaptcha the provider's widget.
type challengeField struct {
	Kind, SiteKey, Token, Form string
}

// challenge prepares the bot check of form: a dev token is fetched now,
// a widget solves its own in the browser.
func (d *dashReq) challenge(form string) challengeField {
	c := challengeField{Kind: d.h.challenge.Kind, SiteKey: d.h.challenge.SiteKey, Form: form}
	if csp := widgetPolicy(c.Kind); csp != "" {
		d.w.Header().Set("Content-Security-Policy", csp)
	}
	if c.Kind == "dev" {
		var tok struct {
			Token string `json:"token"`
		}
		if err := d.h.api.call(d.r, "POST", "/devnet/challenges", map[string]string{"form": form}, nil, &tok); err == nil {
			c.Token = tok.Token
		}
	}
	return c
}

// widgetOrigins are the origins a provider's widget loads its script and
// frame from (and hCaptcha its styles and calls), as the providers
// document for a Content-Security-Policy.
var widgetOrigins = map[string]string{
	"turnstile": "https://challenges.cloudflare.com",
	"hcaptcha":  "https://hcaptcha.com https://*.hcaptcha.com",
}

// widgetPolicy is the Content-Security-Policy of a page that shows the
// widget of provider kind: the pages' own, with that provider's origins
// allowed for what its widget needs and nothing more; "" for no widget.
func widgetPolicy(kind string) string {
	o := widgetOrigins[kind]
	if o == "" {
		return ""
	}
	csp := strings.Replace(contentSecurityPolicy, "script-src 'self'", "script-src 'self' "+o, 1)
	csp += "; frame-src " + o
	if kind == "hcaptcha" {
		csp = strings.Replace(csp, "style-src 'self'", "style-src 'self' "+o, 1)
		csp = strings.Replace(csp, "connect-src 'self'", "connect-src 'self' "+o, 1)
	}
	return csp
}

// challengeHeader is the Service-Challenge a posted form carries: the dev
// token's field, or the widget's.
func (d *dashReq) challengeHeader() http.Header {
	tok := d.form.Get("challenge_token")
	for _, f := range []string{"cf-turnstile-response", "h-captcha-response"} {
		if tok == "" {
			tok = d.form.Get(f)
		}
	}
	return http.Header{"Service-Challenge": {tok}}
}

// showSignIn serves GET /dashboard/sign-in. A browser already signed in
// goes on to where it was headed.
func (h *Handler) showSignIn(d *dashReq) {
	next := safeNext(d.r.URL.Query().Get("next"))
	var ses dashSession
	if err := d.call("GET", "/sessions/current", nil, &ses); err == nil {
		http.Redirect(d.w, d.r, next, http.StatusSeeOther)
		return
	}
	d.signInForm(http.StatusOK, signInPage{Next: next})
}

func (d *dashReq) signInForm(status int, p signInPage) {
	p.Challenge = d.challenge("signin")
	d.page.Title, d.page.Data = "Sign in", p
	d.render(status, "dash/signin.html")
}

// signIn serves POST /dashboard/sign-in: the password sign-in of
// POST /sessions. With two-step sign-in on, the code is asked next.
func (h *Handler) signIn(d *dashReq) {
	p := signInPage{Email: strings.TrimSpace(d.form.Get("email")), Next: safeNext(d.form.Get("next"))}
	var out struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	}
	err := d.callWith("POST", "/sessions", d.challengeHeader(),
		map[string]string{"email": p.Email, "password": d.form.Get("password")}, &out)
	switch {
	case err == nil && out.Kind == "two_factor_challenge":
		d.twoStepForm(http.StatusOK, twoStepPage{ChallengeID: out.ID, Next: p.Next})
	case err == nil:
		http.Redirect(d.w, d.r, p.Next, http.StatusSeeOther)
	default:
		d.gettingInRefused(err, func(status int) { d.signInForm(status, p) })
	}
}

// signOut serves POST /dashboard/sign-out: the session ends and its
// cookie goes.
func (h *Handler) signOut(d *dashReq) {
	if err := d.call("DELETE", "/sessions/current", nil, nil); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.Code != "unauthenticated" {
			d.fail(err)
			return
		}
	}
	d.redirect(dashBase+"/sign-in", "signed_out")
}

// dashStart serves GET /dashboard/: the home of the business the session
// last acted for, or of its first, or the page that makes one.
func (h *Handler) dashStart(d *dashReq) {
	ses := d.ses
	if len(d.page.Businesses) == 0 {
		d.redirect(dashBase+"/businesses/new", d.r.URL.Query().Get("done"))
		return
	}
	to := d.page.Businesses[0].ID
	for _, b := range d.page.Businesses {
		if ses.BusinessID != nil && b.ID == *ses.BusinessID {
			to = b.ID
		}
	}
	d.redirect(dashBase+"/"+to+"/", d.r.URL.Query().Get("done"))
}
