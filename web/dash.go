package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The dashboard (/dashboard/, docs/dashboard.md): where a merchant runs the
// business. Its pages share the checkout pages' stack and, like them, are
// one more client of the JSON API, called in process: the browser's
// session cookie, Origin and Sec-Fetch-Site travel with every call, and
// the API's answers (Set-Cookie included) come back, so no page can skip
// a rule the API keeps. Forms work without JavaScript: a change posts,
// and the page redirects to where the result shows (or renders the
// refusal as a sentence beside the form).

// dashBase is where the dashboard is mounted.
const dashBase = "/dashboard"

// dashPage is what every dashboard template reads.
type dashPage struct {
	Title string
	// Me is the signed-in person; nil on the getting-in pages.
	Me *dashUser
	// Biz is the business the page acts for; nil on the account pages.
	Biz *dashBusiness
	// Businesses are every business the person is a member of (the
	// switcher).
	Businesses []dashBusiness
	// Section is the navigation entry that is current.
	Section string
	// Flash says what the last change did; Error why it was refused, and
	// Field which form field the refusal is about.
	Flash, Error, Field string
	// Path is the page's own address, where its forms post.
	Path string
	// Theme is the person's choice: "light", "dark" or "" for the
	// device's.
	Theme string
	// Data is the page's own part.
	Data any
}

// dashUser is the signed-in person (GET /sessions/current's user).
type dashUser struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	HasPassword bool   `json:"has_password"`
	TwoFactor   bool   `json:"two_factor"`
}

// dashBusiness is a business the person belongs to (GET /businesses).
type dashBusiness struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
	Live bool   `json:"live"`
}

// dashList is a list's envelope (spec 2.1), read with whole{}.
type dashList[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// next is the cursor of the page after this one, "" on the last.
func (l *dashList[T]) next() string {
	if l.HasMore && l.NextCursor != nil {
		return *l.NextCursor
	}
	return ""
}

// dashSession is GET /sessions/current.
type dashSession struct {
	ID          string    `json:"id"`
	BusinessID  *string   `json:"business_id"`
	ProvenUntil *string   `json:"proven_until"`
	User        *dashUser `json:"user"`
}

// dashReq is one dashboard request: the page's data and what its API
// calls carry. Handlers build on it and end with one of render, redirect
// or fail.
type dashReq struct {
	h *Handler
	w http.ResponseWriter
	r *http.Request
	// biz, when set, is sent as Service-Business.
	biz string
	// form is the parsed body of a POST.
	form url.Values
	// ses is the session, once signIn has read it.
	ses  dashSession
	page dashPage
}

// dashRoute wraps a dashboard page handler: the page's security headers,
// and for a POST the cross-origin check and a parsed form.
type dashHandler func(d *dashReq)

func (h *Handler) dashReq(w http.ResponseWriter, r *http.Request) *dashReq {
	d := &dashReq{h: h, w: w, r: r}
	d.page.Path = r.URL.Path
	if c, err := r.Cookie("payd_theme"); err == nil && (c.Value == "light" || c.Value == "dark") {
		d.page.Theme = c.Value
	}
	return d
}

// dashPublic serves a page that needs no session (the getting-in pages).
func (h *Handler) dashPublic(f dashHandler) http.Handler {
	return dashWrap(func(w http.ResponseWriter, r *http.Request) {
		d := h.dashReq(w, r)
		if !d.parse() {
			return
		}
		f(d)
	})
}

// dashSignedIn serves a page of the person's own (account, new business):
// a browser without a live session goes to the sign-in page.
func (h *Handler) dashSignedIn(f dashHandler) http.Handler {
	return dashWrap(func(w http.ResponseWriter, r *http.Request) {
		d := h.dashReq(w, r)
		if !d.parse() || !d.signIn() {
			return
		}
		f(d)
	})
}

// dashBusinessPage serves a page of the business named in the path
// ({biz}); a business the person is not a member of is not found.
func (h *Handler) dashBusinessPage(f dashHandler) http.Handler {
	return dashWrap(func(w http.ResponseWriter, r *http.Request) {
		d := h.dashReq(w, r)
		if !d.parse() || !d.signIn() {
			return
		}
		id := r.PathValue("biz")
		for i := range d.page.Businesses {
			if d.page.Businesses[i].ID == id {
				d.page.Biz = &d.page.Businesses[i]
			}
		}
		if d.page.Biz == nil {
			d.notFound()
			return
		}
		d.biz = id
		f(d)
	})
}

// dashWrap adds the page headers, and the cross-origin check to unsafe
// methods. The dashboard's referrer policy is same-origin rather than the
// checkout pages' no-referrer: under no-referrer a browser sends
// "Origin: null" with its own forms, which the API's cross-site check
// (cross_site_request) must refuse; other sites still get no referrer.
func dashWrap(f http.HandlerFunc) http.Handler {
	return pageRoute(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Referrer-Policy", "same-origin")
		if r.Method == http.MethodPost {
			crossOrigin.Handler(f).ServeHTTP(w, r)
			return
		}
		f(w, r)
	})
}

// parse reads a POST's form (at most 64 KiB, or dashUploadMax with a
// file); a body that cannot be read is a 400 page.
func (d *dashReq) parse() bool {
	if d.r.Method != http.MethodPost {
		return true
	}
	// A form with a file (multipart: the checkout logo) may be larger.
	limit, multipart := int64(64<<10), strings.HasPrefix(d.r.Header.Get("Content-Type"), "multipart/form-data")
	if multipart {
		limit = dashUploadMax
	}
	d.r.Body = http.MaxBytesReader(d.w, d.r.Body, limit)
	parse := d.r.ParseForm
	if multipart {
		parse = func() error { return d.r.ParseMultipartForm(limit) }
	}
	if err := parse(); err != nil {
		var tooBig *http.MaxBytesError
		d.page.Title = "Request not understood"
		d.page.Error = "The form could not be read. Go back and try again."
		status := http.StatusBadRequest
		if errors.As(err, &tooBig) {
			d.page.Title, status = "Too large", http.StatusRequestEntityTooLarge
			d.page.Error = "What you sent is larger than payd takes (a logo may be at most 256 KiB). Go back and choose a smaller file."
		}
		d.render(status, "dash/error.html")
		return false
	}
	d.form = d.r.PostForm
	return true
}

// signIn loads the person and their businesses; without a live session
// the browser goes to the sign-in page and comes back after. A POST that
// carries a step-up password proves the session first (stepUp).
func (d *dashReq) signIn() bool {
	if err := d.call("GET", "/sessions/current", nil, &d.ses); err != nil {
		d.fail(err)
		return false
	}
	d.page.Me = d.ses.User
	var list struct {
		Data []dashBusiness `json:"data"`
	}
	if err := d.call("GET", "/businesses", nil, whole{&list}); err != nil {
		d.fail(err)
		return false
	}
	d.page.Businesses = list.Data
	return d.stepUp()
}

// call sends one API request for the browser: its cookies, Origin and
// Sec-Fetch-Site, and Service-Business when the page acts for one. The
// cookies the API sets go back to the browser.
func (d *dashReq) call(method, path string, body, out any) error {
	return d.callWith(method, path, nil, body, out)
}

// callWith is call with more request headers (Idempotency-Key,
// Service-Challenge).
func (d *dashReq) callWith(method, path string, header http.Header, body, out any) error {
	hd := http.Header{}
	for _, k := range []string{"Cookie", "Origin", "Sec-Fetch-Site"} {
		if v := d.r.Header.Values(k); len(v) > 0 {
			hd[k] = v
		}
	}
	if d.biz != "" {
		hd.Set("Service-Business", d.biz)
	}
	for k, v := range header {
		hd[k] = v
	}
	res, err := d.h.api.send(d.r, method, path, body, hd, out)
	for _, c := range res.Values("Set-Cookie") {
		d.w.Header().Add("Set-Cookie", c)
	}
	return err
}

// render writes a page on the dashboard's layout.
func (d *dashReq) render(status int, name string) {
	if d.page.Flash == "" {
		d.page.Flash = dashFlash[d.r.URL.Query().Get("done")]
	}
	d.h.write(d.w, status, name, "dashlayout", &d.page)
}

// redirect sends the browser to path with 303 See Other: after a change,
// to the page that shows it, with done naming the sentence that says
// what happened (dashFlash).
func (d *dashReq) redirect(path, done string) {
	if done != "" {
		path, frag, hasFrag := strings.Cut(path, "#")
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "done=" + url.QueryEscape(done)
		if hasFrag {
			path += "#" + frag
		}
		http.Redirect(d.w, d.r, path, http.StatusSeeOther)
		return
	}
	http.Redirect(d.w, d.r, path, http.StatusSeeOther)
}

// bizPath is the address of one of the business's pages.
func (d *dashReq) bizPath(rest string) string { return dashBase + "/" + d.biz + rest }

// fail answers an API refusal that leaves the page nothing to show: no
// session sends the browser to sign in, a missing thing is the not-found
// page, a proof too old asks for the password (stepUp), and anything
// else is the error page with the refusal as a sentence.
func (d *dashReq) fail(err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		d.h.log.Error("dashboard", slog.String("path", d.r.URL.Path), slog.Any("err", err))
		d.page.Title, d.page.Error = "Something went wrong", dashErrorText(nil)
		d.render(http.StatusInternalServerError, "dash/error.html")
		return
	}
	switch ae.Code {
	case "unauthenticated":
		next := d.r.URL.RequestURI()
		if d.r.Method != http.MethodGet {
			next = d.r.URL.Path
		}
		http.Redirect(d.w, d.r, dashBase+"/sign-in?next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	case "not_found", "business_forbidden":
		d.notFound()
		return
	case "step_up_required":
		d.askStepUp("")
		return
	}
	if refusalOf(err) == nil {
		d.h.log.Error("dashboard", slog.String("path", d.r.URL.Path), slog.Any("err", err))
	}
	d.page.Title, d.page.Error = "Something went wrong", dashErrorText(ae)
	d.render(ae.Status, "dash/error.html")
}

// refusalOf is the API's answer when it is one the person can act on: a
// 4xx, or a 503 that says to wait (a pause, email that cannot go out).
// Anything else (nil) is a fault of the service, logged by fail.
func refusalOf(err error) *apiError {
	var ae *apiError
	if !errors.As(err, &ae) {
		return nil
	}
	if ae.Status >= 500 && ae.Code != "temporarily_unavailable" && ae.Code != "email_unavailable" {
		return nil
	}
	return ae
}

// refuse keeps the page and shows why the API refused the change: the
// sentence, and the field it is about. It returns false when err is not
// such a refusal and has been answered (fail): a fault, or a session that
// has ended or must prove itself again.
func (d *dashReq) refuse(err error) bool {
	ae := refusalOf(err)
	if ae == nil || ae.Code == "unauthenticated" || ae.Code == "step_up_required" {
		d.fail(err)
		return false
	}
	d.page.Error, d.page.Field = dashErrorText(ae), ae.Field
	return true
}

// gettingInRefused renders a refusal of a getting-in form with show, or
// answers a fault (fail). Unlike refuse, unauthenticated is a refusal
// here: these forms have no session to lose.
func (d *dashReq) gettingInRefused(err error, show func(status int)) {
	ae := refusalOf(err)
	if ae == nil {
		d.fail(err)
		return
	}
	d.page.Error, d.page.Field = dashErrorText(ae), ae.Field
	show(ae.Status)
}

// status is the HTTP status a refused form's page is answered with.
func (d *dashReq) status(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return http.StatusInternalServerError
}

// notFound is the dashboard's 404 page.
func (d *dashReq) notFound() {
	d.page.Title = "Page not found"
	d.page.Error = "There is nothing at this address, or it belongs to a business you are not a member of."
	d.render(http.StatusNotFound, "dash/error.html")
}

// stepUpField carries the password of a step-up (spec 5.7) on any
// dashboard form: the change waits on a page asking for the password,
// which posts the same form again with it.
const stepUpField = "stepup_password"

// currentPasswordField is the field of a form that asks for the current
// password itself (changing the password or the email address, two-step
// sign-in); stepUpCurrent marks a step-up page whose password is also
// that field's.
const (
	currentPasswordField = "current_password"
	stepUpCurrent        = "stepup_current"
)

// stepUp proves the session with the password a re-posted form carries,
// before the change it asks for. A wrong password shows the question
// again with the refusal.
func (d *dashReq) stepUp() bool {
	if d.r.Method != http.MethodPost {
		return true
	}
	pw := d.form.Get(stepUpField)
	if pw != "" && d.form.Get(stepUpCurrent) == "1" {
		// The change's own form asked for the current password too:
		// the one just typed is it.
		d.form.Set(currentPasswordField, pw)
	}
	if pw == "" && d.ses.ProvenUntil == nil {
		// A form that carries the current password proves the session
		// with it, so the person is not asked for it twice.
		pw = d.form.Get(currentPasswordField)
	}
	d.form.Del(stepUpField)
	d.form.Del(stepUpCurrent)
	if pw == "" {
		return true
	}
	if err := d.call("POST", "/sessions/current/step-up", map[string]string{"password": pw}, nil); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status < 500 && ae.Code != "unauthenticated" {
			d.askStepUp(dashErrorText(ae))
			return false
		}
		d.fail(err)
		return false
	}
	return true
}

// stepUpPage is the page that asks for the password before a sensitive
// change: it carries the change's form fields and posts them back.
type stepUpPage struct {
	Action string
	Fields []formField
	// Password: the person has one to type; Passkeys: they have passkeys,
	// which the page's script offers instead.
	Password, Passkeys bool
}

type formField struct{ Name, Value string }

// askStepUp renders the password question for the change this request
// asked for; refusal, if any, says why the last password was refused.
func (d *dashReq) askStepUp(refusal string) {
	p := stepUpPage{Action: d.r.URL.RequestURI()}
	if d.r.Method == http.MethodGet {
		p.Action = d.r.URL.Path
	}
	for name, vs := range d.form {
		// The current password typed into the change's form does not
		// come back in the page: the one asked for here stands in for
		// it. A new password does (the change still needs it), in a
		// page that is never cached.
		if name == currentPasswordField {
			p.Fields = append(p.Fields, formField{stepUpCurrent, "1"})
			continue
		}
		for _, v := range vs {
			p.Fields = append(p.Fields, formField{name, v})
		}
	}
	if d.page.Me != nil {
		p.Password = d.page.Me.HasPassword
	}
	var keys struct {
		Data []struct{} `json:"data"`
	}
	if err := d.call("GET", "/me/passkeys", nil, whole{&keys}); err == nil {
		p.Passkeys = len(keys.Data) > 0
	}
	d.page.Title, d.page.Error, d.page.Data = "Confirm it is you", refusal, p
	d.render(http.StatusForbidden, "dash/stepup.html")
}

// retryText is "Try again in N seconds." for a Retry-After header.
func retryText(ra string) string {
	n, err := strconv.Atoi(ra)
	if err != nil || n <= 0 {
		return ""
	}
	switch {
	case n < 90:
		if n == 1 {
			return " Try again in 1 second."
		}
		return " Try again in " + strconv.Itoa(n) + " seconds."
	case n < 90*60:
		return " Try again in " + strconv.Itoa((n+59)/60) + " minutes."
	default:
		return " Try again in " + strconv.Itoa((n+3599)/3600) + " hours."
	}
}

// safeNext is where to go after signing in: a dashboard address of this
// site, never another site's.
func safeNext(next string) string {
	if !strings.HasPrefix(next, dashBase+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return dashBase + "/"
	}
	return next
}
