// Package api is payd's JSON API: routing, the common behaviour of every
// request (request ids, errors, strict JSON, authentication, idempotency,
// rate limits, pauses) and one handler file per resource.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// BasePath is where the API lives; its version is part of the path (spec 9).
const BasePath = "/api/v1"

// RateProvider gives the exchange rates in force; rate.Refresher is one.
type RateProvider interface {
	// Latest returns the newest snapshot, however old, or
	// upstream_unavailable when there is none: what GET /exchange-rates
	// shows.
	Latest(ctx context.Context) (*payd.ExchangeRates, error)
	// Fresh returns the newest snapshot only while it is younger than the
	// max age, else upstream_unavailable: what a price is locked at. The
	// snapshot may lack a coin or currency its sources disagreed on
	// (payd.ExchangeRates.Lacks); ratesFor refuses just those prices.
	Fresh(ctx context.Context) (*payd.ExchangeRates, error)
	// ByID returns one snapshot of the history; not_found if there is
	// none with the id.
	ByID(ctx context.Context, id string) (*payd.ExchangeRates, error)
}

// Options are the API server's dependencies and settings; cmd/payd fills them.
type Options struct {
	Store payd.Store
	Clock clock.Clock
	Log   *slog.Logger
	Rates RateProvider
	// Counter counts rate-limit hits: in memory for one SQLite process, in
	// the database on PostgreSQL so that replicas share one budget.
	Counter RateCounter
	// PublicURL is the server's public base address without a trailing
	// slash (http://127.0.0.1:8080); hosted checkout pages live under it.
	PublicURL string
	// Networks are the chain adapters checkouts use, one per network; a
	// network without one cannot be chosen.
	Networks map[money.Network]payd.Network
	// Confirmations overrides payd.DefaultConfirmations per network.
	Confirmations map[money.Network]int
	// Dev enables the devnet routes and the test clock.
	Dev bool
	// DevClock is the clock that POST /devnet/clock moves; required with Dev.
	DevClock *clock.Offset
	// Devnet drives the simulated networks for the devnet routes; with Dev
	// they answer temporarily_unavailable while it is nil.
	Devnet DevnetControl
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// finding a client's address for rate limits.
	TrustedProxies []netip.Prefix
	// KeyCacheTTL bounds how long an authenticated key is trusted without a
	// database read; a revoked key stops working on every replica within it.
	KeyCacheTTL time.Duration
	// Deliveries makes the manual webhook attempts (test sends, resends);
	// without it those routes answer temporarily_unavailable.
	Deliveries payd.DeliverySender
	// EnforceHost answers edge_forbidden to a request whose Host is not
	// PublicURL's (CONTRACT.md); payd serve sets it.
	EnforceHost bool
	// Passwords hashes and verifies passwords; Breaches, when set, is
	// asked whether a new password appears in a breach (never blocking
	// when it cannot answer).
	Passwords payd.PasswordHasher
	Breaches  payd.BreachChecker
	// Challenger verifies the bot-check tokens of sign-up, sign-in and
	// reset; DevChallenges issues the dev tokens of POST /devnet/challenges.
	Challenger    payd.Challenger
	DevChallenges ChallengeIssuer
	// Letters writes the account emails; Mail says they can go out (a
	// mail server is configured, or --dev keeps them): without it routes
	// that must send one answer email_unavailable.
	Letters payd.Letters
	Mail    bool
	// Passkeys runs the WebAuthn ceremonies (package passkey); without it
	// the passkey routes answer temporarily_unavailable.
	Passkeys payd.WebAuthn
	// TwoFactor makes and checks two-step sign-in's codes (totp.Authenticator).
	TwoFactor payd.Authenticator
	// Card is the card provider (docs/card.md); without one no link,
	// payment or page offers the card rail.
	Card payd.CardProvider
	// Observer counts what the API does for the operator's metrics
	// (ops.Metrics); nil counts nothing.
	Observer Observer
}

// Observer is told of what the API committed, for the operator's metrics.
type Observer interface {
	// CheckoutOpened is told of each checkout opened, once committed.
	CheckoutOpened(rail, network string)
}

// opened tells the Observer of a checkout opened on rail and n, when err
// says its transaction committed.
func (s *Server) opened(err error, rail payd.Rail, n money.Network) error {
	if err == nil && s.opts.Observer != nil {
		s.opts.Observer.CheckoutOpened(string(rail), string(n))
	}
	return err
}

// ChallengeIssuer issues dev bot-check tokens (challenge.Dev).
type ChallengeIssuer interface {
	Issue(ctx context.Context, form payd.ChallengeForm) (string, error)
}

// Server is the API's http.Handler.
type Server struct {
	store   payd.Store
	clock   clock.Clock
	log     *slog.Logger
	rates   RateProvider
	limiter *limiter
	keys    *keyCache
	pauses  *pauseCache
	// deposits derives checkouts' deposits ahead of their transactions.
	deposits *depositsAhead
	cursors  cursorCodec
	opts     Options
	mux      *http.ServeMux
	// sharedClaims says idempotency claims must be in the database because
	// other processes serve it (PostgreSQL); memory holds them otherwise.
	sharedClaims bool
	memory       memoryClaims
	routes       []route
	// origin, scheme and publicHost are PublicURL's, normalised (originOf).
	origin, scheme, publicHost string
}

// New builds the server. It loads the cursor signing key, shared by every
// replica through the database.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Store == nil || o.Clock == nil || o.Log == nil || o.Rates == nil || o.Counter == nil {
		return nil, fmt.Errorf("api.New: Store, Clock, Log, Rates and Counter are required")
	}
	if o.Dev && o.DevClock == nil {
		return nil, fmt.Errorf("api.New: Dev needs DevClock")
	}
	if o.PublicURL == "" {
		return nil, fmt.Errorf("api.New: PublicURL is required")
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	if o.KeyCacheTTL == 0 {
		o.KeyCacheTTL = 2 * time.Second
	}
	secret, err := o.Store.EnsureSetting(ctx, "cursor_key", payd.RandomString(43))
	if err != nil {
		return nil, fmt.Errorf("api.New: cursor key: %w", err)
	}
	s := &Server{
		store: o.Store, clock: o.Clock, log: o.Log, rates: o.Rates, opts: o,
		limiter:  newLimiter(o.Counter, o.Clock, rateRules),
		keys:     newKeyCache(o.Store, o.Clock, o.KeyCacheTTL),
		pauses:   newPauseCache(o.Store, o.Clock, time.Second),
		deposits: newDepositsAhead(o.Networks),
		cursors:  cursorCodec{key: []byte(secret)},
		mux:      http.NewServeMux(),
		// Several payd serve processes share a PostgreSQL database; one
		// serves an SQLite file.
		sharedClaims: o.Store.Dialect() == "postgres",
	}
	s.origin, s.scheme, s.publicHost = originOf(o.PublicURL)
	s.routes = s.routeTable()
	for _, rt := range s.routes {
		s.mount(rt)
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	return s, nil
}

// avail is what can be paid here, and cuts every offer down
// (payd.Availability): the networks with an adapter and the coins each
// takes now, and the card rail when a provider is configured. It is asked
// each time: a real node payd could not reach at start takes its coins
// once it answers.
func (s *Server) avail() payd.Availability {
	a := payd.Availability{Assets: map[money.Network][]money.Asset{}, Card: s.opts.Card != nil}
	for _, n := range money.Networks {
		if net := s.opts.Networks[n]; net != nil {
			a.Networks = append(a.Networks, n)
			a.Assets[n] = net.Assets()
		}
	}
	return a
}

// mount puts a route, behind the common chain, on the server's mux.
func (s *Server) mount(rt route) {
	s.mux.Handle(rt.method+" "+BasePath+rt.path, s.wrap(rt))
}

// ServeHTTP routes a request. A path that exists for other methods answers
// 405 with an empty body and no request id (spec 7.1); any other unknown
// path answers 404 not_found.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		// Through the mux, not the handler it found: only ServeHTTP sets
		// the request's path values ({id}).
		s.mux.ServeHTTP(w, r)
		return
	}
	if allow := s.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	s.wrap(route{access: access{public: true}, h: notFound}).ServeHTTP(w, r)
}

// allowed lists the methods the request's path does exist for.
func (s *Server) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			out = append(out, m)
		}
	}
	return out
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return payd.Errorf(payd.ErrNotFound, "no route %s %s", r.Method, r.URL.Path)
}

// healthz answers 200 once the server can reach its database.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.store.Pauses(ctx); err != nil {
		s.log.WarnContext(ctx, "health check failed", slog.Any("error", err))
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// linkURL is the hosted checkout page of a link: the spec's url, whose last
// path segment is the link's code.
func (s *Server) linkURL(code string) string { return s.opts.PublicURL + "/l/" + code }

// paymentURL is the hosted checkout page of a payment created with the API.
func (s *Server) paymentURL(code string) string { return s.opts.PublicURL + "/p/" + code }
