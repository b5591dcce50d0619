package rate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"payd"
	"payd/money"
)

// CoinbaseURL is the base address of Coinbase's public data API.
const CoinbaseURL = "https://api.coinbase.com"

// Coinbase reads Coinbase's public spot prices
// (GET /v2/prices/{BASE}-USD/spot, no key needed), one request per coin.
type Coinbase struct {
	endpoint
}

// NewCoinbase returns the Coinbase source. A nil client means
// http.DefaultClient and an empty baseURL means CoinbaseURL; tests pass an
// httptest server's.
func NewCoinbase(client *http.Client, baseURL string) *Coinbase {
	return &Coinbase{endpoint: newEndpoint(client, baseURL, CoinbaseURL)}
}

// coinbaseAssets are the coins asked for. Stablecoins are left out: the
// snapshot counts them at one dollar anyway (spec 2.11 rule 8), and every
// extra request is one more way for the whole source to fail.
var coinbaseAssets = []money.Asset{money.BTC, money.ETH, money.SOL}

// Name identifies the source as "coinbase".
func (c *Coinbase) Name() string { return "coinbase" }

// Validity is CoinValidity: a market price is only good for minutes.
func (c *Coinbase) Validity() time.Duration { return CoinValidity }

// Fetch returns the spot price of BTC, ETH and SOL in US dollars. It fails
// if any of them is missing or malformed, because a partial answer from one
// endpoint usually means the others are wrong too.
func (c *Coinbase) Fetch(ctx context.Context) (payd.Quotes, error) {
	q := payd.Quotes{Coins: map[money.Asset]money.Rate{}}
	for _, a := range coinbaseAssets {
		url := fmt.Sprintf("%s/v2/prices/%s-USD/spot", c.base, a)
		body, err := get(ctx, c.client, c.Name(), url, "application/json", nil)
		if err != nil {
			return payd.Quotes{}, err
		}
		r, err := parseCoinbase(a, body)
		if err != nil {
			return payd.Quotes{}, categorized(payd.SourceErrMalformed, err)
		}
		q.Coins[a] = r
	}
	if err := check(c.Name(), q); err != nil {
		return payd.Quotes{}, err
	}
	return q, nil
}

// coinbaseSpot is the answer of the spot endpoint:
// {"data":{"amount":"64000.12","base":"BTC","currency":"USD"}}.
type coinbaseSpot struct {
	Data *struct {
		Amount   *string `json:"amount"`
		Base     string  `json:"base"`
		Currency string  `json:"currency"`
	} `json:"data"`
}

// parseCoinbase reads one spot answer for asset. The pair is checked
// because a proxy or a changed route could answer for another one, and the
// amount is a JSON string that must hold a plain decimal.
func parseCoinbase(asset money.Asset, body []byte) (money.Rate, error) {
	var s coinbaseSpot
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return money.Rate{}, fmt.Errorf("rate: coinbase: %s: malformed answer: %w", asset, err)
	}
	switch {
	case s.Data == nil:
		return money.Rate{}, fmt.Errorf("rate: coinbase: %s: answer has no data", asset)
	case s.Data.Base != string(asset) || s.Data.Currency != "USD":
		return money.Rate{}, fmt.Errorf("rate: coinbase: asked for %s-USD, answer is for %q-%q", asset, s.Data.Base, s.Data.Currency)
	case s.Data.Amount == nil:
		return money.Rate{}, fmt.Errorf("rate: coinbase: %s: answer has no amount", asset)
	}
	r, err := money.ParseRate(*s.Data.Amount)
	if err != nil || r.IsZero() {
		return money.Rate{}, fmt.Errorf("rate: coinbase: %s: amount %q is not a positive decimal", asset, *s.Data.Amount)
	}
	return r, nil
}
