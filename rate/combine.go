package rate

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"payd"
	"payd/money"
)

// FiatDecimals is how many decimals a combined fiat rate keeps. Six is
// finer than any reference rate needs for a two-decimal price: a million
// units of a currency (above the spec's largest price) move by at most half
// a cent, and it keeps the mean of two ECB-derived quotients from carrying
// eighteen meaningless digits into every response.
const FiatDecimals = 6

// Report is one source's successful answer, as Combine takes it.
type Report struct {
	// Source is the source's Name, recorded in ExchangeRates.Sources.
	Source string
	// Quotes is what the source reported.
	Quotes payd.Quotes
	// Cached marks a report reused from an earlier refresh because the
	// source failed this time; Sources then lists it with CachedSuffix.
	Cached bool
}

// Combine builds one snapshot from the reports of the sources that
// answered. Per coin and per currency it takes the median of the reports
// that carry it; with an even count, the exact mean of the two middle
// values, so no source's rounding decides a tie. Coin prices become whole
// US cents (nearest, half away from zero) and fiat rates keep FiatDecimals
// decimals.
//
// Stablecoins are exactly 100 cents and USD exactly 1 whatever sources say
// (spec 2.11 rule 8), so they need no source. Every other coin and currency
// needs at least one, or Combine fails naming each one missing: a snapshot
// with a hole would make checkouts in that coin or currency fail later and
// less clearly. A cached report counts like a fresh one; only its entry in
// Sources differs. The ID and CreatedAt of the result are left to the
// caller.
func Combine(reports []Report) (*payd.ExchangeRates, error) {
	x := &payd.ExchangeRates{
		Coins: map[money.Asset]int64{},
		Fiat:  map[money.Currency]money.Rate{money.USD: money.MustRate("1")},
	}
	var missing []string
	for _, a := range money.Assets {
		cents, ok, err := combineCoin(reports, a)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			missing = append(missing, string(a))
		default:
			x.Coins[a] = cents
		}
	}
	for _, c := range money.Currencies {
		if c == money.USD {
			continue
		}
		m := median(reports, func(q payd.Quotes) (money.Rate, bool) { r, ok := q.Fiat[c]; return r, ok })
		if m == nil {
			missing = append(missing, string(c))
			continue
		}
		r, err := roundRate(m, FiatDecimals)
		if err != nil {
			return nil, fmt.Errorf("rate: combining %s: %w", c, err)
		}
		x.Fiat[c] = r
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("rate: no source reported %s", strings.Join(missing, ", "))
	}
	for _, r := range reports {
		name := r.Source
		if r.Cached {
			name += CachedSuffix
		}
		x.Sources = append(x.Sources, name)
	}
	return x, nil
}

// combineCoin returns the coin's price in US cents and whether any report
// (or, for stablecoins, the rule) gave one.
func combineCoin(reports []Report, a money.Asset) (int64, bool, error) {
	if a.Stable() {
		return 100, true, nil
	}
	m := median(reports, func(q payd.Quotes) (money.Rate, bool) { r, ok := q.Coins[a]; return r, ok })
	if m == nil {
		return 0, false, nil
	}
	cents := money.Round(m.Mul(m, big.NewRat(100, 1)))
	if !cents.IsInt64() || cents.Sign() <= 0 {
		return 0, false, fmt.Errorf("rate: %s combines to %s cents, which no checkout can quote", a, cents)
	}
	return cents.Int64(), true, nil
}

// median returns the median of the values pick finds in the reports, or nil
// when none has one. Zero values are skipped: they mean "unset", never a
// price, and check refuses them before sources get here.
func median(reports []Report, pick func(payd.Quotes) (money.Rate, bool)) *big.Rat {
	var vs []*big.Rat
	for _, r := range reports {
		if v, ok := pick(r.Quotes); ok && !v.IsZero() {
			vs = append(vs, v.Rat())
		}
	}
	if len(vs) == 0 {
		return nil
	}
	slices.SortFunc(vs, func(a, b *big.Rat) int { return a.Cmp(b) })
	mid := len(vs) / 2
	if len(vs)%2 == 1 {
		return vs[mid]
	}
	sum := new(big.Rat).Add(vs[mid-1], vs[mid])
	return sum.Quo(sum, big.NewRat(2, 1))
}

// roundRate rounds x to the given decimals, half away from zero, as Round
// does for cents.
func roundRate(x *big.Rat, decimals int) (money.Rate, error) {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	n := money.Round(new(big.Rat).Mul(x, new(big.Rat).SetInt(scale)))
	r := new(big.Rat).SetFrac(n, scale)
	if r.Sign() <= 0 {
		return money.Rate{}, fmt.Errorf("%s rounds to zero", x.FloatString(18))
	}
	return money.ParseRate(r.FloatString(decimals))
}
