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
	// Sources names the sources whose reports were used in the refresh
	// that made this snapshot (answered, or kept and cached), even one
	// whose every value was then dropped as an outlier; Detail tells which
	// values each gave.
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
	// Error is why the source failed, as a category only; "" when it
	// answered. The full text (transport errors, the start of an upstream
	// body) goes to the logs and never here: snapshots are public and
	// kept for as long as a checkout names them.
	Error SourceError
	// HTTPStatus is the status the source answered with when Error is
	// SourceErrHTTPStatus; 0 otherwise.
	HTTPStatus int
	// Dropped lists the values of its report left out as outliers.
	Dropped []DroppedValue
}

// SourceError is why a source failed, as a category that says what went
// wrong without repeating anything the network or the service sent.
type SourceError string

// The source error categories. SourceErrOther covers anything else,
// including errors stored before categories were kept.
const (
	SourceErrTimeout     SourceError = "timeout"
	SourceErrUnreachable SourceError = "unreachable"
	SourceErrHTTPStatus  SourceError = "http_status"
	SourceErrTooLarge    SourceError = "too_large"
	SourceErrMalformed   SourceError = "malformed"
	SourceErrRefused     SourceError = "refused"
	SourceErrImplausible SourceError = "implausible"
	SourceErrStale       SourceError = "stale"
	SourceErrOther       SourceError = "other"
)

// SourceErrors lists every category, for the API to tell a category from
// a stored error text of an older version.
var SourceErrors = []SourceError{SourceErrTimeout, SourceErrUnreachable, SourceErrHTTPStatus,
	SourceErrTooLarge, SourceErrMalformed, SourceErrRefused, SourceErrImplausible, SourceErrStale, SourceErrOther}

// DropReason is why a value of a source's report was left out.
type DropReason string

// The drop reasons: too far from the other sources' values; or, for a
// fee coin only, outside its plausible range (any other coin or currency
// out of range fails the whole report).
const (
	DropOutlier     DropReason = "outlier"
	DropImplausible DropReason = "implausible"
)

// DroppedValue is one value of a source's report left out: too far from
// the others, or (a fee coin) absurd.
type DroppedValue struct {
	// Code is the coin or currency ("BTC", "EUR").
	Code   string
	Reason DropReason
	Value  money.Rate
	// Median is the median of every source's value it was compared with;
	// zero for an implausible value, which is compared with nothing.
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
	// AsOf is when the oldest of those reports' values are from; zero when
	// unknown (a test's report, or a snapshot stored before it was kept).
	AsOf time.Time
	// Until is when the value leaves the freshness limit of the strictest
	// of those sources, after which it may no longer be carried into a
	// later snapshot; zero when it may never be (a source with no limit
	// kept, such as a test fake).
	Until time.Time
	// Note is what else happened to the value: ValueCarried or
	// ValueBelowOneCent; "" normally.
	Note ValueNote
}

// ValueNote marks a combined value that is not simply this refresh's
// median.
type ValueNote string

// The value notes. ValueCarried: no source gave an agreed value in this
// refresh, so the previous snapshot's, still within its freshness limit,
// was carried over with its AsOf (docs/rates.md, "When sources
// disagree"). ValueBelowOneCent: a fee coin whose price rounds to no whole
// cent, left unpriced.
const (
	ValueCarried      ValueNote = "carried"
	ValueBelowOneCent ValueNote = "below_one_cent"
)

// usdPerUSD is the US dollar's rate in every snapshot (spec 2.11 rule 8).
var usdPerUSD = money.MustRate("1")

// NeedsRates reports whether a price in c, paid in asset a ("" while no
// coin is chosen), needs a market snapshot: only a currency other than USD,
// or a coin other than a stablecoin, does. Everything else converts at the
// fixed rates, so a USD price never fails for want of a rate source.
func NeedsRates(c money.Currency, a money.Asset) bool {
	return c != money.USD || a != "" && !a.Stable()
}

// Lacks returns the code of what a price in c, paid in a ("" while no coin
// is chosen), needs from x but x does not hold, or "" when x holds all of
// it. A snapshot is made without a currency or coin its sources could not
// agree on, so a caller refuses just the prices that need it.
func (x *ExchangeRates) Lacks(c money.Currency, a money.Asset) string {
	// A currency or coin payd does not know is the request's mistake, which
	// its validation names (400), not a rate missing right now.
	if c.Valid() && x.USDPerUnit(c).IsZero() {
		return string(c)
	}
	if a.Valid() && x.CoinCents(a) <= 0 {
		return string(a)
	}
	return ""
}

// USDPerUnit is what one unit of c is worth in US dollars: 1 for USD, even
// with no snapshot (x nil); otherwise x's rate, zero when x has none (its
// sources disagreed or failed).
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
// with no snapshot (x nil); otherwise x's price, zero when x has none (its
// sources disagreed or failed; for a fee coin, also when it is worth under
// half a cent), so callers must expect zero.
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
