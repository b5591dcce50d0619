package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"payd"
	"payd/money"
)

// exchangeRates is the wire form of payd.ExchangeRates (spec 2.8).
type exchangeRates struct {
	ID        string                         `json:"id"`
	Kind      string                         `json:"kind"`
	Coins     map[money.Asset]coinPrice      `json:"coins"`
	Fiat      map[money.Currency]fiatUSDRate `json:"fiat"`
	CreatedAt Time                           `json:"created_at"`
}

type coinPrice struct {
	PriceUSD int64 `json:"price_usd"`
}

// fiatUSDRate carries the exact decimal as a JSON number, never via float64.
type fiatUSDRate struct {
	USDRate json.Number `json:"usd_rate"`
}

func toExchangeRates(x *payd.ExchangeRates) exchangeRates {
	out := exchangeRates{ID: x.ID, Kind: "exchange_rates", CreatedAt: Time(x.CreatedAt),
		Coins: map[money.Asset]coinPrice{}, Fiat: map[money.Currency]fiatUSDRate{}}
	for a, cents := range x.Coins {
		out.Coins[a] = coinPrice{cents}
	}
	for c, r := range x.Fiat {
		out.Fiat[c] = fiatUSDRate{json.Number(r.String())}
	}
	return out
}

// ratesBody caches the encoded response of the newest snapshot: rates change
// once a minute and are read on every page view.
type ratesBody struct {
	mu   sync.Mutex
	id   string
	body []byte
}

// ratesFor returns the newest snapshot for a price in c paid in a ("" before
// a coin is chosen). When there is none (upstream_unavailable), a price
// that converts at fixed rates (payd.NeedsRates: USD, stablecoins) gets nil
// instead of the error, so it never fails because the rate sources are
// down; what does need a rate fails, or, on a page, is left out.
func (s *Server) ratesFor(ctx context.Context, c money.Currency, a money.Asset) (*payd.ExchangeRates, error) {
	x, err := s.rates.Latest(ctx)
	if err != nil && !payd.NeedsRates(c, a) && payd.ErrorCode(err) == payd.ErrUpstreamUnavailable {
		return nil, nil
	}
	return x, err
}

// getExchangeRates serves GET /exchange-rates (spec 4.4).
func (s *Server) getExchangeRates(w http.ResponseWriter, r *http.Request) error {
	x, err := s.rates.Latest(r.Context())
	if err != nil {
		return err
	}
	s.ratesBody.mu.Lock()
	body := s.ratesBody.body
	if s.ratesBody.id != x.ID || body == nil {
		body, err = json.Marshal(single{toExchangeRates(x)})
		if err != nil {
			s.ratesBody.mu.Unlock()
			return err
		}
		s.ratesBody.id, s.ratesBody.body = x.ID, body
	}
	s.ratesBody.mu.Unlock()
	writeRaw(w, http.StatusOK, "application/json", body)
	return nil
}
