package rate

import (
	"context"
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

// The tests of issue 17: one source down, one far off, all stale, and the
// central banks closed over a weekend, each against the real sources'
// recorded answers where the shape matters.

// liveSources are the default live sources, all served by srv.
func liveSources(srv *httptest.Server, clk clock.Clock) []payd.RateSource {
	c := srv.Client()
	return []payd.RateSource{NewCoinbase(c, srv.URL), NewKraken(c, srv.URL), NewCoinGecko(c, srv.URL, ""),
		NewECB(c, srv.URL, clk), NewBankOfCanada(c, srv.URL)}
}

// allReplies answers every live source from testdata.
func allReplies() map[string]reply {
	r := coinbaseReplies()
	r[krakenPath] = reply{file: "kraken_ticker.json"}
	r[geckoPath] = reply{file: "coingecko_simple_price.json"}
	r[ecbPath] = reply{file: "ecb_daily.xml"}
	r[bocPath] = reply{file: "boc_fx_rates_daily.json"}
	return r
}

// newLive is a refresher over the live sources of replies.
func newLive(t *testing.T, replies map[string]reply, at time.Time) *refresherBundle {
	srv, _ := serve(t, replies)
	b := &refresherBundle{clock: clock.NewFake(at), store: newMemStore()}
	b.r = NewRefresher(liveSources(srv, b.clock), b.store, b.clock, slog.New(slog.NewTextHandler(b, nil)), 0, 0)
	return b
}

// stateOf is the named source's line in x's Detail.
func stateOf(t *testing.T, x *payd.ExchangeRates, name string) payd.SourceState {
	t.Helper()
	for _, s := range x.Detail.Sources {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no %s in %+v", name, x.Detail.Sources)
	return payd.SourceState{}
}

func TestLiveSourcesAllAnswer(t *testing.T) {
	b := newLive(t, allReplies(), fileDay)
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, _ := b.r.Fresh(context.Background())
	// BTC: the median of coinbase 66913.625, kraken 66920.1, coingecko 66905.
	if x.Coins[money.BTC] != 6_691_363 || x.Coins[money.POL] != 71 || x.Coins[money.TRX] != 12 {
		t.Errorf("coins %v", x.Coins)
	}
	// EUR: mean of the ECB's 1.0866 and the Bank of Canada's 1.4803/1.3620.
	if x.Fiat[money.EUR].String() != "1.0867287812" {
		t.Errorf("EUR %s", x.Fiat[money.EUR])
	}
	if v := x.Detail.Values["BTC"]; v.Sources != 3 || v.SpreadBps != 2 {
		t.Errorf("BTC state %+v", v)
	}
	if v := x.Detail.Values["EUR"]; v.Sources != 2 || v.SpreadBps != 2 {
		t.Errorf("EUR state %+v", v)
	}
	if v := x.Detail.Values["POL"]; v.Sources != 2 {
		t.Errorf("POL state %+v", v)
	}
	ecb := stateOf(t, x, "ecb")
	if ecb.Status != payd.SourceAnswered || !ecb.AsOf.Equal(time.Date(2024, 5, 17, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ecb %+v", ecb)
	}
	if k := stateOf(t, x, "kraken"); !k.AsOf.Equal(fileDay) {
		t.Errorf("kraken as of %s, want the fetch", k.AsOf)
	}
}

func TestOneSourceDownTheOthersCarryOn(t *testing.T) {
	replies := allReplies()
	replies[coinbaseBTC] = reply{status: http.StatusServiceUnavailable, body: `{"errors":[{"id":"unavailable"}]}`}
	b := newLive(t, replies, fileDay)
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, err := b.r.Fresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The median of kraken's 66920.1 and coingecko's 66905.
	if x.Coins[money.BTC] != 6_691_255 {
		t.Errorf("BTC %d", x.Coins[money.BTC])
	}
	cb := stateOf(t, x, "coinbase")
	if cb.Status != payd.SourceFailed || cb.Error != payd.SourceErrHTTPStatus || cb.HTTPStatus != 503 || !cb.AsOf.IsZero() {
		t.Errorf("coinbase %+v", cb)
	}
	if v := x.Detail.Values["BTC"]; v.Sources != 2 {
		t.Errorf("BTC state %+v", v)
	}
	if !strings.Contains(b.logged(), `msg="rate: source skipped" source=coinbase`) {
		t.Errorf("log:\n%s", b.logged())
	}
}

func TestOneSourceFarOffIsDroppedAndLogged(t *testing.T) {
	far := `{"data":{"amount":"80000.00","base":"BTC","currency":"USD"}}`
	replies := allReplies()
	replies[coinbaseBTC] = reply{body: far}
	b := newLive(t, replies, fileDay)
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, _ := b.r.Fresh(context.Background())
	// As if coinbase had not reported BTC: the median of kraken and coingecko.
	if x.Coins[money.BTC] != 6_691_255 {
		t.Errorf("BTC %d", x.Coins[money.BTC])
	}
	// Its other coins are still used.
	if v := x.Detail.Values["ETH"]; v.Sources != 3 {
		t.Errorf("ETH state %+v", v)
	}
	cb := stateOf(t, x, "coinbase")
	want := payd.DroppedValue{Code: "BTC", Value: money.MustRate("80000"), Median: money.MustRate("66920.1"), DeviationBps: 1954}
	if cb.Status != payd.SourceAnswered || len(cb.Dropped) != 1 || cb.Dropped[0].Code != want.Code ||
		cb.Dropped[0].Value.String() != want.Value.String() || cb.Dropped[0].Median.String() != want.Median.String() ||
		cb.Dropped[0].DeviationBps != want.DeviationBps {
		t.Errorf("coinbase %+v, want dropped %+v", cb, want)
	}
	if v := x.Detail.Values["BTC"]; v.Sources != 2 {
		t.Errorf("BTC state %+v", v)
	}
	for _, s := range []string{`msg="rate: source far from the others, dropped" source=coinbase code=BTC value=80000`,
		"median=66920.1", "deviation_bps=1954"} {
		if !strings.Contains(b.logged(), s) {
			t.Errorf("log lacks %q:\n%s", s, b.logged())
		}
	}
}

func TestTwoSourcesThatDisagreeAreBothDropped(t *testing.T) {
	x, err := combine([]Report{
		{Source: "a", Quotes: quotes(t, with(coinsOnly, "EUR", "1.08", "GBP", "1.27", "CAD", "0.73", "AUD", "0.66"))},
		{Source: "b", Quotes: quotes(t, with(coinsOnly, "EUR", "1.20", "GBP", "1.271", "CAD", "0.73", "AUD", "0.66"))},
	})
	if err != nil || !slices.Equal(Missing(x), []string{"EUR"}) || x.Fiat[money.GBP].String() != "1.2705" {
		t.Fatalf("Combine = %v, %v; want EUR missing", x, err)
	}
	// Within the limit, both count.
	x, err = combine([]Report{
		{Source: "a", Quotes: quotes(t, with(coinsOnly, "EUR", "1.08", "GBP", "1.27", "CAD", "0.73", "AUD", "0.66"))},
		{Source: "b", Quotes: quotes(t, with(coinsOnly, "EUR", "1.09", "GBP", "1.27", "CAD", "0.73", "AUD", "0.66"))},
	})
	if err != nil || x.Fiat[money.EUR].String() != "1.085" || x.Detail.Values["EUR"].SpreadBps != 92 {
		t.Fatalf("Combine = %v, %v", x, err)
	}
}

func TestFeeCoinsAreOptional(t *testing.T) {
	x, err := combine([]Report{{Source: "a", Quotes: quotes(t, with(with(coinsOnly, "EUR", "1.08", "GBP", "1.27", "CAD", "0.73", "AUD", "0.66")))}})
	if err != nil {
		t.Fatal(err)
	}
	if x.CoinCents(money.TRX) != 0 || x.CoinCents(money.POL) != 0 {
		t.Errorf("fee coins priced from nothing: %v", x.Coins)
	}
	if money.TRX.Valid() || money.POL.Valid() || string(money.TRX) != "TRX" {
		t.Error("a fee coin is a coin payd accepts")
	}
}

func TestAllSourcesStaleRefusesASnapshot(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		rep, ok := allReplies()[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(readTestdata(t, rep.file))
	}))
	t.Cleanup(srv.Close)
	b := &refresherBundle{clock: clock.NewFake(fileDay), store: newMemStore()}
	b.r = NewRefresher(liveSources(srv, b.clock), b.store, b.clock, slog.New(slog.NewTextHandler(b, nil)), 0, 0)
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	// Within the coins' validity the kept reports stand in.
	b.clock.Advance(CoinValidity - time.Second)
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, _ := b.r.Latest(ctx)
	if s := stateOf(t, x, "kraken"); s.Status != payd.SourceCached || !s.AsOf.Equal(fileDay) {
		t.Errorf("kraken %+v", s)
	}
	// Then every coin source is past its limit, and so are the coin
	// values the last snapshot could carry: the snapshot is made with the
	// banks' rates (cached, six days) and no coin, so a coin checkout is
	// refused from now on.
	b.clock.Advance(time.Second)
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := b.r.Fresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := Missing(x); !slices.Equal(m, []string{"BTC", "ETH", "SOL"}) || x.Lacks(money.USD, money.BTC) != "BTC" {
		t.Errorf("missing %v", m)
	}
	if x.Lacks(money.EUR, "") != "" {
		t.Errorf("EUR lacking: %v", x.Fiat)
	}
	// When nothing at all is left (the banks' files past six days too),
	// no snapshot is made and the last serves on for the max age.
	b.clock.Advance(ReferenceValidity)
	if err := b.r.RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "no source reported BTC, ETH, SOL, EUR, GBP, CAD, AUD") {
		t.Fatalf("RunOnce = %v", err)
	}
	_, err = b.r.Fresh(ctx)
	wantUnavailable(t, err)
	// A USD price in a stablecoin needs none of it.
	if payd.NeedsRates(money.USD, money.USDC) || !payd.NeedsRates(money.USD, money.BTC) {
		t.Error("NeedsRates")
	}
}

func TestCentralBanksClosedOverAWeekend(t *testing.T) {
	// Both banks go on answering Friday 2024-05-17's rates (the files of
	// testdata) all weekend, as they do.
	friday := time.Date(2024, 5, 17, 0, 0, 0, 0, time.UTC)
	b := newLive(t, allReplies(), friday.Add(22*time.Hour))
	ctx := context.Background()
	for _, at := range []time.Duration{22 * time.Hour, 36 * time.Hour, 60 * time.Hour, 84 * time.Hour, 4 * 24 * time.Hour} {
		b.clock.Set(friday.Add(at))
		if err := b.r.RunOnce(ctx); err != nil {
			t.Fatalf("at Friday +%s: %v", at, err)
		}
		x, _ := b.r.Fresh(ctx)
		for _, name := range []string{"ecb", "bankofcanada"} {
			if s := stateOf(t, x, name); s.Status != payd.SourceAnswered || !s.AsOf.Equal(friday) {
				t.Errorf("at Friday +%s: %s %+v", at, name, s)
			}
		}
		if x.Detail.Values["EUR"].Sources != 2 {
			t.Errorf("at Friday +%s: EUR %+v", at, x.Detail.Values["EUR"])
		}
	}
	// Six days after Friday the same files are too old: no fiat rate,
	// nor one to carry.
	b.clock.Set(friday.Add(ReferenceValidity))
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if x, _ := b.r.Fresh(ctx); !slices.Equal(Missing(x), []string{"EUR", "GBP", "CAD", "AUD"}) {
		t.Errorf("missing %v", Missing(x))
	}
	for _, s := range []string{`msg="rate: source's values too old, source skipped" source=ecb`,
		`msg="rate: source's values too old, source skipped" source=bankofcanada`} {
		if !strings.Contains(b.logged(), s) {
			t.Errorf("log lacks %q:\n%s", s, b.logged())
		}
	}
}
