package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"payd"
	"payd/chain/devnet"
	"payd/challenge"
	"payd/clock"
	"payd/mail"
	"payd/money"
	rp "payd/passkey"
	"payd/password"
	"payd/store"
	"payd/totp"
)

// testHasher is the production password hasher, shared by the tests so
// its bound on concurrent hashes holds across them.
var testHasher = password.NewHasher(password.Config{})

// bundle is one running API server on a loopback port with what a test
// needs to drive it.
type bundle struct {
	t      testing.TB
	db     *store.DB
	clock  *clock.Offset
	srv    *Server
	http   *httptest.Server
	base   string
	router routers.Router
	doc    *openapi3.T
	logs   *syncBuffer
}

// fixedRates is the rate seam: a snapshot that never changes.
type fixedRates struct{ x *payd.ExchangeRates }

func (f fixedRates) Latest(context.Context) (*payd.ExchangeRates, error) { return f.x, nil }
func (f fixedRates) Fresh(context.Context) (*payd.ExchangeRates, error)  { return f.x, nil }

func (f fixedRates) ByID(_ context.Context, id string) (*payd.ExchangeRates, error) {
	if id != f.x.ID {
		return nil, payd.Errorf(payd.ErrNotFound, "no exchange rates %s", id)
	}
	return f.x, nil
}

func testRates(now time.Time) *payd.ExchangeRates {
	return &payd.ExchangeRates{
		ID:    "xr_test0000000000000000000",
		Coins: map[money.Asset]int64{money.USDC: 100, money.USDT: 100, money.BTC: 6_400_000, money.ETH: 320_000, money.SOL: 15_000},
		Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1"), money.EUR: money.MustRate("1.08"),
			money.GBP: money.MustRate("1.27"), money.CAD: money.MustRate("0.73"), money.AUD: money.MustRate("0.66")},
		CreatedAt: now,
	}
}

// setup starts a dev-mode server on db; extra routes let tests exercise the
// common chain on rules that no product route uses yet.
func setup(t testing.TB, db *store.DB, extra ...route) *bundle {
	t.Helper()
	return setupWith(t, db, nil, extra...)
}

// setupWith starts a server as setup does, with change applied to its
// options first (nil changes nothing): a production server, say.
func setupWith(t testing.TB, db *store.DB, change func(*Options), extra ...route) *bundle {
	t.Helper()
	clk := clock.NewOffset()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var counter RateCounter = NewMemoryCounter(clk)
	if db.Dialect() == "postgres" {
		counter = db
	}
	dn, err := devnet.New(context.Background(), db, clk, "http://payd.test"+BasePath)
	if err != nil {
		t.Fatal(err)
	}
	devChallenges := challenge.NewDev(db, clk)
	relying, err := rp.New("http://payd.test", clk)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Store: db, Clock: clk, Log: log, Rates: fixedRates{testRates(clk.Now())},
		Counter: counter, Dev: true, DevClock: clk, Devnet: dn, PublicURL: "http://payd.test", Networks: devnetNetworks(dn),
		Passwords: testHasher, Challenger: devChallenges, DevChallenges: devChallenges, Letters: mail.NewLetters(), Mail: true, Passkeys: relying,
		TwoFactor: totp.Authenticator{Issuer: "payd"}}
	if change != nil {
		change(&o)
	}
	srv, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range extra {
		srv.mount(rt)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	b := &bundle{t: t, db: db, clock: clk, srv: srv, http: hs, base: hs.URL + BasePath, logs: logs}
	b.doc, b.router = loadRouter(t, b.base)
	return b
}

// devnetNetworks are the devnet's adapters, one per network.
func devnetNetworks(dn *devnet.Devnet) map[money.Network]payd.Network {
	out := map[money.Network]payd.Network{}
	for _, n := range money.Networks {
		out[n] = dn.Network(n)
	}
	return out
}

// loadRouter parses the OpenAPI document, which must itself be valid.
func loadRouter(t testing.TB, base string) (*openapi3.T, routers.Router) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument(true))
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not valid: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, r
}

// response is an answer the harness has already checked against the spec.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value for assertions.
func (r *response) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return v
}

// errorCode returns error.code, failing the test when there is none.
func (r *response) errorCode(t testing.TB) (code, field string) {
	t.Helper()
	e, ok := r.json(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error envelope in %d %s", r.status, r.body)
	}
	code, _ = e["code"].(string)
	field, _ = e["field"].(string)
	return code, field
}

// request is one call to make.
type request struct {
	method, path string
	key          string
	body         string
	contentType  string // default application/json when body is set
	header       map[string]string
}

// do sends req and checks the answer against the common rules and the
// OpenAPI document before returning it.
func (b *bundle) do(req request) *response {
	b.t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	hr, err := http.NewRequest(req.method, b.base+req.path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if req.body != "" {
		ct := req.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if req.key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.key)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	return b.send(hr)
}

// send performs hr and validates the response.
func (b *bundle) send(hr *http.Request) *response {
	b.t.Helper()
	res, err := b.http.Client().Do(hr)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	r := &response{status: res.StatusCode, header: res.Header, body: raw}
	b.checkCommon(hr, r)
	b.checkOpenAPI(hr, r)
	return r
}

// checkCommon asserts spec 7: request ids and the error envelope.
func (b *bundle) checkCommon(hr *http.Request, r *response) {
	b.t.Helper()
	id := r.header.Get("Service-Request-Id")
	if r.status == http.StatusMethodNotAllowed {
		if id != "" || len(r.body) != 0 {
			b.t.Errorf("405 must have no request id and an empty body; got id %q body %q", id, r.body)
		}
		return
	}
	if !payd.HasPrefix(id, payd.PrefixRequest) {
		b.t.Errorf("%s %s: Service-Request-Id %q", hr.Method, hr.URL.Path, id)
	}
	if r.header.Get("Cache-Control") != "no-store" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		b.t.Errorf("%s %s: %d with Cache-Control %q and X-Content-Type-Options %q, want no-store and nosniff",
			hr.Method, hr.URL.Path, r.status, r.header.Get("Cache-Control"), r.header.Get("X-Content-Type-Options"))
	}
	if r.status >= 400 {
		e, _ := r.json(b.t)["error"].(map[string]any)
		if e == nil || e["request_id"] != id {
			b.t.Errorf("%s %s: error.request_id must equal the header %q: %s", hr.Method, hr.URL.Path, id, r.body)
		}
		if r.status == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") != "Bearer" {
			b.t.Errorf("401 without WWW-Authenticate: Bearer")
		}
	}
}

// checkOpenAPI validates the response against the document; responses to
// paths the document does not have must still be the error envelope.
func (b *bundle) checkOpenAPI(hr *http.Request, r *response) {
	b.t.Helper()
	if r.status == http.StatusMethodNotAllowed {
		return
	}
	route, params, err := b.router.FindRoute(hr)
	if err != nil {
		b.checkErrorSchema(hr, r)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		b.t.Errorf("%s %s → %d does not match openapi.json: %v\n%s", hr.Method, hr.URL.Path, r.status, err, r.body)
	}
	b.checkDocumentedCode(route, r)
}

// checkDocumentedCode checks that a 4xx answer's error code is among those
// the operation documents for that status, so the per-operation lists in
// openapi.json stay true as handlers change.
func (b *bundle) checkDocumentedCode(route *routers.Route, r *response) {
	b.t.Helper()
	if r.status < 400 || r.status >= 500 {
		return
	}
	code, _ := r.errorCode(b.t)
	doc := route.Operation.Responses.Status(r.status)
	if doc == nil || doc.Value == nil || doc.Value.Description == nil ||
		!strings.Contains(*doc.Value.Description, "`"+code+"`") {
		b.t.Errorf("%s %s → %d %s: openapi.json does not list %s under %d", route.Method, route.Path, r.status, code, code, r.status)
	}
}

// checkErrorSchema validates a response to an undocumented path.
func (b *bundle) checkErrorSchema(hr *http.Request, r *response) {
	b.t.Helper()
	if r.status < 400 {
		// Routes under /_test/ exist only in tests, to exercise the common
		// chain on rules no product route uses yet.
		if strings.HasPrefix(hr.URL.Path, BasePath) && !strings.HasPrefix(hr.URL.Path, BasePath+"/_test/") {
			b.t.Errorf("%s %s answered %d but is not in openapi.json", hr.Method, hr.URL.Path, r.status)
		}
		return
	}
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		b.t.Errorf("error body is not JSON: %s", r.body)
		return
	}
	if err := b.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		b.t.Errorf("%s %s → %d: error body does not match the Error schema: %v", hr.Method, hr.URL.Path, r.status, err)
	}
}

// syncBuffer is a log sink tests can read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// business makes a business with a live secret key, a test secret key and
// a publishable key, returning the secrets.
type testBusiness struct {
	biz                      *payd.Business
	live, test, pub          string
	liveKey, testKey, pubKey *payd.APIKey
}

func (b *bundle) newBusiness(live bool) *testBusiness {
	b.t.Helper()
	now := b.clock.Now()
	biz, err := payd.NewBusiness("Ada's Books", "ada@example.com", live, now)
	if err != nil {
		b.t.Fatal(err)
	}
	tb := &testBusiness{biz: biz}
	tb.live, tb.liveKey = payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, now)
	tb.test, tb.testKey = payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeTest, nil, now)
	tb.pub, tb.pubKey = payd.NewAPIKey(biz.ID, payd.KeyPublishable, payd.ModeLive, nil, now)
	err = b.db.Tx(context.Background(), func(ctx context.Context, q payd.Queries) error {
		if err := q.CreateBusiness(context.Background(), biz); err != nil {
			return err
		}
		for _, k := range []*payd.APIKey{tb.liveKey, tb.testKey, tb.pubKey} {
			if err := q.CreateAPIKey(context.Background(), k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return tb
}

// restricted adds a restricted key with perms to tb's business.
func (b *bundle) restricted(tb *testBusiness, perms string) string {
	b.t.Helper()
	p, err := payd.ParsePermissions(perms)
	if err != nil {
		b.t.Fatal(err)
	}
	secret, k := payd.NewAPIKey(tb.biz.ID, payd.KeyRestricted, payd.ModeLive, p, b.clock.Now())
	if err := b.db.CreateAPIKey(context.Background(), k); err != nil {
		b.t.Fatal(err)
	}
	return secret
}
