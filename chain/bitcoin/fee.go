package bitcoin

import (
	"context"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"time"

	"payd"
	"payd/chain"
	"payd/money"
)

// The fee estimate is for the payment a customer's wallet sends: one
// P2WPKH input and two P2WPKH outputs (the deposit and the change), 141
// virtual bytes (10.5 overhead + 68 input + 2 × 31 output, rounded up).
// Wallets that spend several inputs pay more; the estimate is what a
// typical payment costs, not a quote.
const paymentVBytes = 141

// The fee rate payd assumes is bounded: 1 sat/vB is the default minimum
// relay fee, what a node with no estimate (regtest, a fresh node) can be
// sure relays; 2,000 sat/vB is above the highest rates seen on the main
// chain (about 1,700 in April 2024), so a node answering nonsense cannot
// put an absurd fee on a checkout.
const (
	minSatPerVB = 1
	maxSatPerVB = 2000
)

// feeTarget is the confirmation target asked for, in blocks: about half an
// hour, what a customer waiting on a checkout page tolerates.
const feeTarget = 3

// feeTTL is how long a fee rate is reused: rates move over blocks, ten
// minutes apart, and a checkout page may ask on every view.
const feeTTL = time.Minute

// feeReading is the last fee rate the node gave.
type feeReading struct {
	rate    int64 // sat/vB
	oldOnly bool  // the node serves estimatefee, not estimatesmartfee (btcd)
}

// FeeEstimateUSD estimates in US cents what a wallet pays to send a BTC
// payment: the node's fee rate for confirmation within feeTarget blocks,
// bounded to [minSatPerVB, maxSatPerVB], times paymentVBytes, at the price
// Options.Price gives, rounded up to a whole cent. invalid_request (field
// asset) for a coin other than BTC; upstream_unavailable when the node or
// the price cannot be had.
func (n *Node) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if a != money.BTC {
		return 0, payd.FieldError("asset", "%s does not move on bitcoin", a)
	}
	rate, err := n.feeRate(ctx)
	if err != nil {
		return 0, err
	}
	if n.price == nil {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no BTC price is configured for bitcoin fee estimates")
	}
	cents, err := n.price(ctx, money.BTC)
	if err != nil {
		return 0, err
	}
	if cents <= 0 {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "the BTC price is not positive")
	}
	fee, ok := feeCents(rate, cents)
	if !ok {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "a bitcoin fee at %d cents a BTC is beyond belief", cents)
	}
	return fee, nil
}

// feeCents is the cost of a payment at rate sat/vB and a price of cents per
// BTC, rounded up to a whole cent; false when that does not fit an int64.
func feeCents(rate, centsPerBTC int64) (int64, bool) {
	return chain.FeeCents(big.NewInt(rate*paymentVBytes), 8, centsPerBTC)
}

// feeRate is the node's fee rate in sat/vB, from the cache while fresh.
func (n *Node) feeRate(ctx context.Context) (int64, error) {
	now := n.clock.Now()
	// The last reading says which call the node answers even once stale.
	last, fresh := n.fee.Get(now, feeTTL)
	if fresh {
		return last.rate, nil
	}
	btcPerKvB, oldOnly, err := n.askFeeRate(ctx, last.oldOnly)
	if err != nil {
		return 0, err
	}
	rate := satPerVB(btcPerKvB)
	n.fee.Set(feeReading{rate, oldOnly}, now)
	return rate, nil
}

// askFeeRate asks the node for its fee rate in BTC per 1,000 vbytes:
// estimatesmartfee on Bitcoin Core; estimatefee on btcd (v0.26.2), which
// does not serve estimatesmartfee and answers estimatefee with an error
// until it has seen three blocks, then 0 until it has seen fee-paying
// transactions mined. A node with no estimate gives "" or 0 (the floor
// applies); only a node that cannot be asked is an error.
func (n *Node) askFeeRate(ctx context.Context, oldOnly bool) (json.Number, bool, error) {
	if !oldOnly {
		var smart struct {
			FeeRate json.Number `json:"feerate"`
		}
		err := n.rpc.Call(ctx, "estimatesmartfee", &smart, feeTarget)
		if rpcCode(err) != codeMethodNotFound {
			if rpcCode(err) != 0 { // an answer without an estimate
				err = nil
			}
			return smart.FeeRate, false, err
		}
	}
	var old json.Number
	err := n.rpc.Call(ctx, "estimatefee", &old, feeTarget)
	if rpcCode(err) != 0 {
		return "", true, nil
	}
	return old, true, err
}

// satPerVB converts a rate in BTC/kvB, as nodes print it, to whole sat/vB
// (rounded up), within the bounds. No estimate or a negative one (btcd's
// -1) gives the floor.
func satPerVB(btcPerKvB json.Number) int64 {
	if !plainRate(string(btcPerKvB)) {
		return minSatPerVB
	}
	r, ok := new(big.Rat).SetString(string(btcPerKvB))
	if !ok || r.Sign() <= 0 {
		return minSatPerVB
	}
	// 1 BTC/kvB = 1e8 sat / 1000 vB = 1e5 sat/vB.
	r.Mul(r, big.NewRat(100_000, 1))
	sat := new(big.Int).Quo(r.Num(), r.Denom())
	if new(big.Rat).SetInt(sat).Cmp(r) < 0 {
		sat.Add(sat, big.NewInt(1))
	}
	switch {
	case sat.Cmp(big.NewInt(minSatPerVB)) < 0:
		return minSatPerVB
	case sat.Cmp(big.NewInt(maxSatPerVB)) > 0:
		return maxSatPerVB
	}
	return sat.Int64()
}

// plainRate reports whether s is a short number with at most a small
// exponent (Go prints 1e-07 for btcd's float), so that a hostile answer
// such as 1e999999999 cannot cost big-number work.
func plainRate(s string) bool {
	if s == "" || len(s) > 32 || strings.Trim(s, "0123456789.-+eE") != "" {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		return err == nil && exp >= -30 && exp <= 30
	}
	return true
}
