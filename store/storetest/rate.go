package storetest

import (
	"math"
	"reflect"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// snapshot returns an exchange-rate snapshot taken at.
func snapshot(at time.Time, btcCents int64) *payd.ExchangeRates {
	return &payd.ExchangeRates{
		ID:    payd.NewID("rat_"),
		Coins: map[money.Asset]int64{money.BTC: btcCents, money.USDC: 100},
		Fiat: map[money.Currency]money.Rate{
			money.USD: money.MustRate("1"),
			// 18 fractional digits: a float64 would lose the last ones.
			money.EUR: money.MustRate("1.084200000000000001"),
		},
		Sources:   []string{"coinbase", "kraken"},
		CreatedAt: at,
	}
}

func testExchangeRates(t *testing.T, b *bundle) {
	t.Run("EmptyIsNotFound", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, err := st.LatestExchangeRates(ctx)
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("LatestIsExact", func(t *testing.T) {
		ctx, st := b.setup(t)
		must(t, st.CreateExchangeRates(ctx, snapshot(t0, 1)))
		want := snapshot(t0.Add(time.Minute), math.MaxInt64)
		must(t, st.CreateExchangeRates(ctx, want))
		must(t, st.CreateExchangeRates(ctx, snapshot(t0.Add(-time.Minute), 2)))
		got, err := st.LatestExchangeRates(ctx)
		must(t, err)
		wantSnapshot(t, got, want)
	})
	t.Run("DetailAndByID", func(t *testing.T) {
		ctx, st := b.setup(t)
		old := snapshot(t0, 1) // made before the detail was kept
		must(t, st.CreateExchangeRates(ctx, old))
		x := snapshot(t0.Add(time.Minute), 2)
		x.Coins[money.TRX] = 12
		x.Detail = &payd.RateDetail{
			Sources: []payd.SourceState{
				{Name: "coinbase", Status: payd.SourceAnswered, AsOf: t0.Add(time.Minute), Dropped: []payd.DroppedValue{
					{Code: "BTC", Reason: payd.DropOutlier, Value: money.MustRate("80000"),
						Median: money.MustRate("66920.100000000000000001"), DeviationBps: 1954},
					{Code: "TRX", Reason: payd.DropImplausible, Value: money.MustRate("5000")}}},
				{Name: "ecb", Status: payd.SourceCached, AsOf: t0.Add(-24 * time.Hour)},
				{Name: "kraken", Status: payd.SourceFailed, Error: payd.SourceErrHTTPStatus, HTTPStatus: 503},
				{Name: "coingecko", Status: payd.SourceFailed, Error: payd.SourceErrTimeout},
			},
			Values: map[string]payd.ValueState{"BTC": {Sources: 2, SpreadBps: 3, AsOf: t0, Until: t0.Add(2 * time.Minute)},
				"EUR": {Sources: 1}, "AUD": {Sources: 2, SpreadBps: 5, AsOf: t0.Add(-24 * time.Hour), Until: t0.Add(120 * time.Hour),
					Note: payd.ValueCarried}, "TRX": {Sources: 1, Note: payd.ValueBelowOneCent}},
		}
		must(t, st.CreateExchangeRates(ctx, x))
		got, err := st.ExchangeRatesByID(ctx, x.ID)
		must(t, err)
		wantSnapshot(t, got, x)
		if !reflect.DeepEqual(got.Detail, x.Detail) {
			t.Errorf("detail = %+v\nwant     %+v", got.Detail, x.Detail)
		}
		got, err = st.ExchangeRatesByID(ctx, old.ID)
		must(t, err)
		if got.Detail != nil {
			t.Errorf("old snapshot has detail %+v", got.Detail)
		}
		_, err = st.ExchangeRatesByID(ctx, "xr_none")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("DeleteBeforeKeepsWhatACheckoutNames", func(t *testing.T) {
		ctx, st := b.setup(t)
		quoted, old, newest := snapshot(t0, 1), snapshot(t0.Add(time.Second), 2), snapshot(t0.Add(time.Minute), 3)
		for _, x := range []*payd.ExchangeRates{quoted, old, newest} {
			must(t, st.CreateExchangeRates(ctx, x))
		}
		p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
		c := mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.Crypto.ExchangeRatesID = quoted.ID })
		wantCheckout(t, st, c)
		n, err := st.DeleteExchangeRatesBefore(ctx, t0.Add(time.Hour))
		must(t, err)
		if n != 1 {
			t.Fatalf("deleted %d snapshots, want 1", n)
		}
		if _, err := st.ExchangeRatesByID(ctx, quoted.ID); err != nil {
			t.Fatalf("the quoted snapshot is gone: %v", err)
		}
		_, err = st.ExchangeRatesByID(ctx, old.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("DeleteBeforeKeepsTheNewest", func(t *testing.T) {
		ctx, st := b.setup(t)
		old, newest := snapshot(t0, 1), snapshot(t0.Add(time.Minute), 2)
		must(t, st.CreateExchangeRates(ctx, old))
		must(t, st.CreateExchangeRates(ctx, newest))
		n, err := st.DeleteExchangeRatesBefore(ctx, t0.Add(time.Hour))
		must(t, err)
		if n != 1 {
			t.Fatalf("deleted %d snapshots, want 1", n)
		}
		got, err := st.LatestExchangeRates(ctx)
		must(t, err)
		wantSnapshot(t, got, newest)
		if n, err = st.DeleteExchangeRatesBefore(ctx, t0.Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("second delete = %d, %v; want 0, nil", n, err)
		}
	})
}

func wantSnapshot(t *testing.T, got, want *payd.ExchangeRates) {
	t.Helper()
	ok := got.ID == want.ID && got.CreatedAt.Equal(want.CreatedAt) &&
		len(got.Coins) == len(want.Coins) && len(got.Fiat) == len(want.Fiat) &&
		len(got.Sources) == len(want.Sources)
	for a, c := range want.Coins {
		ok = ok && got.Coins[a] == c
	}
	for c, r := range want.Fiat {
		ok = ok && got.Fiat[c].String() == r.String()
	}
	for i := range want.Sources {
		ok = ok && got.Sources[i] == want.Sources[i]
	}
	if !ok {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
}
