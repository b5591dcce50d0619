package rate

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// The tests of one bad value: a disagreement or an absurd fee coin costs
// only the prices that need that value (docs/rates.md, "When sources
// disagree").

func TestBanksDisagreeOnAUDOnlyAUDIsRefused(t *testing.T) {
	replies := allReplies()
	boc := strings.Replace(string(readTestdata(t, "boc_fx_rates_daily.json")), `"FXAUDCAD": {"v": "0.9110"}`, `"FXAUDCAD": {"v": "0.9700"}`, 1)
	replies[bocPath] = reply{body: boc}
	b := newLive(t, replies, fileDay)
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatalf("one currency in dispute stopped the snapshot: %v", err)
	}
	x, err := b.r.Fresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := Missing(x); !slices.Equal(m, []string{"AUD"}) {
		t.Errorf("missing %v, want AUD only", m)
	}
	// A USD price paid in BTC, and a EUR one, still quote; an AUD price
	// does not, whatever the coin.
	if x.Lacks(money.USD, money.BTC) != "" || x.Lacks(money.EUR, money.ETH) != "" || x.Coins[money.BTC] != 6_691_363 {
		t.Errorf("snapshot %+v", x)
	}
	if x.Lacks(money.AUD, "") != "AUD" || x.Lacks(money.AUD, money.BTC) != "AUD" {
		t.Errorf("AUD priced at %s", x.USDPerUnit(money.AUD))
	}
	for _, name := range []string{"ecb", "bankofcanada"} {
		if d := stateOf(t, x, name).Dropped; len(d) != 1 || d[0].Code != "AUD" || d[0].Reason != payd.DropOutlier {
			t.Errorf("%s dropped %+v", name, d)
		}
	}
	if _, ok := x.Detail.Values["AUD"]; ok {
		t.Errorf("AUD state %+v", x.Detail.Values["AUD"])
	}
	if !strings.Contains(b.logged(), `codes=[AUD]`) {
		t.Errorf("log:\n%s", b.logged())
	}
}

// fiatPair is a refresher over static coins and two bank-like sources,
// each with the banks' freshness limit and a reference date.
func fiatPair(t *testing.T, asOf time.Time) (*refresherBundle, *switchable, *switchable) {
	q := quotes(t, fiatOnly)
	q.AsOf = asOf
	a := &switchable{name: "ecb", validity: ReferenceValidity, q: q}
	c := &switchable{name: "bankofcanada", validity: ReferenceValidity, q: q}
	b := &refresherBundle{clock: clock.NewFake(fileDay), store: newMemStore(), static: NewStatic(payd.Quotes{Coins: DevQuotes().Coins})}
	b.r = NewRefresher([]payd.RateSource{b.static, a, c}, b.store, b.clock, slog.New(slog.NewTextHandler(b, nil)), 0, 0)
	return b, a, c
}

func (s *switchable) set(q payd.Quotes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.q = q
}

func TestDisagreementCarriesThePreviousValue(t *testing.T) {
	day := fileDay.Truncate(24 * time.Hour)
	b, _, boc := fiatPair(t, day)
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := b.r.Latest(ctx)
	if v := first.Detail.Values["AUD"]; !v.AsOf.Equal(day) || !v.Until.Equal(day.Add(ReferenceValidity)) || v.Note != "" {
		t.Errorf("AUD state %+v", v)
	}
	// The Bank of Canada now says 0.70 against the ECB's 0.66: a spread
	// of 6 %, over the 4 % two sources may lie apart.
	far := quotes(t, with(fiatOnly, "AUD", "0.70"))
	far.AsOf = day.Add(24 * time.Hour)
	boc.set(far)
	b.clock.Advance(time.Hour)
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, _ := b.r.Fresh(ctx)
	v := x.Detail.Values["AUD"]
	if x.Fiat[money.AUD].String() != "0.66" || v.Note != payd.ValueCarried || !v.AsOf.Equal(day) ||
		!v.Until.Equal(day.Add(ReferenceValidity)) || v.Sources != 2 {
		t.Errorf("AUD %s, state %+v; want 0.66 carried with its date", x.Fiat[money.AUD], v)
	}
	if x.Detail.Values["EUR"].Note != "" || !x.Detail.Values["EUR"].AsOf.Equal(day) {
		t.Errorf("EUR state %+v", x.Detail.Values["EUR"])
	}
	if !strings.Contains(b.logged(), `msg="rate: no agreed value, previous one carried" code=AUD as_of=`) {
		t.Errorf("log:\n%s", b.logged())
	}
	// Carrying a carried value keeps its date: it is refused once the
	// first report's limit is past, not later.
	b.clock.Set(day.Add(ReferenceValidity - time.Minute))
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if x, _ := b.r.Fresh(ctx); x.Detail.Values["AUD"].Note != payd.ValueCarried {
		t.Errorf("AUD state %+v", x.Detail.Values["AUD"])
	}
	// At the limit the ECB's file is too old as well, so the Bank of
	// Canada's newer one stands alone, and nothing is carried.
	b.clock.Set(day.Add(ReferenceValidity))
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, _ = b.r.Fresh(ctx)
	if v := x.Detail.Values["AUD"]; x.Fiat[money.AUD].String() != "0.7" || v.Note != "" || v.Sources != 1 {
		t.Errorf("AUD %s, state %+v after the limit", x.Fiat[money.AUD], v)
	}
}

func TestCarryNeedsAValidityAndADate(t *testing.T) {
	prev, err := Combine([]Report{{Source: "fake", Quotes: quotes(t, with(coinsOnly, "EUR", "1.08"))}}, nil, fileDay)
	if err != nil {
		t.Fatal(err)
	}
	if v := prev.Detail.Values["EUR"]; !v.Until.IsZero() {
		t.Fatalf("a report with no validity gave EUR until %s", v.Until)
	}
	x, err := Combine([]Report{{Source: "fake", Quotes: quotes(t, coinsOnly)}}, prev, fileDay)
	if err != nil || !x.USDPerUnit(money.EUR).IsZero() {
		t.Errorf("Combine = %v, %v; EUR must not be carried", x, err)
	}
}

func TestAnAbsurdFeeCoinCostsOnlyItself(t *testing.T) {
	withTRX := func(v string) payd.RateSource {
		q := quotes(t, with(with(coinsOnly, "TRX", v, "POL", "0.40")))
		return fakeSource{name: "kraken", fetch: func(context.Context) (payd.Quotes, error) { return q, nil }}
	}
	b := setup(t, withTRX("5000"))
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, _ := b.r.Fresh(ctx)
	k := stateOf(t, x, "kraken")
	if k.Status != payd.SourceAnswered || len(k.Dropped) != 1 || k.Dropped[0].Code != "TRX" ||
		k.Dropped[0].Reason != payd.DropImplausible || k.Dropped[0].Value.String() != "5000" {
		t.Errorf("kraken %+v", k)
	}
	// Its other coins count: the static table's and kraken's BTC agree.
	if v := x.Detail.Values["BTC"]; v.Sources != 2 {
		t.Errorf("BTC state %+v", v)
	}
	if v := x.Detail.Values["TRX"]; v.Sources != 1 || x.Coins[money.TRX] != 12 {
		t.Errorf("TRX %d, state %+v; want the static table's alone", x.Coins[money.TRX], v)
	}
	if !strings.Contains(b.logged(), `msg="rate: fee coin price absurd, dropped" source=kraken code=TRX value=5000`) {
		t.Errorf("log:\n%s", b.logged())
	}
	// An absurd BTC still refuses the whole report.
	bad := fakeSource{name: "bad", fetch: func(context.Context) (payd.Quotes, error) {
		return quotes(t, with(coinsOnly, "BTC", "6.40")), nil
	}}
	b = setup(t, bad)
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	x, _ = b.r.Fresh(ctx)
	if s := stateOf(t, x, "bad"); s.Status != payd.SourceFailed || s.Error != payd.SourceErrImplausible {
		t.Errorf("bad %+v", s)
	}
}

func TestAFeeCoinUnderHalfACentIsLeftOut(t *testing.T) {
	x, err := combine([]Report{{Source: "a", Quotes: quotes(t, with(with(coinsOnly, "EUR", "1.08"), "TRX", "0.004", "POL", "0.40"))}})
	if err != nil {
		t.Fatalf("a fee coin under half a cent failed the snapshot: %v", err)
	}
	if _, ok := x.Coins[money.TRX]; ok || x.CoinCents(money.TRX) != 0 || x.Coins[money.POL] != 40 {
		t.Errorf("coins %v", x.Coins)
	}
	if v := x.Detail.Values["TRX"]; v.Note != payd.ValueBelowOneCent || v.Sources != 1 {
		t.Errorf("TRX state %+v", v)
	}
	// A fee coin only: a source that reports nothing else is still whole.
	if err := check("feeonly", quotes(t, map[string]string{"TRX": "0.12"})); err != nil {
		t.Error(err)
	}
	if err := check("feeonly", quotes(t, map[string]string{"TRX": "5000"})); !errors.Is(err, errEmpty) {
		t.Errorf("check = %v, want errEmpty", err)
	}
}

func TestSnapshotsKeepCategoriesNotErrorText(t *testing.T) {
	secret := errors.New(`rate: kraken: HTTP 503: "<html>upstream body with a token=abc</html>"`)
	x, err := combine([]Report{{Source: "static", Quotes: DevQuotes()},
		{Source: "kraken", Err: &sourceError{cat: payd.SourceErrHTTPStatus, status: 503, err: secret}},
		{Source: "odd", Err: secret}})
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, x, "kraken"); s.Error != payd.SourceErrHTTPStatus || s.HTTPStatus != 503 {
		t.Errorf("kraken %+v", s)
	}
	if s := stateOf(t, x, "odd"); s.Error != payd.SourceErrOther || s.HTTPStatus != 0 {
		t.Errorf("odd %+v", s)
	}
}

func TestFeeCoinsAloneMakeNoSnapshot(t *testing.T) {
	if x, err := combine([]Report{{Source: "a", Quotes: quotes(t, map[string]string{"POL": "0.40", "TRX": "0.12"})}}); err == nil {
		t.Errorf("Combine = %+v, want an error", x)
	}
}
