package tron

import (
	"context"
	"math/big"
	"time"

	"payd"
	"payd/chain"
	"payd/money"
)

// trx is tron's native coin, in which fees are paid: a fee coin, priced
// by the rates but never offered (money.TRX).
const trx = money.TRX

// trxDecimals are TRX's: a TRX is 10^6 sun, tron's base unit.
const trxDecimals = 6

// What a customer's wallet burns for a USDT transfer when it has neither
// staked energy nor bandwidth: the energy of the transfer call, about
// 65,000 to an address that already holds the token and 130,000 to one
// that holds none (a storage slot set from zero), which is what a fresh
// deposit address is, and the bandwidth of the transaction, about 345
// bytes.
const (
	tokenEnergy    = 130_000
	tokenBandwidth = 345
)

// Fee estimation settings, as on ethereum (package evm).
const (
	// feeTTL is how long the chain's prices are reused: a checkout page
	// asks for the fee on every quote, and the prices change by the
	// super representatives' votes, rarely.
	feeTTL = time.Minute
	// minFeeCents is the least estimate: a fee is never free, and the
	// checkout shows whole cents.
	minFeeCents = 1
	// maxEnergySun and maxBandwidthSun bound the prices an estimate uses:
	// the energy price has stayed at or below 420 sun and the bandwidth
	// price at 1,000 sun a byte, and a node answering more (a broken or
	// hostile endpoint) would otherwise show customers a fee of thousands
	// of dollars.
	maxEnergySun    = 1_000
	maxBandwidthSun = 10_000
	// Prices used when the node does not list them.
	defaultEnergySun    = 100
	defaultBandwidthSun = 1_000
)

// FeeEstimateUSD estimates, in US cents, what a wallet burns in TRX to
// send coin a: 130,000 energy at the chain's energy price (getEnergyFee of
// /wallet/getchainparameters, at most 1,000 sun) plus 345 bytes at its
// bandwidth price (getTransactionFee, at most 10,000 sun a byte), priced
// in TRX by Options.Price, rounded up to a whole cent and at least one. A
// wallet that staked TRX for energy pays less. The prices are reused for
// a minute. invalid_request (field asset) when a is not one of Assets;
// upstream_unavailable when the node cannot be read now.
//
// TRX is a fee coin the rate sources price when they can but a snapshot
// never waits for (docs/rates.md), so, as on polygon without a POL price
// (package evm), a missing TRX price gives the one-cent minimum rather
// than an error, which would refuse every tron checkout for want of a
// number shown beside the amount. Unlike polygon's, tron's usual fee (13
// TRX and more) is well above a cent: the checkout then understates it,
// and a fee spike goes unshown, until the rates price TRX again.
func (n *Node) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if !n.takes(a) {
		return 0, payd.FieldError("asset", "%s does not move on tron (%s)", a, n.Chain())
	}
	price, err := n.price(ctx, trx)
	if err != nil || price <= 0 {
		return minFeeCents, nil
	}
	sun, err := n.feeSun(ctx)
	if err != nil {
		return 0, err
	}
	cents, ok := feeCents(sun, price)
	if !ok {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "tron node %s: a fee of %d sun at %d cents a TRX is beyond belief",
			n.api.endpoint, sun, price)
	}
	return cents, nil
}

// feeCents is sun at price cents a TRX, in cents rounded up, at least
// minFeeCents; false when that does not fit an int64.
func feeCents(sun, price int64) (int64, bool) {
	cents, ok := chain.FeeCents(big.NewInt(sun), trxDecimals, price)
	if !ok {
		return 0, false
	}
	return max(cents, minFeeCents), true
}

// feeSun is the fee of a token transfer in sun, from the cache when it is
// younger than feeTTL.
func (n *Node) feeSun(ctx context.Context) (int64, error) {
	now := n.clock.Now()
	if sun, fresh := n.fee.Get(now, feeTTL); fresh {
		return sun, nil
	}
	energy, bandwidth, err := n.readPrices(ctx)
	if err != nil {
		return 0, err
	}
	sun := tokenEnergy*energy + tokenBandwidth*bandwidth
	n.fee.Set(sun, now)
	return sun, nil
}

// chainParameters is the answer of /wallet/getchainparameters: a list of
// keys and values (a value of 0 is left out).
type chainParameters struct {
	ChainParameter []struct {
		Key   string `json:"key"`
		Value int64  `json:"value"`
	} `json:"chainParameter"`
}

// readPrices asks the node for the energy price and the bandwidth price
// in sun, bounded; a price the node does not list is tron's current one.
func (n *Node) readPrices(ctx context.Context) (energy, bandwidth int64, err error) {
	var p chainParameters
	if err := n.api.post(ctx, "/wallet/getchainparameters", struct{}{}, &p); err != nil {
		return 0, 0, err
	}
	energy, bandwidth = defaultEnergySun, defaultBandwidthSun
	for _, kv := range p.ChainParameter {
		switch kv.Key {
		case "getEnergyFee":
			energy = kv.Value
		case "getTransactionFee":
			bandwidth = kv.Value
		}
	}
	return min(max(energy, 0), maxEnergySun), min(max(bandwidth, 0), maxBandwidthSun), nil
}
