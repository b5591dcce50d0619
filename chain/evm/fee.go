package evm

import (
	"context"
	"math/big"
	"slices"
	"time"

	"payd"
	"payd/chain"
	"payd/money"
)

// Gas a customer's wallet spends on a payment: 21,000 for a plain ether
// transfer (the intrinsic gas of any transaction), about 65,000 for an
// ERC-20 transfer to an address that held none of the token before (a
// storage slot set from zero), which is what a fresh deposit address is.
const (
	nativeGas = 21_000
	tokenGas  = 65_000
)

// Fee estimation settings.
const (
	// feeTTL is how long a gas price is reused: a checkout page asks for
	// the fee on every quote, the price moves block by block (12 s on
	// ethereum) and an estimate need not follow each block.
	feeTTL = time.Minute
	// feeBlocks is how many recent blocks eth_feeHistory reads, and
	// tipPercentile which of their priority tips (weighted by gas) counts:
	// the median tip of a block is what an ordinary wallet offers.
	feeBlocks     = 5
	tipPercentile = 50
	// minFeeCents is the least estimate: a fee is never free, and the
	// checkout shows whole cents.
	minFeeCents = 1
	// maxGasPriceGwei bounds the gas price an estimate uses, as bitcoin's
	// estimates stop at 2,000 sat/vB: ethereum's base fee has stayed far
	// below it (its 2021-2022 peaks were a few hundred gwei), and a node
	// answering more (a broken or hostile endpoint, a test chain gone
	// wild) would otherwise show customers a fee of thousands of dollars.
	maxGasPriceGwei = 2_000
)

// maxGasPrice is maxGasPriceGwei in wei.
var maxGasPrice = big.NewInt(maxGasPriceGwei * 1e9)

// FeeEstimateUSD estimates, in US cents, what a wallet pays on top to send
// coin a: the gas of the transfer (21,000 for ETH, 65,000 for a token)
// times the gas price of the next block (base fee plus the median priority
// tip of recent blocks, from eth_feeHistory; eth_gasPrice on a node without
// it; at most 2,000 gwei), priced in the network's fee coin by
// Options.Price (ETH on ethereum, POL on polygon), rounded up to a whole
// cent and at least one. The gas price is reused for a minute.
// invalid_request (field asset) when a is not one of Assets;
// upstream_unavailable when the node, or on ethereum the ETH price, cannot
// be read now.
//
// POL is a fee coin the rate sources price when they can but a snapshot
// never waits for (docs/rates.md), so on polygon a missing POL price gives
// the one-cent minimum rather than an error: about what 65,000 gas at
// polygon's usual gas prices costs (a tenth of a cent at 30 gwei and $0.40
// a POL). Only a fee spike then goes unshown.
func (n *Node) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if !n.takes(a) {
		return 0, payd.FieldError("asset", "%s does not move on %s (%s)", a, n.network, n.Chain())
	}
	price, err := n.feeCoinPrice(ctx)
	if err != nil {
		return 0, err
	}
	if price == 0 {
		return minFeeCents, nil
	}
	wei, err := n.gasPrice(ctx)
	if err != nil {
		return 0, err
	}
	gas := int64(tokenGas)
	if a == money.ETH {
		gas = nativeGas
	}
	cents, ok := feeCents(wei, gas, price)
	if !ok {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "%s node %s: gas price %s wei is beyond belief",
			n.network, n.rpc.endpoint, wei)
	}
	return cents, nil
}

// feeCoinPrice is the price in US cents of the coin the network's fees are
// paid in: ETH on ethereum, upstream_unavailable without one; POL on
// polygon, or 0 when there is none.
func (n *Node) feeCoinPrice(ctx context.Context) (int64, error) {
	coin := money.ETH
	if n.network != money.Ethereum {
		coin = money.POL
	}
	var err error
	if n.price != nil {
		var p int64
		if p, err = n.price(ctx, coin); err == nil && p > 0 {
			return p, nil
		}
	}
	if coin == money.POL {
		return 0, nil
	}
	return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no ETH price for the %s fee: %v", n.network, err)
}

// feeCents is gas at wei per gas, with the fee coin at price cents, in cents
// rounded up, at least minFeeCents; false when that does not fit an int64.
func feeCents(wei *big.Int, gas, price int64) (int64, bool) {
	cents, ok := chain.FeeCents(new(big.Int).Mul(wei, big.NewInt(gas)), 18, price)
	if !ok {
		return 0, false
	}
	return max(cents, minFeeCents), true
}

// gasPrice is the gas price of the next block in wei, at most
// maxGasPrice, from the cache when it is younger than feeTTL.
func (n *Node) gasPrice(ctx context.Context) (*big.Int, error) {
	now := n.clock.Now()
	if wei, fresh := n.fee.Get(now, feeTTL); fresh {
		return wei, nil
	}
	wei, err := n.readGasPrice(ctx)
	if err != nil {
		return nil, err
	}
	if wei.Cmp(maxGasPrice) > 0 {
		wei = maxGasPrice
	}
	n.fee.Set(wei, now)
	return wei, nil
}

// feeHistory is the answer of eth_feeHistory.
type feeHistory struct {
	BaseFeePerGas []bigQuantity   `json:"baseFeePerGas"`
	Reward        [][]bigQuantity `json:"reward"`
}

// readGasPrice asks the node: eth_feeHistory's base fee of the next block
// plus the median of recent blocks' median tips, or eth_gasPrice when the
// node has no fee history (a chain before EIP-1559, a provider without the
// method).
func (n *Node) readGasPrice(ctx context.Context) (*big.Int, error) {
	var h feeHistory
	err := n.rpc.call(ctx, &h, "eth_feeHistory", hexQuantity(feeBlocks), "latest", []int{tipPercentile})
	if err == nil && len(h.BaseFeePerGas) > 0 {
		next := &h.BaseFeePerGas[len(h.BaseFeePerGas)-1].Int
		return new(big.Int).Add(next, medianTip(h.Reward)), nil
	}
	var gp bigQuantity
	if err := n.rpc.call(ctx, &gp, "eth_gasPrice"); err != nil {
		return nil, err
	}
	return &gp.Int, nil
}

// medianTip is the median of the blocks' tips at tipPercentile, 0 when
// there are none.
func medianTip(reward [][]bigQuantity) *big.Int {
	var tips []*big.Int
	for _, r := range reward {
		if len(r) > 0 {
			tips = append(tips, &r[0].Int)
		}
	}
	if len(tips) == 0 {
		return new(big.Int)
	}
	slices.SortFunc(tips, func(a, b *big.Int) int { return a.Cmp(b) })
	return tips[len(tips)/2]
}
