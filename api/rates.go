package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"payd"
	"payd/money"
)

// exchangeRates is the wire form of payd.ExchangeRates (spec 2.8), with
// how the snapshot was made (docs/rates.md "Visibility"): every field after
// created_at is an addition of payd's, optional for clients.
type exchangeRates struct {
	ID        string                         `json:"id"`
	Kind      string                         `json:"kind"`
	Coins     map[money.Asset]coinPrice      `json:"coins"`
	Fiat      map[money.Currency]fiatUSDRate `json:"fiat"`
	CreatedAt Time                           `json:"created_at"`
	// AgeSeconds is how old the snapshot is now, on the service clock.
	AgeSeconds int64 `json:"age_seconds"`
	// FeeCoins are the priced fee coins (POL, TRX), never offered.
	FeeCoins map[money.Asset]coinPrice `json:"fee_coins,omitempty"`
	// Sources and Values are absent on snapshots made before payd kept them.
	Sources []rateSource         `json:"sources,omitempty"`
	Values  map[string]rateValue `json:"values,omitempty"`
}

type coinPrice struct {
	PriceUSD int64 `json:"price_usd"`
}

// fiatUSDRate carries the exact decimal as a JSON number, never via float64.
type fiatUSDRate struct {
	USDRate json.Number `json:"usd_rate"`
}

// rateSource is what one source did for the snapshot.
type rateSource struct {
	Name   string            `json:"name"`
	Status payd.SourceStatus `json:"status"`
	AsOf   *Time             `json:"as_of"`
	// AgeSeconds is how old the source's values were when the snapshot
	// was made (created_at − as_of).
	AgeSeconds *int64        `json:"age_seconds"`
	Error      *string       `json:"error"`
	Dropped    []rateDropped `json:"dropped"`
}

// rateDropped is a value of a source left out as an outlier.
type rateDropped struct {
	Code         string      `json:"code"`
	Value        json.Number `json:"value"`
	Median       json.Number `json:"median"`
	DeviationBps int64       `json:"deviation_bps"`
}

// rateValue is how one coin's or currency's value was found.
type rateValue struct {
	Sources   int   `json:"sources"`
	SpreadBps int64 `json:"spread_bps"`
}

// toExchangeRates converts a snapshot for the wire at now. Fee coins go in
// fee_coins, never in coins: coins lists what a customer can pay with.
func toExchangeRates(x *payd.ExchangeRates, now time.Time) exchangeRates {
	out := exchangeRates{ID: x.ID, Kind: "exchange_rates", CreatedAt: Time(x.CreatedAt),
		Coins: map[money.Asset]coinPrice{}, Fiat: map[money.Currency]fiatUSDRate{},
		AgeSeconds: max(int64(now.Sub(x.CreatedAt)/time.Second), 0)}
	for a, cents := range x.Coins {
		switch {
		case a.Valid():
			out.Coins[a] = coinPrice{cents}
		case slices.Contains(money.FeeCoins, a) && cents > 0:
			if out.FeeCoins == nil {
				out.FeeCoins = map[money.Asset]coinPrice{}
			}
			out.FeeCoins[a] = coinPrice{cents}
		}
	}
	for c, r := range x.Fiat {
		out.Fiat[c] = fiatUSDRate{json.Number(r.String())}
	}
	if d := x.Detail; d != nil {
		out.Sources = make([]rateSource, len(d.Sources))
		for i, st := range d.Sources {
			src := rateSource{Name: st.Name, Status: st.Status, Error: nilIfEmpty(st.Error), Dropped: []rateDropped{}}
			if !st.AsOf.IsZero() {
				at, age := Time(st.AsOf), max(int64(x.CreatedAt.Sub(st.AsOf)/time.Second), 0)
				src.AsOf, src.AgeSeconds = &at, &age
			}
			for _, v := range st.Dropped {
				src.Dropped = append(src.Dropped, rateDropped{Code: v.Code, Value: json.Number(v.Value.String()),
					Median: json.Number(v.Median.String()), DeviationBps: v.DeviationBps})
			}
			out.Sources[i] = src
		}
		out.Values = make(map[string]rateValue, len(d.Values))
		for code, v := range d.Values {
			out.Values[code] = rateValue(v)
		}
	}
	return out
}

// ratesFor returns the newest fresh snapshot (RateProvider.Fresh) for a
// price in c paid in a ("" before a coin is chosen). When there is none
// (upstream_unavailable), a price
// that converts at fixed rates (payd.NeedsRates: USD, stablecoins) gets nil
// instead of the error, so it never fails because the rate sources are
// down; what does need a rate fails, or, on a page, is left out.
func (s *Server) ratesFor(ctx context.Context, c money.Currency, a money.Asset) (*payd.ExchangeRates, error) {
	x, err := s.rates.Fresh(ctx)
	if err != nil && !payd.NeedsRates(c, a) && payd.ErrorCode(err) == payd.ErrUpstreamUnavailable {
		return nil, nil
	}
	return x, err
}

// getExchangeRates serves GET /exchange-rates (spec 4.4): the newest
// snapshot, stale or not, with its age and how it was made.
func (s *Server) getExchangeRates(w http.ResponseWriter, r *http.Request) error {
	x, err := s.rates.Latest(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toExchangeRates(x, s.clock.Now())})
	return nil
}

// getExchangeRatesByID serves GET /exchange-rates/{id}: one snapshot of
// the history, such as the one a checkout's quote names, so a quote can be
// explained later. not_found once pruned (docs/rates.md "History").
func (s *Server) getExchangeRatesByID(w http.ResponseWriter, r *http.Request) error {
	x, err := s.rates.ByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toExchangeRates(x, s.clock.Now())})
	return nil
}
