package rate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// fileDay is 15:00 UTC on the day of testdata/ecb_daily.xml, where every
// test's clock starts.
var fileDay = time.Date(2024, 5, 17, 15, 0, 0, 0, time.UTC)

// memStore is an in-memory payd.RateStore.
type memStore struct {
	mu     sync.Mutex
	rows   []*payd.ExchangeRates
	pruned []time.Time
	fail   error // returned by CreateExchangeRates when set
}

func newMemStore() *memStore { return &memStore{} }

func (s *memStore) CreateExchangeRates(_ context.Context, x *payd.ExchangeRates) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.rows = append(s.rows, x)
	return nil
}

func (s *memStore) LatestExchangeRates(context.Context) (*payd.ExchangeRates, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rows) == 0 {
		return nil, payd.Errorf(payd.ErrNotFound, "no exchange rates")
	}
	return slices.MaxFunc(s.rows, func(a, b *payd.ExchangeRates) int { return a.CreatedAt.Compare(b.CreatedAt) }), nil
}

func (s *memStore) ExchangeRatesByID(_ context.Context, id string) (*payd.ExchangeRates, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.rows {
		if x.ID == id {
			return x, nil
		}
	}
	return nil, payd.Errorf(payd.ErrNotFound, "no exchange rates %s", id)
}

func (s *memStore) DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (int, error) {
	newest, err := s.LatestExchangeRates(ctx)
	if err != nil {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruned = append(s.pruned, t)
	n := len(s.rows)
	s.rows = slices.DeleteFunc(s.rows, func(x *payd.ExchangeRates) bool { return x != newest && x.CreatedAt.Before(t) })
	return n - len(s.rows), nil
}

func (s *memStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

// fakeSource is a payd.RateSource whose Fetch the test writes.
type fakeSource struct {
	name  string
	fetch func(ctx context.Context) (payd.Quotes, error)
}

func (f fakeSource) Name() string                                   { return f.name }
func (f fakeSource) Fetch(ctx context.Context) (payd.Quotes, error) { return f.fetch(ctx) }

// switchable is a source that answers with its quotes until failed is set.
type switchable struct {
	name     string
	validity time.Duration
	mu       sync.Mutex
	q        payd.Quotes
	failed   bool
}

func (s *switchable) Name() string            { return s.name }
func (s *switchable) Validity() time.Duration { return s.validity }

func (s *switchable) Fetch(context.Context) (payd.Quotes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return payd.Quotes{}, errors.New("HTTP 503")
	}
	return s.q, nil
}

// fail makes the source fail (true) or answer again (false).
func (s *switchable) fail(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = v
}

// quotes builds quotes from decimal strings keyed by coin or currency code.
func quotes(t *testing.T, kv map[string]string) payd.Quotes {
	t.Helper()
	q := payd.Quotes{Coins: map[money.Asset]money.Rate{}, Fiat: map[money.Currency]money.Rate{}}
	for k, v := range kv {
		r := money.MustRate(v)
		if _, ok := money.ParseAsset(k); ok || slices.Contains(money.FeeCoins, money.Asset(k)) {
			q.Coins[money.Asset(k)] = r
		} else if c, ok := money.ParseCurrency(k); ok {
			q.Fiat[c] = r
		} else {
			t.Fatalf("quotes: unknown code %q", k)
		}
	}
	return q
}

// quoteStrings flattens quotes into code → decimal string for comparison.
func quoteStrings(q payd.Quotes) map[string]string {
	out := map[string]string{}
	for a, r := range q.Coins {
		out[string(a)] = r.String()
	}
	for c, r := range q.Fiat {
		out[string(c)] = r.String()
	}
	return out
}

// reply is a canned answer: a status and a testdata file or literal body.
type reply struct {
	status int
	file   string
	body   string
}

// serve answers each path with its reply and records the requests made.
func serve(t *testing.T, replies map[string]reply) (*httptest.Server, *[]*http.Request) {
	t.Helper()
	var mu sync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		rep, ok := replies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		body := []byte(rep.body)
		if rep.file != "" {
			body = readTestdata(t, rep.file)
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		w.WriteHeader(rep.status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// combine is Combine with no previous snapshot to carry values from.
func combine(reports []Report) (*payd.ExchangeRates, error) {
	return Combine(reports, nil, time.Time{})
}
