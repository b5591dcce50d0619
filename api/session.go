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
		if err := s.store.SaveSession(ctx, ses); err != nil && !payd.IsNotFound(err) {
			return err
		}
	}
	if rt.access.may != nil && !rt.access.may(c.role) {
		return payd.Errorf(payd.ErrPermissionDenied, "as %s of this business you cannot do this", c.role)
	}
	if rt.stepUp && !ses.Proven(now) {
		return payd.StepUpRequired()
	}
	if rt.access.user || rt.access.sessionOnly && rt.access.area == "" {
		return nil
	}
	return authorize(route{access: access{area: rt.access.area, level: rt.access.level}, realMoney: rt.realMoney}, c.key, c.biz)
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
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" || r.Header.Get("Origin") != s.origin {
		return payd.Errorf(payd.ErrCrossSiteRequest, "this request came from another site; use the dashboard at %s", s.origin)
	}
	return nil
}

// edge refuses a request whose Host is not the public URL's host
// (edge_forbidden): payd answers only at its official address, so a
// request smuggled in through another name or straight to the replica's
// port is turned away.
func (s *Server) edge(r *http.Request) error {
	if !s.opts.EnforceHost || strings.EqualFold(r.Host, s.publicHost) {
		return nil
	}
	return payd.Errorf(payd.ErrEdgeForbidden, "requests must come through %s", s.origin)
}

// originOf is the scheme://host[:port] of a URL.
func originOf(raw string) (origin, host string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	return u.Scheme + "://" + u.Host, u.Host
}

// secureCookies says cookies get Secure: whenever the public URL is https.
func (s *Server) secureCookies() bool { return strings.HasPrefix(s.opts.PublicURL, "https://") }

// setCookie sets an HttpOnly, SameSite=Lax cookie on the whole site; a
// maxAge below zero deletes it.
func (s *Server) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
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
	device := cookie(r, deviceCookie)
	if !validToken(device) {
		device = payd.RandomString(43)
	}
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
