package rate

import (
	"context"
	"maps"
	"sync"
	"time"

	"payd"
	"payd/money"
)

// Static is a rate source that reports a fixed table. `--dev` and tests use
// it so that quotes are reproducible and nothing leaves the machine.
type Static struct {
	mu sync.Mutex
	q  payd.Quotes
}

// NewStatic returns a static source reporting q. Pass DevQuotes() for the
// realistic default table.
func NewStatic(q payd.Quotes) *Static {
	s := &Static{}
	s.Set(q)
	return s
}

// DevQuotes returns the default development table: BTC 64,000.00, ETH
// 3,200.00 and SOL 150.00 US dollars, stablecoins at 1, the fee coins POL
// at 0.40 and TRX at 0.12, and EUR 1.08,
// GBP 1.27, CAD 0.73, AUD 0.66 and USD 1 US dollars per unit. It is a fresh
// copy the caller may change.
func DevQuotes() payd.Quotes {
	return payd.Quotes{
		Coins: map[money.Asset]money.Rate{
			money.BTC:  money.MustRate("64000.00"),
			money.ETH:  money.MustRate("3200.00"),
			money.SOL:  money.MustRate("150.00"),
			money.USDC: money.MustRate("1"),
			money.USDT: money.MustRate("1"),
			money.POL:  money.MustRate("0.40"),
			money.TRX:  money.MustRate("0.12"),
		},
		Fiat: map[money.Currency]money.Rate{
			money.USD: money.MustRate("1"),
			money.EUR: money.MustRate("1.08"),
			money.GBP: money.MustRate("1.27"),
			money.CAD: money.MustRate("0.73"),
			money.AUD: money.MustRate("0.66"),
		},
	}
}

// Name identifies the source as "static".
func (s *Static) Name() string { return "static" }

// Validity is unbounded: the table does not age, so if Fetch ever fails
// (an absurd table given to Set), the last good table is used instead.
func (s *Static) Validity() time.Duration { return forever }

// Set replaces the table, for tests and development tools that move prices.
// The source keeps its own copy, so the caller may go on changing q.
func (s *Static) Set(q payd.Quotes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.q = payd.Quotes{Coins: maps.Clone(q.Coins), Fiat: maps.Clone(q.Fiat)}
}

// Fetch returns a copy of the table, refused like any source's answer if it
// holds an absurd value, so a typo in a development table shows at once.
func (s *Static) Fetch(ctx context.Context) (payd.Quotes, error) {
	if err := ctx.Err(); err != nil {
		return payd.Quotes{}, err
	}
	s.mu.Lock()
	q := payd.Quotes{Coins: maps.Clone(s.q.Coins), Fiat: maps.Clone(s.q.Fiat)}
	s.mu.Unlock()
	if err := check(s.Name(), q); err != nil {
		return payd.Quotes{}, err
	}
	return q, nil
}
