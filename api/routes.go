package api

import (
	"net/http"

	"payd"
)

// handlerFunc is an API handler: it writes a success or returns an error that
// the one adapter in wrap renders.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one API route and the rules the common chain applies to it.
type route struct {
	method string
	path   string // relative to BasePath, Go 1.22 pattern syntax
	h      handlerFunc
	access access
	idem   idemMode
	// limit names a per-IP rule of rateRules (spec 8.2), if any.
	limit string
	// pause names what the operator can pause to close this route.
	pause string
	// realMoney refuses test keys on a live business (spec 5.3).
	realMoney bool
}

// access says who may call a route.
type access struct {
	// public routes need no key; a key that is sent is still checked.
	public bool
	// sessionOnly routes belong to the dashboard: API keys get session_required.
	sessionOnly bool
	area        payd.Area
	level       payd.Access
}

// idemMode is how a POST route treats Idempotency-Key (spec 4.8).
type idemMode int

const (
	idemOptional idemMode = iota // stored when sent (rules 1–7)
	idemRequired                 // rule 8
	idemIgnored                  // rule 10: responses carrying a secret
)

var public = access{public: true}

// routeTable lists every API route on one screen.
func (s *Server) routeTable() []route {
	rs := []route{
		{method: "GET", path: "/exchange-rates", h: s.getExchangeRates, access: public},
		{method: "GET", path: "/openapi.json", h: s.getOpenAPI, access: public},
		{method: "GET", path: "/api-keys", h: sessionOnly, access: access{sessionOnly: true}},
		{method: "POST", path: "/api-keys", h: sessionOnly, access: access{sessionOnly: true}},
	}
	if s.opts.Dev {
		rs = append(rs,
			route{method: "POST", path: "/devnet/clock", h: s.advanceClock, access: public},
		)
	}
	return rs
}

// sessionOnly answers dashboard-only routes called with an API key. It is
// never reached: the access rule refuses first.
func sessionOnly(http.ResponseWriter, *http.Request) error {
	return payd.Errorf(payd.ErrSessionRequired, "this route is only for the dashboard")
}
