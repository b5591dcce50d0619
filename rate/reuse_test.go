package rate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

func TestSourcesStateTheirValidity(t *testing.T) {
	tests := []struct {
		source payd.RateSource
		want   time.Duration
	}{
		{NewCoinbase(nil, ""), 2 * time.Minute},
		{NewKraken(nil, ""), 2 * time.Minute},
		{NewCoinGecko(nil, "", ""), 2 * time.Minute},
		{NewECB(nil, "", nil), 6 * 24 * time.Hour},
		{NewBankOfCanada(nil, ""), 6 * 24 * time.Hour},
		{NewStatic(DevQuotes()), forever},
	}
	for _, tt := range tests {
		d, ok := tt.source.(Durable)
		if !ok {
			t.Errorf("%s is not Durable", tt.source.Name())
		} else if got := d.Validity(); got != tt.want {
			t.Errorf("%s: validity %v, want %v", tt.source.Name(), got, tt.want)
		}
	}
	if _, ok := payd.RateSource(failing("x")).(Durable); ok {
		t.Error("the test fake claims a validity")
	}
}

func TestCombineMarksCachedReports(t *testing.T) {
	x, err := combine([]Report{
		{Source: "kraken", Quotes: quotes(t, coinsOnly)},
		{Source: "ecb", Quotes: quotes(t, fiatOnly), Cached: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Sources, []string{"kraken", "ecb (cached)"}) {
		t.Errorf("sources = %v", x.Sources)
	}
}

// wantSnapshot refreshes and checks the snapshot's sources and one value.
func wantSnapshot(t *testing.T, b *refresherBundle, sources []string, check func(*payd.ExchangeRates) bool) {
	t.Helper()
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatalf("at +%s: %v", b.clock.Now().Sub(fileDay), err)
	}
	x, err := b.r.Fresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !x.CreatedAt.Equal(b.clock.Now()) || !slices.Equal(x.Sources, sources) || !check(x) {
		t.Fatalf("at +%s: snapshot %s from %v, coins %v, fiat %v; want sources %v",
			b.clock.Now().Sub(fileDay), x.CreatedAt, x.Sources, x.Coins, x.Fiat, sources)
	}
}

func TestRefresherReusesTheECBReportForSixDaysFromItsDate(t *testing.T) {
	var down atomic.Bool
	ecbFile := readTestdata(t, "ecb_daily.xml")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Write(ecbFile)
	}))
	t.Cleanup(srv.Close)
	b := &refresherBundle{clock: clock.NewFake(fileDay), store: newMemStore(), static: NewStatic(payd.Quotes{Coins: DevQuotes().Coins})}
	ecb := NewECB(srv.Client(), srv.URL, b.clock)
	b.r = NewRefresher([]payd.RateSource{b.static, ecb}, b.store, b.clock, slog.New(slog.NewTextHandler(b, nil)), 0, 0)
	ecbEUR := func(x *payd.ExchangeRates) bool { return x.Fiat[money.EUR].String() == "1.0866" }

	wantSnapshot(t, b, []string{"static", "ecb"}, ecbEUR)
	down.Store(true)
	// Every hour the cached fiat keeps snapshots coming, up to the last
	// refresh before the file's reference date is six days old.
	refDay := fileDay.Truncate(24 * time.Hour)
	for b.clock.Now().Sub(refDay) < ECBValidity-time.Hour {
		b.clock.Advance(time.Hour)
		wantSnapshot(t, b, []string{"static", "ecb (cached)"}, ecbEUR)
	}
	b.clock.Advance(time.Hour - time.Second)
	wantSnapshot(t, b, []string{"static", "ecb (cached)"}, ecbEUR)
	if n := b.store.len(); n != 1+128+1 {
		t.Errorf("%d snapshots stored, want one per refresh", n)
	}
	for _, want := range []string{"rate: source failed, using its cached report", "source=ecb", "HTTP 503",
		"fetched_at=2024-05-17T15:00:00.000Z", "as_of=2024-05-17T00:00:00.000Z", "age=143h59m59s",
		"expires_at=2024-05-23T00:00:00.000Z"} {
		if !strings.Contains(b.logged(), want) {
			t.Fatalf("log lacks %q:\n%s", want, b.logged())
		}
	}

	// Six days after its date the report has expired, and so have the
	// values taken from it: the snapshot has coins but no fiat, so only
	// prices in a currency other than USD are refused.
	b.clock.Advance(time.Second)
	for range 2 {
		if err := b.r.RunOnce(context.Background()); err != nil {
			t.Fatalf("RunOnce at +6d = %v", err)
		}
		x, err := b.r.Fresh(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if m := Missing(x); !slices.Equal(m, []string{"EUR", "GBP", "CAD", "AUD"}) {
			t.Errorf("missing %v", m)
		}
		if x.Lacks(money.EUR, "") != "EUR" || x.Lacks(money.USD, money.BTC) != "" {
			t.Errorf("Lacks: %v", x.Fiat)
		}
		b.clock.Advance(DefaultInterval)
	}
	log := b.logged()
	if !strings.Contains(log, `msg="rate: no agreed value, left out of the snapshot: prices needing it are refused" codes="[EUR GBP CAD AUD]"`) {
		t.Errorf("log lacks the missing values:\n%s", log)
	}
	if n := strings.Count(log, "rate: cached report expired, source skipped"); n != 1 {
		t.Errorf("expiry logged %d times:\n%s", n, log)
	}
	if !strings.Contains(log, "validity=144h0m0s") || !strings.Contains(log, `msg="rate: source skipped" source=ecb`) {
		t.Errorf("log lacks the expiry's validity or the skip after it:\n%s", log)
	}

	// The ECB answers again, but with the same file, now too old to use.
	down.Store(false)
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if x, _ := b.r.Latest(context.Background()); !x.USDPerUnit(money.EUR).IsZero() || stateOf(t, x, "ecb").Error != payd.SourceErrStale {
		t.Errorf("EUR %s from a six-day-old file; ecb %+v", x.USDPerUnit(money.EUR), stateOf(t, x, "ecb"))
	}
	if !strings.Contains(b.logged(), `msg="rate: source's values too old, source skipped" source=ecb`) {
		t.Errorf("log lacks the refusal of the old file:\n%s", b.logged())
	}
}

func TestRefresherDropsACoinSourceAfterTwoMinutes(t *testing.T) {
	coin := func(name, btc string) *switchable {
		return &switchable{name: name, validity: CoinValidity, q: quotes(t, with(coinsOnly, "BTC", btc))}
	}
	a, c, d := coin("a", "64000"), coin("c", "64100"), coin("d", "64300")
	b := setup(t, a, c, d)
	b.static.Set(payd.Quotes{Fiat: DevQuotes().Fiat})
	btc := func(cents int64) func(*payd.ExchangeRates) bool {
		return func(x *payd.ExchangeRates) bool { return x.Coins[money.BTC] == cents }
	}

	wantSnapshot(t, b, []string{"static", "a", "c", "d"}, btc(6_410_000))
	d.fail(true)
	b.clock.Advance(DefaultInterval)
	wantSnapshot(t, b, []string{"static", "a", "c", "d (cached)"}, btc(6_410_000))
	b.clock.Advance(CoinValidity - DefaultInterval - time.Second)
	wantSnapshot(t, b, []string{"static", "a", "c", "d (cached)"}, btc(6_410_000))
	// Two minutes after its last answer d is out: the median of a and c.
	b.clock.Advance(time.Second)
	wantSnapshot(t, b, []string{"static", "a", "c"}, btc(6_405_000))
	if !strings.Contains(b.logged(), `msg="rate: cached report expired, source skipped" source=d`) {
		t.Errorf("log:\n%s", b.logged())
	}
	b.clock.Advance(DefaultInterval)
	wantSnapshot(t, b, []string{"static", "a", "c"}, btc(6_405_000))
	// Back, and fresh again.
	d.fail(false)
	b.clock.Advance(DefaultInterval)
	wantSnapshot(t, b, []string{"static", "a", "c", "d"}, btc(6_410_000))
}

func TestRefresherNeverReusesASourceWithoutValidity(t *testing.T) {
	var calls atomic.Int32
	once := fakeSource{name: "once", fetch: func(context.Context) (payd.Quotes, error) {
		if calls.Add(1) > 1 {
			return payd.Quotes{}, errors.New("connection refused")
		}
		return quotes(t, map[string]string{"GBP": "1.29"}), nil
	}}
	b := setup(t, once)
	gbp := func(want string) func(*payd.ExchangeRates) bool {
		return func(x *payd.ExchangeRates) bool { return x.Fiat[money.GBP].String() == want }
	}
	wantSnapshot(t, b, []string{"static", "once"}, gbp("1.28"))
	b.clock.Advance(time.Second)
	wantSnapshot(t, b, []string{"static"}, gbp("1.27"))
	if log := b.logged(); !strings.Contains(log, `msg="rate: source skipped" source=once`) || strings.Contains(log, "cached") {
		t.Errorf("log:\n%s", log)
	}
}

func TestRefresherReusesTheStaticTableForever(t *testing.T) {
	b := setup(t)
	wantSnapshot(t, b, []string{"static"}, func(x *payd.ExchangeRates) bool { return true })
	b.static.Set(quotes(t, map[string]string{"BTC": "0.5"})) // absurd: Fetch fails
	b.clock.Advance(10 * 365 * 24 * time.Hour)
	wantSnapshot(t, b, []string{"static (cached)"}, func(x *payd.ExchangeRates) bool { return x.Coins[money.BTC] == 6_400_000 })
	if log := b.logged(); !strings.Contains(log, "BTC at 0.5") || strings.Contains(log, "expires_at") {
		t.Errorf("log:\n%s", log)
	}
}

func TestRefresherCutShortMakesAndLogsNothing(t *testing.T) {
	b := setup(t)
	wantSnapshot(t, b, []string{"static"}, func(x *payd.ExchangeRates) bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.clock.Advance(time.Minute)
	if err := b.r.RunOnce(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("RunOnce = %v, want context.Canceled", err)
	}
	if b.store.len() != 1 || b.logged() != "" {
		t.Errorf("%d snapshots; log:\n%s", b.store.len(), b.logged())
	}
}
