package money

import (
	"fmt"
	"math/big"
)

// StableUSDCents is what one stablecoin counts as (spec 2.11 rule 8),
// whatever any source says.
const StableUSDCents = 100

// usdPrice is the coin's price in US cents as the rules use it: one dollar
// for a stablecoin whatever the source said, so a brief depeg never changes
// what a customer is asked to send.
func usdPrice(a Asset, priceUSDCents int64) int64 {
	if a.Stable() {
		return StableUSDCents
	}
	return priceUSDCents
}

// CoinFromUSDCents is a checkout's coin amount (spec 2.11 rule 8): the US
// value divided by the coin's price in US cents, rounded once to the coin's
// display Decimals, and returned in base units. For a stablecoin the price
// is taken as 100 cents and priceUSDCents is ignored. It fails for an
// unknown coin, a negative value, or a price that is not positive.
func CoinFromUSDCents(cents int64, a Asset, priceUSDCents int64) (CoinAmount, error) {
	if !a.Valid() {
		return CoinAmount{}, fmt.Errorf("money: unknown asset %q", a)
	}
	price := usdPrice(a, priceUSDCents)
	if cents < 0 || price <= 0 {
		return CoinAmount{}, fmt.Errorf("money: cannot quote %d US cents of %s at %d cents", cents, a, priceUSDCents)
	}
	// cents × 10^display ÷ price is the amount in display units.
	x := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(cents), pow10(a.Decimals())), big.NewInt(price))
	u := Round(x)
	u.Mul(u, pow10(a.BaseDecimals()-a.Decimals()))
	return CoinAmount{Asset: a, Units: u}, nil
}

// CoinToUSDCents is the US value of c at priceUSDCents per coin (one dollar
// for a stablecoin), rounded once to the nearest cent: what an arrival is
// worth and the wallet's _usd fields. It has no error because every input
// has an answer; only an amount worth more than int64 cents, far beyond all
// the money there is, is pinned to the int64 range.
func CoinToUSDCents(c CoinAmount, priceUSDCents int64) int64 {
	num := new(big.Int).Mul(c.units(), big.NewInt(usdPrice(c.Asset, priceUSDCents)))
	return clampInt64(new(big.Rat).SetFrac(num, pow10(c.Asset.BaseDecimals())))
}

// CoinRate is the amount of a checkout's rate object (spec 2.5): one coin
// in minor units of the price currency, that is the coin's price in US
// cents converted at usdRate and rounded once to the nearest minor unit. It
// is for display; amounts are always computed from the exact rates, never
// from this rounded figure.
func CoinRate(a Asset, priceUSDCents int64, c Currency, usdRate Rate) (int64, error) {
	if !a.Valid() || !c.Valid() {
		return 0, fmt.Errorf("money: no rate for %q in %q", a, c)
	}
	price := usdPrice(a, priceUSDCents)
	if price <= 0 {
		return 0, fmt.Errorf("money: %s has no positive price", a)
	}
	return FromUSDCents(price, usdRate)
}
