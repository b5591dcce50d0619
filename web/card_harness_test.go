package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/api"
	"payd/chain/devnet"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/rate"
	"payd/store"
	"payd/watch"
	"payd/web"
)

// The card page's browser tests need a card provider that the test
// drives, which the payd binary cannot take: startCardPayd runs what
// `payd serve --dev` runs (store, devnet, static rates, the API, a watcher
// per network and the pages) in the test's process, with testCard as the
// provider. The business is made with the binary's `business create`,
// as startPayd makes it, on the same SQLite file.

// testCard is a card provider whose hosted card page is a small server of
// the test's own, shaped like a real provider's flow: Start opens a
// session whose RedirectURL is that page; its form (Pay, Decline) sets the
// session's status, as the customer's bank would, and sends the customer
// back to the session's ReturnURL; Status answers what the form set. Its
// webhooks are not used: the page's refresh polls Status.
type testCard struct {
	mu       sync.Mutex
	n        int
	page     *httptest.Server
	sessions map[string]*testSession
}

type testSession struct {
	req payd.CardSessionRequest
	rep payd.CardReport
}

// testDecline is what the test provider's bank says of a declined card.
const testDecline = "Your bank declined the card: do not honour."

func newTestCard(t *testing.T) *testCard {
	p := &testCard{sessions: map[string]*testSession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /session/{id}", p.show)
	mux.HandleFunc("POST /session/{id}", p.submit)
	mux.HandleFunc("GET /thanks", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>Thanks</title><link rel="icon" href="data:,"></head><body><main><h1 id="thanks">Thank you for your order</h1></main></body></html>`))
	})
	p.page = httptest.NewServer(mux)
	t.Cleanup(p.page.Close)
	return p
}

func (p *testCard) Name() string { return "testcard" }
func (p *testCard) Delivers(a money.Asset, n money.Network) bool {
	return a == "USDC" && n == "polygon"
}
func (p *testCard) Limits(money.Currency, string) payd.CardLimits {
	return payd.CardLimits{}
}
func (p *testCard) NeedsEmail() bool { return true }

func (p *testCard) Start(_ context.Context, req payd.CardSessionRequest) (payd.CardSession, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	id := fmt.Sprintf("tcs_%d", p.n)
	p.sessions[id] = &testSession{req: req, rep: payd.CardReport{Session: id, Status: payd.CardAwaiting}}
	return payd.CardSession{ID: id, RedirectURL: p.page.URL + "/session/" + id}, nil
}

func (p *testCard) Status(_ context.Context, id string) (payd.CardReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions[id]
	if s == nil {
		return payd.CardReport{}, payd.Errorf(payd.ErrNotFound, "no session %s", id)
	}
	return s.rep, nil
}

func (p *testCard) Webhook(http.Header, []byte) ([]payd.CardReport, error) {
	return nil, payd.Errorf(payd.ErrInvalidSignature, "the test provider sends no webhooks")
}

// session returns a session's request, for the test's checks.
func (p *testCard) session(id string) payd.CardSessionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[id].req
}

var providerPage = template.Must(template.New("p").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><link rel="icon" href="data:,">
<title>Test card provider</title></head>
<body><main><h1>Pay {{.Amount}} {{.Currency}}</h1>
<form method="post">
<label>Card number <input name="number" value="4242424242424242" autocomplete="off"></label>
<button type="submit" name="outcome" value="pay" id="provider-pay">Pay</button>
<button type="submit" name="outcome" value="decline" id="provider-decline">Decline</button>
</form></main></body></html>`))

// show is the provider's hosted card page of a session.
func (p *testCard) show(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	s := p.sessions[r.PathValue("id")]
	p.mu.Unlock()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = providerPage.Execute(w, map[string]any{"Amount": money.Currency(s.req.Currency).Format(s.req.Amount),
		"Currency": s.req.Currency})
}

// submit is the customer paying (or the bank declining) on that page: the
// session's status changes and the customer goes back to payd's page.
func (p *testCard) submit(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	s := p.sessions[r.PathValue("id")]
	if s == nil || s.rep.Status != payd.CardAwaiting {
		p.mu.Unlock()
		http.Error(w, "this session is over", http.StatusConflict)
		return
	}
	if r.FormValue("outcome") == "decline" {
		s.rep.Status, s.rep.DeclineCode, s.rep.DeclineMessage = payd.CardDeclined, payd.CardDeclinedGeneric, testDecline
	} else {
		s.rep.Status, s.rep.Brand, s.rep.Last4, s.rep.CardCountry = payd.CardProcessing, "visa", "4242", "DE"
	}
	back := s.req.ReturnURL
	p.mu.Unlock()
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// startCardPayd runs payd in the test's process with the test provider,
// and makes a business with a wallet.
func startCardPayd(t *testing.T) (*paydServer, *testCard) {
	t.Helper()
	s := &paydServer{t: t, bin: paydBinary(t), db: "sqlite:" + filepath.Join(t.TempDir(), "payd.db")}
	prov := newTestCard(t)
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.NewOffset()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := store.Open(ctx, s.db, clk, log)
	if err != nil {
		t.Fatal(err)
	}
	db.SetKeyIdentity(hd.KeyIdentity)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s.biz = s.newBusiness("Ada's Books")
	s.key = s.biz["secret_key"].(string)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := "http://" + ln.Addr().String()
	dn, err := devnet.New(ctx, db, clk, public+api.BasePath)
	if err != nil {
		t.Fatal(err)
	}
	nets := map[money.Network]payd.Network{}
	for _, n := range money.Networks {
		nets[n] = dn.Network(n)
	}
	rates := rate.NewRefresher([]payd.RateSource{rate.NewStatic(rate.DevQuotes())}, db, clk, log, 0, 0)
	rates.Start(ctx)
	srv, err := api.New(ctx, api.Options{Store: db, Clock: clk, Log: log, Rates: rates, Counter: api.NewMemoryCounter(clk),
		Dev: true, DevClock: clk, Devnet: dn, PublicURL: public, Networks: nets, Card: prov})
	if err != nil {
		t.Fatal(err)
	}
	var stops []func()
	for _, n := range money.Networks {
		w := watch.NewWatcher(db, nets[n], clk, log, watch.Options{Events: srv})
		w.Start(ctx)
		stops = append(stops, w.Stop)
	}
	pages, err := web.New(web.Options{API: srv, APIBase: api.BasePath, Clock: clk, Log: log, Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	pages.Mount(mux)
	hs := &http.Server{Handler: srv.Edge(mux), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	s.stop = func() {
		_ = hs.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		for _, stop := range stops {
			stop()
		}
		rates.Stop()
		cancel()
		db.Close()
	}
	t.Cleanup(s.stop)
	s.origin, s.api = public, public+api.BasePath
	return s, prov
}

// deliverCard is the provider delivering a charged card checkout's coin to
// its deposit on the devnet, and the network confirming it.
func (s *paydServer) deliverCard(id string) {
	s.t.Helper()
	k := s.checkout(id)["card"].(map[string]any)
	s.must("POST", "/devnet/transfers", "", map[string]any{"network": k["network"], "asset": k["asset"],
		"to": k["address"], "amount": k["amount"]})
	req := s.checkout(id)["confirmations"].(map[string]any)["required"].(float64)
	s.mine(k["network"].(string), int(req))
}

// cardOf is a checkout's card object, read through the public API.
func (s *paydServer) cardOf(id string) map[string]any {
	return s.checkout(id)["card"].(map[string]any)
}

// jsonOf pretty-prints v for a failure message.
func jsonOf(v any) string { b, _ := json.MarshalIndent(v, "", " "); return string(b) }
