package rate

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// FiatDecimals is how many decimals a combined fiat rate keeps. Rounding
// moves a rate by at most 5e-11 US dollars per unit, so a price of
// 1,000,000.00 (the spec's largest) converts within 0.005 cents of what
// the unrounded rate gives; six decimals allowed 50 cents. It still keeps
// the mean of two bank-derived quotients from carrying eighteen
// meaningless digits into every response. Rates are exact decimals
// (money.Rate holds 18), so the precision costs nothing downstream.
const FiatDecimals = 10

// Outlier thresholds: a value farther than this from the median of every
// source's value is dropped (docs/rates.md, "Outliers"). Reference rates of
// two central banks a few hours apart differ by well under half a percent,
// and exchanges' last trades by well under one; beyond these a source has a
// wrong pair, a stuck feed or a broken market, not a different opinion.
const (
	FiatOutlierBps = 200
	CoinOutlierBps = 500
)

// Report is one source's part in a refresh, as Combine takes it.
type Report struct {
	// Source is the source's Name, recorded in ExchangeRates.Sources.
	Source string
	// Quotes is what the source reported.
	Quotes payd.Quotes
	// Cached marks a report reused from an earlier refresh because the
	// source failed this time; Sources then lists it with CachedSuffix.
	Cached bool
	// AsOf is when the report's values are from (RateDetail); zero leaves
	// it unknown.
	AsOf time.Time
	// Validity is the source's freshness limit (Durable): a value taken
	// from the report may be carried into later snapshots until AsOf plus
	// it. Zero never lets it be carried.
	Validity time.Duration
	// Dropped lists the fee-coin values refused before combining for
	// being absurd (dropImplausible), for the snapshot's Detail.
	Dropped []payd.DroppedValue
	// Err marks a source that failed with no usable report: it adds
	// nothing but its line in the snapshot's Detail, as a category
	// (categorize); the full text is for the logs.
	Err error
}

// Combine builds one snapshot, at now, from the reports of the sources
// that answered. Per coin and per currency it drops outliers (see
// outliers) and takes the median of the rest; with an even count, the
// exact mean of the two middle values, so no source's rounding decides a
// tie. Coin prices become whole US cents (nearest, half away from zero)
// and fiat rates keep FiatDecimals decimals.
//
// Stablecoins are exactly 100 cents and USD exactly 1 whatever sources say
// (spec 2.11 rule 8), so they need no source. A coin or currency no source
// gives an agreed value for is carried from prev (the snapshot in force;
// nil for none) while that value is within its sources' freshness limit
// (ValueState.Until), marked ValueCarried; else the snapshot is made
// without it, and only the prices that need it are refused (Lacks). One
// disagreement must not stop every checkout. Combine fails only when no
// coin or currency but the fixed ones has a value: then the previous
// snapshot serves better. A fee coin (money.FeeCoins) never fails
// anything: one worth under half a cent is left out, noted
// ValueBelowOneCent. A cached report counts like a fresh one; only its
// entry in Sources differs. The ID and CreatedAt of the result are left to
// the caller; dropped values are in Detail, for the caller to log.
func Combine(reports []Report, prev *payd.ExchangeRates, now time.Time) (*payd.ExchangeRates, error) {
	x := &payd.ExchangeRates{
		Coins:  map[money.Asset]int64{},
		Fiat:   map[money.Currency]money.Rate{money.USD: money.MustRate("1")},
		Detail: &payd.RateDetail{Values: map[string]payd.ValueState{}},
	}
	dropped := make([][]payd.DroppedValue, len(reports))
	for i, r := range reports {
		dropped[i] = slices.Clone(r.Dropped)
	}
	coins := append(slices.Clone(money.Assets), money.FeeCoins...)
	for _, a := range coins {
		if a.Stable() {
			x.Coins[a] = money.StableUSDCents
			continue
		}
		m := combineValue(reports, string(a), CoinOutlierBps, x.Detail, dropped,
			func(q payd.Quotes) (money.Rate, bool) { r, ok := q.Coins[a]; return r, ok })
		if m == nil {
			if carry(x.Detail, prev, string(a), now) {
				x.Coins[a] = prev.Coins[a]
			}
			continue
		}
		cents := money.Round(m.Mul(m, big.NewRat(100, 1)))
		if !cents.IsInt64() || cents.Sign() <= 0 {
			// Only a fee coin gets here: check's bounds keep every
			// other coin above a dollar.
			v := x.Detail.Values[string(a)]
			v.Note = payd.ValueBelowOneCent
			x.Detail.Values[string(a)] = v
			continue
		}
		x.Coins[a] = cents.Int64()
	}
	for _, c := range money.Currencies {
		if c == money.USD {
			continue
		}
		m := combineValue(reports, string(c), FiatOutlierBps, x.Detail, dropped,
			func(q payd.Quotes) (money.Rate, bool) { r, ok := q.Fiat[c]; return r, ok })
		if m == nil {
			if carry(x.Detail, prev, string(c), now) {
				x.Fiat[c] = prev.Fiat[c]
			}
			continue
		}
		// check's bounds keep every currency above a cent, so this never
		// rounds to zero; if it did, the currency would just be missing.
		if r, err := roundRate(m, FiatDecimals); err == nil {
			x.Fiat[c] = r
		}
	}
	// An empty snapshot lacks everything but the fixed values; fee coins
	// alone do not make one worth serving.
	if m := Missing(x); len(m) == len(Missing(&payd.ExchangeRates{})) {
		return nil, fmt.Errorf("rate: no source reported %s", strings.Join(m, ", "))
	}
	for i, r := range reports {
		st := payd.SourceState{Name: r.Source, Status: payd.SourceAnswered, AsOf: r.AsOf, Dropped: dropped[i]}
		switch {
		case r.Err != nil:
			st.Status, st.AsOf = payd.SourceFailed, time.Time{}
			st.Error, st.HTTPStatus = categorize(r.Err)
		case r.Cached:
			st.Status = payd.SourceCached
		}
		x.Detail.Sources = append(x.Detail.Sources, st)
		if r.Err != nil {
			continue
		}
		name := r.Source
		if r.Cached {
			name += CachedSuffix
		}
		x.Sources = append(x.Sources, name)
	}
	return x, nil
}

// Missing lists the coins and currencies (not fee coins) x has no value
// for, in money.Assets and money.Currencies order: what checkouts needing
// them are refused for.
func Missing(x *payd.ExchangeRates) []string {
	var out []string
	for _, a := range money.Assets {
		if x.CoinCents(a) <= 0 {
			out = append(out, string(a))
		}
	}
	for _, c := range money.Currencies {
		if x.USDPerUnit(c).IsZero() {
			out = append(out, string(c))
		}
	}
	return out
}

// carry records in d, and reports, that the value of code in prev may
// stand in this refresh: prev has it and it is still within the
// freshness limit it was combined under. Its state, AsOf and Until
// included, comes along, so carrying never extends that limit.
func carry(d *payd.RateDetail, prev *payd.ExchangeRates, code string, now time.Time) bool {
	if prev == nil || prev.Detail == nil {
		return false
	}
	v, ok := prev.Detail.Values[code]
	if !ok || v.Until.IsZero() || !now.Before(v.Until) || v.Note == payd.ValueBelowOneCent {
		return false
	}
	if prev.CoinCents(money.Asset(code)) <= 0 && prev.USDPerUnit(money.Currency(code)).IsZero() {
		return false
	}
	v.Note = payd.ValueCarried
	d.Values[code] = v
	return true
}

// maxValidity caps a freshness limit where it becomes a time, so the
// static table's "forever" does not overflow.
const maxValidity = 100 * 365 * 24 * time.Hour

// sourced is one report's value for one coin or currency.
type sourced struct {
	report int
	v      *big.Rat
}

// combineValue returns the median of the values pick finds in the usable
// reports after outliers are dropped, or nil when none is left; it records
// the value's state in d and each dropped value under its report.
func combineValue(reports []Report, code string, limitBps int64, d *payd.RateDetail,
	dropped [][]payd.DroppedValue, pick func(payd.Quotes) (money.Rate, bool)) *big.Rat {
	var vs []sourced
	for i, r := range reports {
		// Zero means "unset", never a price; check refuses zeros before
		// sources get here.
		if v, ok := pick(r.Quotes); ok && r.Err == nil && !v.IsZero() {
			vs = append(vs, sourced{i, v.Rat()})
		}
	}
	if len(vs) == 0 {
		return nil
	}
	kept, out := outliers(vs, limitBps)
	for _, o := range out {
		dropped[o.report] = append(dropped[o.report], o.dropped(code))
	}
	if len(kept) == 0 {
		return nil
	}
	m := median(kept)
	v := payd.ValueState{Sources: len(kept), SpreadBps: bps(new(big.Rat).Sub(kept[len(kept)-1].v, kept[0].v), m)}
	carriable := true
	for _, s := range kept {
		r := reports[s.report]
		if r.AsOf.IsZero() || r.Validity <= 0 {
			carriable = false
			continue
		}
		if v.AsOf.IsZero() || r.AsOf.Before(v.AsOf) {
			v.AsOf = r.AsOf
		}
		if until := r.AsOf.Add(min(r.Validity, maxValidity)); v.Until.IsZero() || until.Before(v.Until) {
			v.Until = until
		}
	}
	if !carriable {
		v.Until = time.Time{}
	}
	d.Values[code] = v
	return m
}

// outlier is a value left out, with the median it was measured against.
type outlier struct {
	sourced
	median *big.Rat
	dev    int64
}

func (o outlier) dropped(code string) payd.DroppedValue {
	v, _ := truncatedRate(o.v)
	m, _ := truncatedRate(o.median)
	return payd.DroppedValue{Code: code, Reason: payd.DropOutlier, Value: v, Median: m, DeviationBps: o.dev}
}

// outliers splits values into those kept, sorted, and those farther than
// limitBps from the median of all of them. The median of all (not of "the
// others") is the yardstick because, with three sources and one far off,
// the median of the other two of a good source is dragged halfway to the
// bad one. With two sources neither can be told wrong: when they lie
// farther apart than the limit allows either from their mean, both are
// dropped and the value is missing from this refresh. One source is kept
// as it is: there is nothing to compare it with.
func outliers(vs []sourced, limitBps int64) (kept []sourced, out []outlier) {
	slices.SortFunc(vs, func(a, b sourced) int { return a.v.Cmp(b.v) })
	if len(vs) < 2 {
		return vs, nil
	}
	m := median(vs)
	for _, s := range vs {
		dev := bps(new(big.Rat).Sub(s.v, m), m)
		if dev > limitBps {
			out = append(out, outlier{s, m, dev})
		} else {
			kept = append(kept, s)
		}
	}
	if len(vs) == 2 && len(out) > 0 {
		return nil, []outlier{{vs[0], m, bps(new(big.Rat).Sub(vs[0].v, m), m)}, {vs[1], m, bps(new(big.Rat).Sub(vs[1].v, m), m)}}
	}
	return kept, out
}

// bps is |diff| ÷ base in basis points, rounded down.
func bps(diff, base *big.Rat) int64 {
	r := new(big.Rat).Quo(new(big.Rat).Abs(diff), base)
	r.Mul(r, big.NewRat(10_000, 1))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 1 << 62
	}
	return n.Int64()
}

// median returns the median of sorted values; with an even count, the
// exact mean of the two middle ones.
func median(vs []sourced) *big.Rat {
	mid := len(vs) / 2
	if len(vs)%2 == 1 {
		return new(big.Rat).Set(vs[mid].v)
	}
	sum := new(big.Rat).Add(vs[mid-1].v, vs[mid].v)
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
