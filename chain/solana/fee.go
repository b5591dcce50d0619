package solana

import (
	"context"
	"math/big"
	"slices"
	"time"

	"payd"
	"payd/chain"
	"payd/money"
)

// Fee estimation settings.
const (
	// baseFee is what a transaction pays per signature; a payment has one
	// (the customer's).
	baseFee = 5_000
	// computeUnits is the compute budget a payment's priority fee is paid
	// on: 200,000, the default limit of one instruction. Wallets that
	// simulate first ask fewer (a SOL transfer uses a few hundred, a token
	// transfer a few thousand, creating the payee's token account some
	// 25,000), so the estimate errs on the high side, never below what a
	// wallet without a limit instruction pays.
	computeUnits = 200_000
	// feeTTL is how long a priority fee is reused: a checkout asks on every
	// quote, and fees move slot by slot.
	feeTTL = time.Minute
	// minFeeCents is the least estimate: a fee is never free, and the
	// checkout shows whole cents.
	minFeeCents = 1
	// maxMicroLamports bounds the priority fee per compute unit an
	// estimate uses (0.002 SOL at computeUnits): a node answering more (a
	// broken or hostile endpoint) would otherwise show customers a fee of
	// dollars for a payment that costs a fraction of a cent.
	maxMicroLamports = 10_000_000
	// solDecimals are SOL's: a SOL is 10^9 lamports.
	solDecimals = 9
)

// prioritizationFee is one entry of getRecentPrioritizationFees.
type prioritizationFee struct {
	Slot              int64 `json:"slot"`
	PrioritizationFee int64 `json:"prioritizationFee"`
}

// FeeEstimateUSD estimates, in US cents, what a wallet pays on top to send
// coin a: 5,000 lamports for its signature plus the median priority fee
// of recent slots (getRecentPrioritizationFees, micro-lamports per compute
// unit, at most 10,000,000) on 200,000 compute units, priced by
// Options.Price, rounded up to a whole cent and at least one. The same for
// SOL and tokens; the rent a first token payment to a wallet pays to
// create its token account (about 0.002 SOL, once per wallet and mint) is
// not counted. The priority fee is reused for a minute. invalid_request
// (field asset) when a is not one of Assets; upstream_unavailable when the
// node or the price cannot be read now.
func (n *Node) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if !n.takes(a) {
		return 0, payd.FieldError("asset", "%s does not move on solana (%s)", a, n.cluster)
	}
	micro, err := n.priorityFee(ctx)
	if err != nil {
		return 0, err
	}
	price, err := n.price(ctx, money.SOL)
	if err != nil {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no SOL price for the solana fee: %v", err)
	}
	cents, ok := feeCents(micro, price)
	if !ok {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "a solana fee at %d cents a SOL is beyond belief", price)
	}
	return cents, nil
}

// feeCents is the fee of a payment at micro micro-lamports per compute
// unit, with SOL at price cents, in cents rounded up, at least
// minFeeCents; false when that does not fit an int64. micro is at most
// maxMicroLamports, so the lamports never overflow.
func feeCents(micro, price int64) (int64, bool) {
	lamports := baseFee + (micro*computeUnits+999_999)/1_000_000
	cents, ok := chain.FeeCents(big.NewInt(lamports), solDecimals, price)
	if !ok {
		return 0, false
	}
	return max(cents, minFeeCents), true
}

// priorityFee is the median of recent slots' priority fees, from the cache
// when it is younger than feeTTL.
func (n *Node) priorityFee(ctx context.Context) (int64, error) {
	now := n.clock.Now()
	if micro, fresh := n.fee.Get(now, feeTTL); fresh {
		return micro, nil
	}
	var fees []prioritizationFee
	if err := n.rpc.feeCall(ctx, &fees, "getRecentPrioritizationFees"); err != nil {
		return 0, err
	}
	micro := medianFee(fees)
	n.fee.Set(micro, now)
	return micro, nil
}

// medianFee is the median of the fees, clamped to [0, maxMicroLamports];
// 0 when there are none.
func medianFee(fees []prioritizationFee) int64 {
	if len(fees) == 0 {
		return 0
	}
	vs := make([]int64, len(fees))
	for i, f := range fees {
		vs[i] = min(max(f.PrioritizationFee, 0), maxMicroLamports)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}
