// Package solana follows Solana over a node's JSON-RPC API
// (https://solana.com/docs/rpc): a payd.Scanner for the follower (package
// watch) that asks, for the wallet's address and its token accounts, which
// transactions touched them since the last run, and the Rules of the
// network (deposits with a Solana Pay reference, payment URIs, explorer
// pages, fee estimates).
//
// Solana does not suit reading every block: a slot comes every 400 ms with
// thousands of transactions. A deposit is the wallet's one address told
// apart by a fresh reference key, so the accounts to ask about are few (the
// wallets' addresses and their associated token accounts) however many
// checkouts are open. docs/networks.md describes the design and its cost.
//
// It speaks JSON-RPC 2.0 itself over net/http: the calls payd needs are
// few. Its tests run it against package solanatest, a JSON-RPC server over
// a scriptable chain that answers as the RPC documentation shows.
package solana

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"payd"
	"payd/chain"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// Options configure a Node beyond its URL. Price is required: the fee is
// paid in SOL.
type Options struct {
	// Tokens are the mints of the network's tokens on the node's cluster
	// (--token solana:ASSET=MINT), over the mainnet mints of package chain,
	// which are the defaults only on mainnet-beta. An empty mint removes
	// the asset.
	Tokens map[money.Asset]string
	// Explorer is the base URL of a block explorer with the Solana
	// Explorer's paths (BASE/tx/SIGNATURE), over https://explorer.solana.com
	// (with ?cluster=devnet or testnet off mainnet).
	Explorer string
	// Price is the price of a coin in US cents, for the fee estimates.
	Price chain.Price
	// Clock times the rate limit, a 429's Retry-After and the fee cache;
	// clock.Real{} when nil.
	Clock clock.Clock
	// HTTPClient makes the requests; one with a 30 s timeout when nil.
	HTTPClient *http.Client
	// Log receives what the adapter warns of (a transaction that carries
	// two watched references); nothing is logged when nil.
	Log *slog.Logger
	// MaxRPS bounds the calls a second made to the node, each call of a
	// batch counted (DefaultMaxRPS when 0): a hosted provider's plan
	// allows so many, and a public endpoint about 10. One a second of
	// them is kept for fee reads, so that an API request's fee estimate
	// never waits behind a scan's batch.
	MaxRPS int
}

// DefaultMaxRPS is the calls a second a Node makes at most unless
// Options.MaxRPS says otherwise: the limit of Solana's public endpoints
// and of the cheapest plans of hosted providers.
const DefaultMaxRPS = 10

// Node is one Solana RPC node as payd reads it: a payd.Scanner. It is safe
// for concurrent use.
type Node struct {
	cluster  string // mainnet-beta, devnet or testnet
	rpc      *client
	mints    map[money.Asset]string // the tokens on this cluster
	byMint   map[string]money.Asset
	explorer string // BASE/tx/SIG then suffix
	suffix   string // ?cluster=… on the default explorer off mainnet
	price    chain.Price
	clock    clock.Clock
	log      *slog.Logger
	keys     *hd.KeyCache
	txs      *txCache
	atas     sync.Map // owner → []tokenAccount, derived once

	fee chain.Reading[int64] // the priority fee, micro-lamports a compute unit
}

var _ payd.Scanner = (*Node)(nil)

// maxCachedKeys bounds the parsed account keys Deposit keeps: one per
// wallet on the network.
const maxCachedKeys = 1024

// clusters are the genesis hashes of the clusters payd follows: a node's
// getGenesisHash names its cluster, whatever its URL says. Any other
// ledger (a local solana-test-validator, whose genesis is new with every
// ledger, a fork of another chain) is refused: its SOL would be counted
// as mainnet SOL.
var clusters = map[string]string{
	"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d": "mainnet-beta",
	"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG": "devnet",
	"4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY": "testnet",
}

// New connects to the Solana RPC node at rawURL (http or https) and reads
// its genesis hash; the node must answer: upstream_unavailable when it
// does not. A node of a cluster other than mainnet-beta, devnet or
// testnet is refused as a configuration mistake, as is a token mint whose
// decimals are not the asset's (6 for USDC and USDT). Off mainnet a token
// is offered only when Options.Tokens names its mint. Errors never repeat
// the URL, which may hold an API key.
func New(ctx context.Context, rawURL string, opts Options) (*Node, error) {
	if opts.Price == nil {
		return nil, errors.New("solana: Options.Price is needed for the fee estimates")
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.MaxRPS <= 0 {
		opts.MaxRPS = DefaultMaxRPS
	}
	rpc, err := newClient(rawURL, opts.HTTPClient, opts.Clock, opts.MaxRPS)
	if err != nil {
		return nil, err
	}
	var genesis string
	if err := rpc.call(ctx, &genesis, "getGenesisHash"); err != nil {
		return nil, err
	}
	cluster, ok := clusters[genesis]
	if !ok {
		return nil, fmt.Errorf("solana: the node %s follows the ledger of genesis %q, which is not mainnet-beta, devnet "+
			"or testnet: payd follows only those", rpc.endpoint, chain.Clip(genesis))
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	n := &Node{cluster: cluster, rpc: rpc, price: opts.Price, clock: opts.Clock, keys: hd.NewKeyCache(maxCachedKeys),
		txs: newTxCache(maxCachedTxs), log: opts.Log}
	if err := n.setTokens(opts.Tokens); err != nil {
		return nil, err
	}
	if err := n.checkDecimals(ctx); err != nil {
		return nil, err
	}
	n.explorer = strings.TrimRight(opts.Explorer, "/")
	if n.explorer == "" {
		n.explorer = "https://explorer.solana.com"
		if cluster != "mainnet-beta" {
			n.suffix = "?cluster=" + cluster
		}
	}
	return n, nil
}

// setTokens settles the mints: the mainnet ones on mainnet-beta, then
// those configured.
func (n *Node) setTokens(configured map[money.Asset]string) error {
	mints := map[money.Asset]string{}
	if n.cluster == "mainnet-beta" {
		for _, a := range money.Assets {
			if m, ok := chain.TokenContract(money.Solana, a); ok {
				mints[a] = m
			}
		}
	}
	maps.Copy(mints, configured)
	n.mints, n.byMint = map[money.Asset]string{}, map[string]money.Asset{}
	for a, m := range mints {
		if m == "" {
			continue
		}
		if !money.Supports(a, money.Solana) || a == money.SOL {
			return fmt.Errorf("solana: %s is not a token payd takes on solana", a)
		}
		if hd.ValidAddress(money.Solana, m) != nil {
			return fmt.Errorf("solana: the %s mint is not a solana address: %q", a, chain.Clip(m))
		}
		if other, dup := n.byMint[m]; dup {
			return fmt.Errorf("solana: %s and %s have one mint", a, other)
		}
		n.mints[a], n.byMint[m] = m, a
	}
	return nil
}

// tokenSupply is the value of getTokenSupply.
type tokenSupply struct {
	Value struct {
		Amount   string `json:"amount"`
		Decimals int    `json:"decimals"`
	} `json:"value"`
}

// invalidParams is the JSON-RPC code a node answers getTokenSupply with
// for an account that is not a mint.
const invalidParams = -32602

// checkDecimals asks each mint its decimals (getTokenSupply) and refuses
// one whose decimals are not its asset's: a mint configured by mistake (a
// 9-decimal token given for USDC) would make amounts a thousand times off,
// and an account that is not a mint is refused by the node itself. The
// node's own failure stays upstream_unavailable.
func (n *Node) checkDecimals(ctx context.Context) error {
	for _, a := range money.Assets {
		mint, ok := n.mints[a]
		if !ok {
			continue
		}
		var s tokenSupply
		err := n.rpc.call(ctx, &s, "getTokenSupply", mint, map[string]string{"commitment": "finalized"})
		var ne *nodeError
		if errors.As(err, &ne) && ne.code == invalidParams {
			return fmt.Errorf("solana: the %s mint %s on %s is not a token mint: %v", a, mint, n.cluster, err)
		}
		if err != nil {
			return fmt.Errorf("solana: reading the decimals of the %s mint %s: %w", a, mint, err)
		}
		if want := a.BaseDecimals(); s.Value.Decimals != want {
			return fmt.Errorf("solana: the %s mint %s on %s has %d decimals, %s has %d: is it the token's mint?",
				a, mint, n.cluster, s.Value.Decimals, a, want)
		}
	}
	return nil
}

// Name is solana.
func (n *Node) Name() money.Network { return money.Solana }

// Chain is the node's cluster: "mainnet-beta", "devnet" or "testnet".
func (n *Node) Chain() string { return n.cluster }

// Endpoint is the node's URL without credentials, path or query
// (scheme://host), for logs and the status page.
func (n *Node) Endpoint() string { return n.rpc.endpoint }

// Assets are SOL and the tokens with a mint on the node's cluster, in
// money.Assets' order.
func (n *Node) Assets() []money.Asset {
	var out []money.Asset
	for _, a := range money.Assets {
		if _, token := n.mints[a]; token || a == money.SOL {
			out = append(out, a)
		}
	}
	return out
}

// Mint is the mint of token a on the node's cluster, and false when a has
// none there.
func (n *Node) Mint(a money.Asset) (string, bool) {
	m, ok := n.mints[a]
	return m, ok
}

// takes reports whether a is one of Assets.
func (n *Node) takes(a money.Asset) bool { return slices.Contains(n.Assets(), a) }
