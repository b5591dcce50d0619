package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"payd"
)

// Sessions (spec 5.5–5.7, CONTRACT.md "Accounts and sessions",
// docs/accounts.md): a signed-in browser carries a random token in an
// HttpOnly cookie; the sessions table holds its hash.

// The cookies accounts use.
const (
	// sessionCookie holds a signed-in session's token.
	sessionCookie = "payd_session"
	// signupCookie binds a sign-up to the browser that started it.
	signupCookie = "payd_signup"
	// deviceCookie marks a browser that has signed in before, which keeps
	// its own count of failed passwords (spec 8.3).
	deviceCookie = "payd_device"
)

// authenticateSession signs a cookie-carrying request in: it refuses
// cross-site unsafe requests, finds the live session and its user, and on
// routes that act for a business the business of Service-Business with
// the member's role as the key's permissions.
func (s *Server) authenticateSession(r *http.Request, c *call, rt route, token string) error {
	if err := s.sameSite(r); err != nil {
		return err
	}
	ctx := r.Context()
	now := s.clock.Now()
	ses, err := s.store.SessionByToken(ctx, payd.SecretHash(token))
	if payd.IsNotFound(err) || err == nil && !ses.Live(now) {
		return payd.Errorf(payd.ErrUnauthenticated, "your session has ended; sign in again")
	} else if err != nil {
		return err
	}
	u, err := s.store.UserByID(ctx, ses.UserID)
	if err != nil {
		return err
	}
	c.session, c.user = ses, u
	if !rt.access.user {
		if err := s.actFor(r, c); err != nil {
			return err
		}
	}
	if now.Sub(ses.LastSeenAt) >= payd.SessionTouchEvery || c.biz != nil && ses.BusinessID != c.biz.ID {
		ses.LastSeenAt = now
		if c.biz != nil {
			ses.BusinessID = c.biz.ID
		}
		if err := s.store.TouchSession(ctx, ses.ID, ses.LastSeenAt, ses.BusinessID); err != nil && !payd.IsNotFound(err) {
			return err
		}
	}
	if err := s.authorizeMember(rt, c); err != nil {
		return err
	}
	if rt.stepUp && !ses.Proven(now) {
		return payd.StepUpRequired()
	}
	return nil
}

// authorizeMember applies a route's access rule to a signed-in person:
// on a business route the role's permissions as a restricted key's, and
// what the route's may asks of the role (managing API keys, the team).
func (s *Server) authorizeMember(rt route, c *call) error {
	a := rt.access
	switch {
	case a.user:
		return nil
	case a.may != nil && !a.may(c.role):
		return payd.Errorf(payd.ErrPermissionDenied, "as %s of this business you cannot do this", c.role)
	case a.sessionOnly && a.area == "":
		return nil
	}
	return authorize(route{access: access{area: a.area, level: a.level}, realMoney: rt.realMoney}, c.key, c.biz)
}

// actFor finds the business a session acts for (Service-Business) and
// the member's role, which becomes the call's key: the same permission
// checks then apply to people as to restricted keys.
func (s *Server) actFor(r *http.Request, c *call) error {
	id := r.Header.Get("Service-Business")
	if id == "" {
		return payd.Errorf(payd.ErrBusinessRequired, "name the business to act for in header Service-Business")
	}
	m, err := s.store.Member(r.Context(), id, c.user.ID)
	if payd.IsNotFound(err) {
		return payd.Errorf(payd.ErrBusinessForbidden, "you cannot act for business %q", id)
	} else if err != nil {
		return err
	}
	biz, err := s.store.BusinessByID(r.Context(), id)
	if err != nil {
		return err
	}
	c.biz, c.role = biz, m.Role
	c.key = &payd.APIKey{BusinessID: biz.ID, Kind: payd.KeyRestricted, Mode: payd.ModeLive, Permissions: m.Role.Permissions()}
	return nil
}

// sameSite refuses a cookie-signed request with an unsafe method that a
// browser sent from another site: its Origin is not the public URL's, or
// Sec-Fetch-Site says cross-site (CONTRACT.md). SameSite=Lax cookies
// already stay home on most such requests; this covers the rest (a
// sibling subdomain counts as same-site to the cookie, not to Origin).
func (s *Server) sameSite(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" || normalOrigin(r.Header.Get("Origin")) != s.origin {
		return payd.Errorf(payd.ErrCrossSiteRequest, "this request came from another site; use the dashboard at %s", s.origin)
	}
	return nil
}

// Edge wraps the whole site (API and pages): a request whose Host is not
// the public URL's host answers 403 edge_forbidden (CONTRACT.md), so payd
// answers only at its official address and a request smuggled in through
// another name, or straight to a replica's port, is turned away. /healthz
// is exempt, for load balancers and probes that ask by address.
func (s *Server) Edge(next http.Handler) http.Handler {
	if !s.opts.EnforceHost {
		return next
	}
	refuse := s.wrap(route{access: public, h: func(http.ResponseWriter, *http.Request) error {
		return payd.Errorf(payd.ErrEdgeForbidden, "requests must come through %s", s.origin)
	}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || normalHost(r.Host, s.scheme) == s.publicHost {
			next.ServeHTTP(w, r)
			return
		}
		refuse.ServeHTTP(w, r)
	})
}

// originOf is a URL's origin (scheme://host, the port left out when it is
// the scheme's default), with its scheme and host, all in lower case.
func originOf(raw string) (origin, scheme, host string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", ""
	}
	scheme = strings.ToLower(u.Scheme)
	host = normalHost(u.Host, scheme)
	return scheme + "://" + host, scheme, host
}

// normalOrigin is an Origin header in originOf's form ("" when it is
// none or not a URL).
func normalOrigin(o string) string {
	origin, _, _ := originOf(o)
	return origin
}

// normalHost lower-cases a host[:port] and drops the scheme's default port.
func normalHost(h, scheme string) string {
	h = strings.ToLower(h)
	if scheme == "http" {
		return strings.TrimSuffix(h, ":80")
	}
	return strings.TrimSuffix(h, ":443")
}

// PublicHost is the host name of a public URL, without its port: what a
// bot-check answer must name.
func PublicHost(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// secureCookies says cookies get Secure: whenever the public URL is https.
func (s *Server) secureCookies() bool { return strings.HasPrefix(s.opts.PublicURL, "https://") }

// cookieName is the name a cookie goes by: with the __Host- prefix
// whenever cookies are Secure, so that no other host (a sibling
// subdomain) can set or overwrite it.
func (s *Server) cookieName(base string) string {
	if s.secureCookies() {
		return "__Host-" + base
	}
	return base
}

// setCookie sets an HttpOnly, SameSite=Lax cookie on the whole site; a
// maxAge below zero deletes it.
func (s *Server) setCookie(w http.ResponseWriter, base, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(base), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: s.secureCookies(), SameSite: http.SameSiteLaxMode})
}

// cookie returns the named cookie's value, "" when absent.
func cookie(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// started is a session made in a transaction, whose cookies are set once
// it commits (a retried transaction must not leave two).
type started struct {
	session       *payd.Session
	token, device string
}

// startSession signs user in: a new session row, and the browser
// remembered as one that has signed in to the account (deviceCookie),
// whose failed passwords then count apart (spec 8.3). setSession gives
// the browser its cookies after the commit.
func (s *Server) startSession(ctx context.Context, r *http.Request, q payd.Queries, u *payd.User, method string) (*started, error) {
	token, ses := payd.NewSession(u.ID, method, r.UserAgent(), s.clientIP(r), s.clock.Now())
	if ms, err := q.MembershipsByUser(ctx, u.ID); err != nil {
		return nil, err
	} else if len(ms) > 0 {
		ses.BusinessID = ms[0].BusinessID
	}
	if err := q.CreateSession(ctx, ses); err != nil {
		return nil, err
	}
	// The browser's previous session, if any, ends: one browser, one session.
	if old := cookie(r, s.cookieName(sessionCookie)); validToken(old) {
		if prev, err := q.SessionByToken(ctx, payd.SecretHash(old)); err == nil {
			if err := q.DeleteSession(ctx, prev.UserID, prev.ID); err != nil && !payd.IsNotFound(err) {
				return nil, err
			}
		} else if !payd.IsNotFound(err) {
			return nil, err
		}
	}
	// A fresh device token at every sign-in: one the browser brought
	// (perhaps planted by another site) is never adopted.
	device := payd.RandomString(43)
	if err := q.RememberDevice(ctx, u.ID, payd.SecretHash(device), ses.CreatedAt); err != nil {
		return nil, err
	}
	return &started{session: ses, token: token, device: device}, nil
}

// setSession gives the browser the cookies of a committed session.
func (s *Server) setSession(w http.ResponseWriter, st *started) {
	s.setCookie(w, sessionCookie, st.token, int(payd.SessionMax.Seconds()))
	s.setCookie(w, deviceCookie, st.device, deviceCookieAge)
}

// deviceCookieAge is 400 days, the longest a browser keeps a cookie.
const deviceCookieAge = 400 * 24 * 60 * 60

// validToken accepts the shape of the tokens payd puts in cookies: 1 to
// 64 base62 characters.
func validToken(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
