// Package stripe is the card provider for Stripe's fiat-to-crypto onramp
// (docs/card.md, "Stripe"): payd mints one CryptoOnrampSession per card
// attempt with the coin, network, amount and deposit address locked, sends
// the customer to the session's redirect_url on Stripe's hosted onramp, and
// learns how the session stands from the signed
// crypto.onramp_session_updated webhook and from polling the session.
//
// Every shape this package reads or writes is the one Stripe documents:
// https://docs.stripe.com/api/crypto/onramp_sessions (the object, create,
// retrieve), https://docs.stripe.com/crypto/onramp/embedded (parameters,
// states, webhook, errors), https://docs.stripe.com/crypto/standalone-hosted-onramp
// (redirect_url) and https://docs.stripe.com/webhooks#verify-manually (the
// signature). testdata/README.md names the page of each fixture.
package stripe

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// Name is the provider's name, as checkouts record it and as the webhook
// URL names it (/card-providers/stripe/webhook).
const Name = "stripe"

// DefaultBaseURL is Stripe's API.
const DefaultBaseURL = "https://api.stripe.com"

// DefaultTimeout bounds one call to Stripe when Config.HTTPClient is nil.
const DefaultTimeout = 15 * time.Second

// Config is what the provider needs, all of it from payd's configuration
// (flags or PAYD_* variables); nothing is read from the environment here.
type Config struct {
	// SecretKey is the Stripe secret key (sk_live_… or sk_test_…) that
	// mints and reads onramp sessions.
	SecretKey string
	// WebhookSecret is the signing secret (whsec_…) of the webhook endpoint
	// registered at {public}/api/v1/card-providers/stripe/webhook.
	WebhookSecret string
	// BaseURL is Stripe's API, DefaultBaseURL when empty; tests point it at
	// a local server.
	BaseURL string
	// HTTPClient makes the calls; when nil, a client with DefaultTimeout.
	// A client without a timeout is given DefaultTimeout.
	HTTPClient *http.Client
	// Clock is the service clock the webhook tolerance is measured on;
	// clock.Real{} when nil.
	Clock clock.Clock
}

// Provider speaks to Stripe's crypto onramp; it implements
// payd.CardProvider.
type Provider struct {
	key, whsec string
	base       string
	http       *http.Client
	clock      clock.Clock
}

var _ payd.CardProvider = (*Provider)(nil)

// New checks c and returns the provider. Both secrets are required: without
// the signing secret no webhook could be trusted.
func New(c Config) (*Provider, error) {
	if strings.TrimSpace(c.SecretKey) == "" {
		return nil, errors.New("stripe: the secret key is required")
	}
	if strings.TrimSpace(c.WebhookSecret) == "" {
		return nil, errors.New("stripe: the webhook signing secret is required")
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("stripe: the API base URL must be an absolute http(s) URL")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	} else if hc.Timeout <= 0 {
		cp := *hc
		cp.Timeout = DefaultTimeout
		hc = &cp
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	return &Provider{key: c.SecretKey, whsec: c.WebhookSecret, base: base, http: hc, clock: clk}, nil
}

// Name is "stripe".
func (p *Provider) Name() string { return Name }

// coin is how Stripe names one coin on one network: destination_currency
// and destination_network.
type coin struct{ currency, network string }

// coins are the pairs payd accepts that Stripe's onramp documents
// (docs.stripe.com/crypto/standalone-hosted-onramp, "Currencies and
// availability": USDC on Ethereum, Solana and Polygon, ETH, SOL, BTC).
// Stripe documents no USDT and no Tron, so those are not offered. Solana
// is not offered either, though Stripe delivers there: payd's Solana
// deposits share the wallet's one address and are told apart by a Solana
// Pay reference key, which an onramp session cannot carry, so a delivery
// could never be matched to its checkout.
var coins = map[money.Asset]map[money.Network]coin{
	money.USDC: {money.Ethereum: {"usdc", "ethereum"}, money.Polygon: {"usdc", "polygon"}},
	money.ETH:  {money.Ethereum: {"eth", "ethereum"}},
	money.BTC:  {money.Bitcoin: {"btc", "bitcoin"}},
}

// Delivers reports whether Stripe documents delivering asset on n.
func (p *Provider) Delivers(asset money.Asset, n money.Network) bool {
	_, ok := coins[asset][n]
	return ok
}

// Limits are zero: Stripe documents no fixed minimum or maximum for the
// onramp (it applies its own per customer on its page), so payd applies the
// spec's 5.00 to 10,000.00 US dollars.
func (p *Provider) Limits(money.Currency, string) payd.CardLimits { return payd.CardLimits{} }

// NeedsEmail is false: customer_information is optional, and Stripe asks
// the customer for what it needs on its own page.
func (p *Provider) NeedsEmail() bool { return false }
