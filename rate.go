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
// with no snapshot (x nil); otherwise x's price, zero when x has none.
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
	// DeleteExchangeRatesBefore removes snapshots older than t, keeping the newest one always.
	DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (int, error)
}
