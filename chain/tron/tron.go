// Package tron follows a Tron full node, or TronGrid, over its HTTP API
// (https://developers.tron.network/reference/full-node-api-overview): a
// payd.Node for the follower (package watch) that reads each block once,
// with the TRC-20 Transfer logs of the tokens payd accepts (USDT), and
// the Rules of the network (deposit addresses, TRC-20 payment URIs,
// tronscan pages, fee estimates).
//
// It reads a block with its transactions' ids (/wallet/getblock), then
// the infos of its transactions (/wallet/gettransactioninfobyblocknum),
// which carry the logs and the receipts' results, and takes the infos
// only when they are exactly those of the block read, so that the infos
// of one block are never stored under another's hash when the chain
// moves meanwhile or a provider's backends disagree. TRX itself is not a payd coin on tron, so
// transactions' own values are not read. The node's pending pool is not
// read either: a transfer counts from its block, which comes within
// seconds (a block every 3 s).
package tron

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"payd"
	"payd/chain"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// Options configure a Node beyond its URL.
type Options struct {
	// Tokens are the contracts of the network's tokens on the node's chain
	// (--token tron:USDT=CONTRACT, base58 T… or hex 41…), over the mainnet
	// contract of package chain, which is the default only when the node
	// follows mainnet. An empty contract removes the asset.
	Tokens map[money.Asset]string
	// Explorer is the base URL of a block explorer with tronscan's paths
	// (BASE/#/transaction/HASH), over the defaults tronscan.org (mainnet),
	// nile.tronscan.org and shasta.tronscan.org.
	Explorer string
	// Price is the price of a coin in US cents, for the fee estimates: a
	// tron fee is paid in TRX. Required.
	Price chain.Price
	// Clock times the fee cache; clock.Real{} when nil.
	Clock clock.Clock
	// HTTPClient makes the requests; one with a 30 s timeout when nil.
	HTTPClient *http.Client
}

// Node is one Tron node as payd reads it: a payd.Node. It is safe for
// concurrent use.
type Node struct {
	api      *client
	chain    string                  // "mainnet", "nile", "shasta"
	tokens   map[money.Asset]account // the tokens on this chain
	byToken  map[account]money.Asset // the same, by contract
	explorer string
	price    chain.Price
	clock    clock.Clock
	keys     *hd.KeyCache

	fee chain.Reading[int64] // a token transfer's fee in sun
}

var _ payd.Node = (*Node)(nil)

// account is the 20 bytes of a tron account, the address without its
// 0x41 prefix: the form TRC-20 logs carry in their topics and contract
// address, and the key of the watched set.
type account [20]byte

// maxCachedKeys bounds the parsed account keys Deposit keeps: one per
// wallet on the network.
const maxCachedKeys = 1024

// BlockInterval is how often tron makes a block: one every 3 s, by 27
// super representatives in turn. cmd/payd reads the tip this often by
// default; reading it more often would only spend a TronGrid key's daily
// quota on answers that did not change.
const BlockInterval = 3 * time.Second

// The genesis block ids (blockID of block 0) of the tron chains payd
// follows: mainnet, and the public test networks Nile and Shasta.
const (
	MainnetGenesis = "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc"
	NileGenesis    = "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"
	ShastaGenesis  = "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e"
)

// genesis names the chains payd follows by their genesis block id. A node
// on any other chain (a private network, a fork) is refused: its TRC-20
// tokens would be counted as the real ones.
var genesis = map[string]string{MainnetGenesis: "mainnet", NileGenesis: "nile", ShastaGenesis: "shasta"}

// defaultExplorers are tronscan's sites of each chain.
var defaultExplorers = map[string]string{
	"mainnet": "https://tronscan.org",
	"nile":    "https://nile.tronscan.org",
	"shasta":  "https://shasta.tronscan.org",
}

// New connects to the node at rawURL (http or https; a user without a
// password in the URL is TronGrid's API key) and reads its genesis block
// to know its chain. The node must answer: upstream_unavailable when it
// does not. Only mainnet, nile and shasta are followed: a node on another
// chain is refused as a configuration mistake, as is a token contract
// whose decimals() is not its asset's. A chain other than mainnet is
// followed with the tokens of opts only. Errors never repeat the URL,
// which may hold credentials.
func New(ctx context.Context, rawURL string, opts Options) (*Node, error) {
	if opts.Price == nil {
		return nil, errors.New("tron: Options.Price is needed for the fee estimates")
	}
	api, err := newClient(rawURL, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	n := &Node{api: api, price: opts.Price, clock: opts.Clock, keys: hd.NewKeyCache(maxCachedKeys)}
	if n.clock == nil {
		n.clock = clock.Real{}
	}
	if err := n.connect(ctx, opts); err != nil {
		api.close()
		return nil, err
	}
	return n, nil
}

// connect reads the node's chain and settles the rest of New.
func (n *Node) connect(ctx context.Context, opts Options) error {
	g, err := n.header(ctx, 0)
	if err != nil {
		return err
	}
	name, ok := genesis[g.BlockID.String()]
	if !ok {
		return fmt.Errorf("tron: the node %s follows the chain of genesis block %s, which is not a tron chain payd follows (mainnet, nile, shasta)",
			n.api.endpoint, g.BlockID)
	}
	n.chain = name
	if err := n.setTokens(opts.Tokens); err != nil {
		return err
	}
	if err := n.checkDecimals(ctx); err != nil {
		return err
	}
	n.explorer = strings.TrimRight(opts.Explorer, "/")
	if n.explorer == "" {
		n.explorer = defaultExplorers[name]
	}
	return nil
}

// setTokens settles the token contracts: the mainnet ones on mainnet,
// then those configured.
func (n *Node) setTokens(configured map[money.Asset]string) error {
	contracts := map[money.Asset]string{}
	if n.chain == "mainnet" {
		for _, a := range money.Assets {
			if c, ok := chain.TokenContract(money.Tron, a); ok {
				contracts[a] = c
			}
		}
	}
	maps.Copy(contracts, configured)
	n.tokens = map[money.Asset]account{}
	n.byToken = map[account]money.Asset{}
	for a, c := range contracts {
		if c == "" {
			continue
		}
		if !money.Supports(a, money.Tron) || a == money.Tron.Native() {
			return fmt.Errorf("tron: %s is not a token payd takes on tron", a)
		}
		acc, ok := parseAccount(c)
		if !ok {
			return fmt.Errorf("tron: the %s contract is not a tron address: %q", a, c)
		}
		if other, dup := n.byToken[acc]; dup {
			return fmt.Errorf("tron: %s and %s have one contract", a, other)
		}
		n.tokens[a], n.byToken[acc] = acc, a
	}
	return nil
}

// zeroOwner is the caller of the constant calls: any account may read a
// contract's decimals(), and /wallet/triggerconstantcontract wants one.
const zeroOwner = "410000000000000000000000000000000000000000"

// constantCall is what checkDecimals reads of triggerconstantcontract's
// answer: result.result is true when the call ran, and constant_result
// holds what it returned.
type constantCall struct {
	Result struct {
		Result  bool   `json:"result"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"result"`
	ConstantResult []string `json:"constant_result"`
}

// checkDecimals asks each token contract its decimals() and refuses one
// whose decimals are not its asset's base decimals (package money): a
// contract configured by mistake would make every amount paid to it
// wrong by powers of ten. A contract that answers nothing (an address
// without code, a call that fails) is refused too. The node's own failure
// stays upstream_unavailable.
func (n *Node) checkDecimals(ctx context.Context) error {
	for _, a := range money.Assets {
		acc, ok := n.tokens[a]
		if !ok {
			continue
		}
		contract := addressOf(acc)
		var out constantCall
		call := map[string]any{"owner_address": zeroOwner, "contract_address": "41" + hex.EncodeToString(acc[:]),
			"function_selector": "decimals()", "parameter": "", "visible": false}
		if err := n.api.post(ctx, "/wallet/triggerconstantcontract", call, &out); err != nil {
			return fmt.Errorf("tron: reading decimals() of the %s contract %s: %w", a, contract, err)
		}
		got, ok := decodeWord(out)
		if !ok {
			return fmt.Errorf("tron: the %s contract %s on %s does not answer decimals(): is it the token's contract?",
				a, contract, n.chain)
		}
		if want := big.NewInt(int64(a.BaseDecimals())); got.Cmp(want) != 0 {
			return fmt.Errorf("tron: the %s contract %s on %s has %s decimals, %s has %s: is it the token's contract?",
				a, contract, n.chain, got, a, want)
		}
	}
	return nil
}

// decodeWord is the one 32-byte word a successful constant call returned.
func decodeWord(c constantCall) (*big.Int, bool) {
	if !c.Result.Result || len(c.ConstantResult) != 1 || len(c.ConstantResult[0]) != 64 {
		return nil, false
	}
	b, err := hex.DecodeString(c.ConstantResult[0])
	if err != nil {
		return nil, false
	}
	return new(big.Int).SetBytes(b), true
}

// Close lets go of the client's idle connections.
func (n *Node) Close() error {
	n.api.close()
	return nil
}

// Name is money.Tron.
func (n *Node) Name() money.Network { return money.Tron }

// Chain is the chain the node follows, told by its genesis block:
// "mainnet", "nile" or "shasta".
func (n *Node) Chain() string { return n.chain }

// Endpoint is the node's URL without credentials, path or query
// (scheme://host), for logs and the status page.
func (n *Node) Endpoint() string { return n.api.endpoint }

// Assets are the tokens with a contract on the node's chain (TRX is not a
// payd coin), in money.Assets' order.
func (n *Node) Assets() []money.Asset {
	var out []money.Asset
	for _, a := range money.Assets {
		if _, ok := n.tokens[a]; ok {
			out = append(out, a)
		}
	}
	return out
}

// TokenContract is the base58 address of token a's contract on the
// node's chain, and false when a has none there.
func (n *Node) TokenContract(a money.Asset) (string, bool) {
	acc, ok := n.tokens[a]
	if !ok {
		return "", false
	}
	return addressOf(acc), true
}

// takes reports whether a is one of Assets.
func (n *Node) takes(a money.Asset) bool { return slices.Contains(n.Assets(), a) }
