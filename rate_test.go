package payd

import (
	"testing"

	"payd/money"
)

// TestFixedRates checks which prices need a market snapshot and that the
// fixed ones convert without any (spec 2.11 rule 8).
func TestFixedRates(t *testing.T) {
	for _, c := range []struct {
		cur   money.Currency
		asset money.Asset
		need  bool
	}{
		{money.USD, "", false}, {money.USD, money.USDC, false}, {money.USD, money.USDT, false},
		{money.USD, money.BTC, true}, {money.EUR, "", true}, {money.EUR, money.USDC, true},
	} {
		if got := NeedsRates(c.cur, c.asset); got != c.need {
			t.Errorf("NeedsRates(%s, %q) = %v, want %v", c.cur, c.asset, got, c.need)
		}
	}
	var none *ExchangeRates
	if r := none.USDPerUnit(money.USD); r.String() != "1" {
		t.Errorf("USD without a snapshot = %s, want 1", r)
	}
	if !none.USDPerUnit(money.EUR).IsZero() || none.CoinCents(money.ETH) != 0 || none.CoinCents(money.USDT) != 100 {
		t.Errorf("without a snapshot: EUR %s, ETH %d, USDT %d; want 0, 0, 100",
			none.USDPerUnit(money.EUR), none.CoinCents(money.ETH), none.CoinCents(money.USDT))
	}
	x := &ExchangeRates{Coins: map[money.Asset]int64{money.ETH: 320_000, money.USDC: 99},
		Fiat: map[money.Currency]money.Rate{money.EUR: money.MustRate("1.08")}}
	if x.CoinCents(money.ETH) != 320_000 || x.CoinCents(money.USDC) != 100 || x.USDPerUnit(money.EUR).String() != "1.08" {
		t.Errorf("snapshot: ETH %d, USDC %d, EUR %s", x.CoinCents(money.ETH), x.CoinCents(money.USDC), x.USDPerUnit(money.EUR))
	}
}
