package payd

import (
	"context"
	"time"

	"payd/money"
)

// ExchangeRates is one snapshot of prices: each coin in US cents and each
// price currency in US dollars per unit (spec 2.8).
type ExchangeRates struct {
	ID string
	// Coins maps each coin to its price in US cents. Stablecoins are 100.
	Coins map[money.Asset]int64
	// Fiat maps each price currency to US dollars per unit. USD is 1.
	Fiat map[money.Currency]money.Rate
	// Sources names the sources that agreed on this snapshot.
	Sources   []string
	CreatedAt time.Time
	// Detail is how the snapshot was made: what each source did and how
	// far apart the sources were. It is nil on snapshots stored before it
	// was kept (migration 29).
	Detail *RateDetail
}

// RateDetail records how a snapshot was made, so that any quote can be
// explained later from the snapshot it came from (docs/rates.md,
// "Visibility").
type RateDetail struct {
	// Sources is every configured source, in configuration order, with
	// what it did in the refresh that made the snapshot.
	Sources []SourceState
	// Values holds, per coin or currency code the sources reported, how
	// many sources the combined value was taken from and their spread.
	Values map[string]ValueState
}

// SourceStatus is what a source did in one refresh.
type SourceStatus string

// The source statuses: answered in this refresh; failed, with its kept
// report used in its place; failed (or too old) and left out.
const (
	SourceAnswered SourceStatus = "answered"
	SourceCached   SourceStatus = "cached"
	SourceFailed   SourceStatus = "failed"
)

// SourceState is one source's part in a snapshot.
type SourceState struct {
	Name   string
	Status SourceStatus
	// AsOf is when the report used is from: a central bank's reference
	// date, or the fetch for a market. Zero when no report was used.
	AsOf time.Time
	// Error is why the source failed; "" when it answered.
	Error string
	// Dropped lists the values of its report left out as outliers.
	Dropped []DroppedValue
}

// DroppedValue is one value of a source's report that lay too far from
// the others to be used.
type DroppedValue struct {
	// Code is the coin or currency ("BTC", "EUR").
	Code  string
	Value money.Rate
	// Median is the median of every source's value it was compared with.
	Median money.Rate
	// DeviationBps is how far Value lies from Median, in basis points of
	// Median, rounded down.
	DeviationBps int64
}

// ValueState is how one coin's or currency's combined value was found.
type ValueState struct {
	// Sources is how many reports the median was taken over, outliers
	// left out.
	Sources int
	// SpreadBps is (highest − lowest) ÷ median of those reports, in basis
	// points, rounded down: 0 with a single source.
	SpreadBps int64
}

// usdPerUSD is the US dollar's rate in every snapshot (spec 2.11 rule 8).
var usdPerUSD = money.MustRate("1")

// NeedsRates reports whether a price in c, paid in asset a ("" while no
// coin is chosen), needs a market snapshot: only a currency other than USD,
// or a coin other than a stablecoin, does. Everything else converts at the
// fixed rates, so a USD price never fails for want of a rate source.
func NeedsRates(c money.Currency, a money.Asset) bool {
	return c != money.USD || a != "" && !a.Stable()
}

// USDPerUnit is what one unit of c is worth in US dollars: 1 for USD, even
// with no snapshot (x nil); otherwise x's rate, zero when x has none.
func (x *ExchangeRates) USDPerUnit(c money.Currency) money.Rate {
	if c == money.USD {
		return usdPerUSD
	}
	if x == nil {
		return money.Rate{}
	}
	return x.Fiat[c]
}

// CoinCents is what one a is worth in US cents: 100 for a stablecoin, even
// with no snapshot (x nil); otherwise x's price, zero when x has none. A
// fee coin (money.FeeCoins) is priced when some source reported it; a
// snapshot never waits for one, so callers must expect zero.
func (x *ExchangeRates) CoinCents(a money.Asset) int64 {
	if a.Stable() {
		return money.StableUSDCents
	}
	if x == nil {
		return 0
	}
	return x.Coins[a]
}

// Quotes is what one rate source reports: any subset of coin prices and fiat
// rates, in US dollars as exact decimals.
type Quotes struct {
	Coins map[money.Asset]money.Rate
	Fiat  map[money.Currency]money.Rate
	// AsOf is when the values are from, when the source says so (a central
	// bank's reference date); zero for a live market, whose values are as
	// old as the fetch. A source's freshness limit counts from it.
	AsOf time.Time
}

// RateSource is a place prices come from: a static table in development and
// tests, public price and reference-rate services in production.
type RateSource interface {
	// Name identifies the source in logs and in ExchangeRates.Sources.
	Name() string
	// Fetch returns the source's current quotes. It fails when the source is
	// unreachable or answers something unexpected; it never guesses.
	Fetch(ctx context.Context) (Quotes, error)
}

// RateStore keeps the history of exchange-rate snapshots.
type RateStore interface {
	// CreateExchangeRates stores a snapshot.
	CreateExchangeRates(ctx context.Context, r *ExchangeRates) error
	// LatestExchangeRates returns the newest snapshot; not_found if there is none.
	LatestExchangeRates(ctx context.Context) (*ExchangeRates, error)
	// ExchangeRatesByID returns one snapshot of the history; not_found if
	// there is none with the id (never made, or pruned).
	ExchangeRatesByID(ctx context.Context, id string) (*ExchangeRates, error)
	// DeleteExchangeRatesBefore removes snapshots older than t, keeping the
	// newest one and every one a checkout was quoted from.
	DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (int, error)
}
