package devnet

import (
	"context"
	"net/url"

	"payd"
	"payd/chain"
	"payd/money"
)

// Chain is one simulated network as payd uses it: a payd.Network that
// derives real deposit addresses, checks addresses and hashes with the
// network's own rules and reports the devnet's transfers.
type Chain struct {
	d *Devnet
	n money.Network
}

var _ payd.Network = (*Chain)(nil)

// Name is the network the chain simulates.
func (c *Chain) Name() money.Network { return c.n }

// Assets are every coin of the network: the devnet moves them all.
func (c *Chain) Assets() []money.Asset {
	var out []money.Asset
	for _, a := range money.Assets {
		if money.Supports(a, c.n) {
			out = append(out, a)
		}
	}
	return out
}

// Deposit derives the deposit of checkout number index from a wallet's
// account key (chain.Deposit): a fresh address, or on solana the wallet's
// one address with a new Solana Pay reference.
func (c *Chain) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	return chain.Deposit(c.d.keys, c.n, accountKey, index)
}

// ValidAddress returns invalid_request (field address) unless s is an
// address of this network's main chain.
func (c *Chain) ValidAddress(s string) error {
	return chain.ValidAddress(c.n, s)
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s has the
// shape of a transaction hash of this network.
func (c *Chain) ValidTxHash(s string) error {
	return chain.ValidTxHash(c.n, s)
}

// PaymentURI is the URI a wallet scans to pay req (see chain.PaymentURI).
func (c *Chain) PaymentURI(req payd.PaymentRequest) string { return chain.PaymentURI(c.n, req) }

// ExplorerURL is the devnet's own page for the transaction: the API's
// GET /devnet/transactions/{network}/{hash}.
func (c *Chain) ExplorerURL(txHash string) string {
	return c.d.explorerBase + "/devnet/transactions/" + string(c.n) + "/" + url.PathEscape(txHash)
}

// FeeEstimateUSD returns the static estimate of the fee a wallet pays to
// send coin a on this network, in US cents (see fees). invalid_request
// (field asset) when a does not move on this network. The devnet is never
// unavailable, so it never answers upstream_unavailable.
func (c *Chain) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	cents, ok := fees[c.n][a]
	if !ok {
		return 0, payd.FieldError("asset", "%s does not move on %s", a, c.n)
	}
	return cents, nil
}

// Transfers reports every transfer into the deposits, in the mempool (0
// confirmations) or in a block: on solana those carrying a deposit's
// reference, elsewhere those to its address. It reads an index, one map
// lookup per deposit, so a watcher may poll thousands of deposits often.
func (c *Chain) Transfers(ctx context.Context, deposits []payd.Deposit) ([]payd.Transfer, error) {
	c.d.mu.RLock()
	defer c.d.mu.RUnlock()
	l := c.d.ledgers[c.n]
	var out []payd.Transfer
	for _, dep := range deposits {
		k := l.depositKey(dep)
		if k == "" {
			continue
		}
		for _, t := range l.byKey[k] {
			to := dep.Address
			if c.n == money.Solana {
				to = t.to // found by reference: report where it really went
			}
			out = append(out, l.transfer(t, to))
		}
	}
	return out, nil
}

// Changed returns a channel closed at this network's next change (see
// Devnet.Changed).
func (c *Chain) Changed() <-chan struct{} { return c.d.Changed(c.n) }

// Height returns the height of the network's last block, 0 before any.
func (c *Chain) Height() int { return c.d.Height(c.n) }
