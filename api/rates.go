package api

import (
	"context"
	"encoding/json"
	"fmt"
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
	AgeSeconds *int64 `json:"age_seconds"`
	// Error is a category (payd.SourceError), never the error's text:
	// the page is public and the text may hold anything upstream sent.
	Error      *payd.SourceError `json:"error"`
	HTTPStatus *int              `json:"http_status"`
	Dropped    []rateDropped     `json:"dropped"`
}

// rateDropped is a value of a source left out: an outlier, or an absurd
// fee coin (no median, no deviation).
type rateDropped struct {
	Code         string          `json:"code"`
	Reason       payd.DropReason `json:"reason"`
	Value        json.Number     `json:"value"`
	Median       *json.Number    `json:"median"`
	DeviationBps int64           `json:"deviation_bps"`
}

// rateValue is how one coin's or currency's value was found.
type rateValue struct {
	Sources   int             `json:"sources"`
	SpreadBps int64           `json:"spread_bps"`
	AsOf      *Time           `json:"as_of"`
	Note      *payd.ValueNote `json:"note"`
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
			src := rateSource{Name: st.Name, Status: st.Status, Dropped: []rateDropped{}}
			if st.Error != "" {
				// A snapshot stored before categories were kept holds the
				// error's text: that is never shown.
				cat := st.Error
				if !slices.Contains(payd.SourceErrors, cat) {
					cat = payd.SourceErrOther
				}
				src.Error = &cat
				if cat == payd.SourceErrHTTPStatus && st.HTTPStatus > 0 {
					status := st.HTTPStatus
					src.HTTPStatus = &status
				}
			}
			if !st.AsOf.IsZero() {
				at, age := Time(st.AsOf), max(int64(x.CreatedAt.Sub(st.AsOf)/time.Second), 0)
				src.AsOf, src.AgeSeconds = &at, &age
			}
			for _, v := range st.Dropped {
				d := rateDropped{Code: v.Code, Reason: v.Reason, Value: json.Number(v.Value.String()), DeviationBps: v.DeviationBps}
				if d.Reason == "" {
					d.Reason = payd.DropOutlier
				}
				if !v.Median.IsZero() {
					m := json.Number(v.Median.String())
					d.Median = &m
				}
				src.Dropped = append(src.Dropped, d)
			}
			out.Sources[i] = src
		}
		out.Values = make(map[string]rateValue, len(d.Values))
		for code, v := range d.Values {
			rv := rateValue{Sources: v.Sources, SpreadBps: v.SpreadBps}
			if !v.AsOf.IsZero() {
				at := Time(v.AsOf)
				rv.AsOf = &at
			}
			if v.Note != "" {
				note := v.Note
				rv.Note = &note
			}
			out.Values[code] = rv
		}
	}
	return out
}

// lackingRetryAfter is the Retry-After of a price refused for a value the
// snapshot lacks: rate.DefaultInterval, one refresh.
const lackingRetryAfter = time.Minute

// ratesFor returns the newest fresh snapshot (RateProvider.Fresh) for a
// price in c paid in a ("" before a coin is chosen). When there is none
// (upstream_unavailable), a price
// that converts at fixed rates (payd.NeedsRates: USD, stablecoins) gets nil
// instead of the error, so it never fails because the rate sources are
// down; what does need a rate fails, or, on a page, is left out. A
// snapshot made without c or a (its sources disagreed: docs/rates.md,
// "When sources disagree") is upstream_unavailable for this price only.
func (s *Server) ratesFor(ctx context.Context, c money.Currency, a money.Asset) (*payd.ExchangeRates, error) {
	x, err := s.rates.Fresh(ctx)
	if err != nil && !payd.NeedsRates(c, a) && payd.ErrorCode(err) == payd.ErrUpstreamUnavailable {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if code := x.Lacks(c, a); code != "" {
		return nil, &payd.Error{Code: payd.ErrUpstreamUnavailable, RetryAfter: lackingRetryAfter,
			Message: fmt.Sprintf("no agreed %s rate right now", code)}
	}
	return x, nil
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
