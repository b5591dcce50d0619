package rate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// KrakenURL is the base address of Kraken's REST API.
const KrakenURL = "https://api.kraken.com"

// Kraken reads the last trade price from Kraken's public ticker
// (GET /0/public/Ticker?pair=..., no key needed), all coins in one request.
type Kraken struct {
	endpoint
}

// NewKraken returns the Kraken source. A nil client means
// http.DefaultClient and an empty baseURL means KrakenURL.
func NewKraken(client *http.Client, baseURL string) *Kraken {
	return &Kraken{endpoint: newEndpoint(client, baseURL, KrakenURL)}
}

// krakenPair names each coin's US-dollar market. Kraken is asked by the
// short name but answers under its canonical one (XBTUSD comes back as
// XXBTZUSD), so both spellings are accepted.
type krakenPair struct {
	asset    money.Asset
	ask      string
	answers  []string
	required bool
}

var krakenPairs = []krakenPair{
	{money.BTC, "XBTUSD", []string{"XXBTZUSD", "XBTUSD"}, true},
	{money.ETH, "ETHUSD", []string{"XETHZUSD", "ETHUSD"}, true},
	{money.SOL, "SOLUSD", []string{"SOLUSD"}, true},
	// Stablecoins come with the same request at no cost; the snapshot
	// pins them to one dollar, so an answer without them is still whole.
	{money.USDC, "USDCUSD", []string{"USDCUSD"}, false},
	{money.USDT, "USDTUSD", []string{"USDTZUSD", "USDTUSD"}, false},
	// Fee coins are optional too: a snapshot never waits for them.
	{money.POL, "POLUSD", []string{"POLUSD"}, false},
	{money.TRX, "TRXUSD", []string{"TRXUSD"}, false},
}

// Name identifies the source as "kraken".
func (k *Kraken) Name() string { return "kraken" }

// Validity is CoinValidity: a market price is only good for minutes.
func (k *Kraken) Validity() time.Duration { return CoinValidity }

// Fetch returns the last trade price of BTC, ETH and SOL (and of USDC,
// USDT and the fee coins POL and TRX when Kraken lists them) in US dollars.
func (k *Kraken) Fetch(ctx context.Context) (payd.Quotes, error) {
	asks := make([]string, len(krakenPairs))
	for i, p := range krakenPairs {
		asks[i] = p.ask
	}
	url := k.base + "/0/public/Ticker?pair=" + strings.Join(asks, ",")
	return fetchJSON(ctx, k.client, k.Name(), url, nil, parseKraken)
}

// krakenTicker is the ticker answer:
// {"error":[],"result":{"XXBTZUSD":{"a":[...],"b":[...],"c":["64547.20000","0.0013"],...}}}.
// Only "c" (last trade closed: price, lot volume) is read.
type krakenTicker struct {
	Error  []string `json:"error"`
	Result map[string]struct {
		C []string `json:"c"`
	} `json:"result"`
}

// parseKraken reads a ticker answer. Kraken reports failures in "error"
// with HTTP 200, so that list must be empty.
func parseKraken(body []byte) (payd.Quotes, error) {
	var t krakenTicker
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: kraken: malformed answer: %w", err)
	}
	if len(t.Error) > 0 {
		return payd.Quotes{}, categorized(payd.SourceErrRefused, fmt.Errorf("rate: kraken: %s", strings.Join(t.Error, "; ")))
	}
	if t.Result == nil {
		return payd.Quotes{}, fmt.Errorf("rate: kraken: answer has no result")
	}
	q := payd.Quotes{Coins: map[money.Asset]money.Rate{}}
	for _, p := range krakenPairs {
		key, c, ok := "", []string(nil), false
		for _, name := range p.answers {
			if v, found := t.Result[name]; found {
				key, c, ok = name, v.C, true
				break
			}
		}
		if !ok {
			if p.required {
				return payd.Quotes{}, fmt.Errorf("rate: kraken: answer has no %s market", p.ask)
			}
			continue
		}
		if len(c) == 0 {
			return payd.Quotes{}, fmt.Errorf("rate: kraken: %s has no last trade", key)
		}
		r, err := money.ParseRate(c[0])
		if err != nil || r.IsZero() {
			return payd.Quotes{}, fmt.Errorf("rate: kraken: %s last trade %q is not a positive decimal", key, c[0])
		}
		q.Coins[p.asset] = r
	}
	return q, nil
}
