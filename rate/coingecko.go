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

// CoinGeckoURL is the base address of CoinGecko's public (and demo-key) API.
const CoinGeckoURL = "https://api.coingecko.com"

// CoinGecko reads CoinGecko's aggregated prices
// (GET /api/v3/simple/price?ids=...&vs_currencies=usd), all coins in one
// request. It works without a key at a low, shared rate limit; a demo key
// raises it.
type CoinGecko struct {
	endpoint
	key string
}

// NewCoinGecko returns the CoinGecko source. A nil client means
// http.DefaultClient, an empty baseURL means CoinGeckoURL, and a non-empty
// demoKey is sent in the x-cg-demo-api-key header.
func NewCoinGecko(client *http.Client, baseURL, demoKey string) *CoinGecko {
	return &CoinGecko{endpoint: newEndpoint(client, baseURL, CoinGeckoURL), key: demoKey}
}

// coinGeckoIDs are CoinGecko's API ids for payd's coins.
var coinGeckoIDs = []struct {
	asset    money.Asset
	id       string
	required bool
}{
	{money.BTC, "bitcoin", true},
	{money.ETH, "ethereum", true},
	{money.SOL, "solana", true},
	{money.USDC, "usd-coin", false},
	{money.USDT, "tether", false},
	{money.POL, "polygon-ecosystem-token", false},
	{money.TRX, "tron", false},
}

// Name identifies the source as "coingecko".
func (g *CoinGecko) Name() string { return "coingecko" }

// Validity is CoinValidity: a market price is only good for minutes.
func (g *CoinGecko) Validity() time.Duration { return CoinValidity }

// Fetch returns CoinGecko's US-dollar price of BTC, ETH and SOL (and of USDC,
// USDT and the fee coins POL and TRX when reported).
func (g *CoinGecko) Fetch(ctx context.Context) (payd.Quotes, error) {
	ids := make([]string, len(coinGeckoIDs))
	for i, c := range coinGeckoIDs {
		ids[i] = c.id
	}
	url := g.base + "/api/v3/simple/price?ids=" + strings.Join(ids, ",") + "&vs_currencies=usd"
	var header http.Header
	if g.key != "" {
		header = http.Header{"X-Cg-Demo-Api-Key": {g.key}}
	}
	return fetchJSON(ctx, g.client, g.Name(), url, header, parseCoinGecko)
}

// parseCoinGecko reads a simple-price answer:
// {"bitcoin":{"usd":64000.5},"ethereum":{"usd":3200.12},...}. Prices are
// JSON numbers, kept as their text (UseNumber) so no float ever holds one;
// CoinGecko leaves out ids it does not know rather than failing.
func parseCoinGecko(body []byte) (payd.Quotes, error) {
	var m map[string]map[string]json.Number
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: coingecko: malformed answer: %w", err)
	}
	q := payd.Quotes{Coins: map[money.Asset]money.Rate{}}
	for _, c := range coinGeckoIDs {
		n, ok := m[c.id]["usd"]
		if !ok {
			if c.required {
				return payd.Quotes{}, fmt.Errorf("rate: coingecko: answer has no usd price for %s", c.id)
			}
			continue
		}
		r, err := parseDecimal(n.String())
		if err != nil || r.IsZero() {
			return payd.Quotes{}, fmt.Errorf("rate: coingecko: %s price %q is not a positive decimal", c.id, n)
		}
		q.Coins[c.asset] = r
	}
	return q, nil
}
