// Package evm follows an Ethereum or Polygon node over its JSON-RPC API:
// a payd.Node for the follower (package watch) that reads each block once,
// with its native ETH payments and the ERC-20 Transfer logs of the tokens
// payd accepts, and the Rules of the network (deposit addresses, EIP-681
// payment URIs, explorer pages, fee estimates).
//
// It speaks JSON-RPC 2.0 itself, over HTTP(S) with net/http or over a
// websocket (ws, wss) with gorilla/websocket, rather than through
// go-ethereum: the calls payd needs are few, and go-ethereum would make the
// service's binary much larger. Its tests run it against
// go-ethereum's simulated backend (package evmtest).
//
// It reads transfers the chain records: a transaction's value to a
// deposit, and Transfer logs. Ether sent to a deposit by a contract (an
// internal call, as smart-contract wallets make) leaves neither and is not
// seen; reading it would need the node's tracing API, which hosted
// providers seldom offer.
package evm

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"payd"
	"payd/chain"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// Options configure a Node beyond its network and URL. The zero Options
// are usable on polygon; ethereum needs Price for its fee estimates.
type Options struct {
	// Tokens are the contracts of the network's tokens on the node's chain
	// (--token NETWORK:ASSET=CONTRACT), over the mainnet contracts of
	// package chain, which are the defaults only when the node follows the
	// network's main chain. An empty contract removes the asset.
	Tokens map[money.Asset]string
	// Explorer is the base URL of a block explorer with etherscan's paths
	// (BASE/tx/HASH), over the defaults etherscan.io and polygonscan.com
	// on the main chains. With neither, ExplorerURL is "".
	Explorer string
	// Price is the price of a coin in US cents, for the fee estimates: an
	// ethereum fee is paid in ETH.
	Price chain.Price
	// Clock times the fee cache; clock.Real{} when nil.
	Clock clock.Clock
	// HTTPClient makes the requests to an http(s) node; one with a 30 s
	// timeout when nil. A ws(s) node is reached over one websocket
	// connection of the Node's own.
	HTTPClient *http.Client
}

// Node is one Ethereum or Polygon node as payd reads it: a payd.Node. It is
// safe for concurrent use.
type Node struct {
	network  money.Network
	chainID  uint64
	rpc      *client
	tokens   map[money.Asset]account // the tokens on this chain
	byToken  map[account]money.Asset // the same, by contract
	explorer string
	price    chain.Price
	clock    clock.Clock
	keys     *hd.KeyCache

	fee chain.Reading[*big.Int] // the gas price
}

var _ payd.Node = (*Node)(nil)

// maxCachedKeys bounds the parsed account keys Deposit keeps: one per
// wallet on the network.
const maxCachedKeys = 1024

// New connects to the node at rawURL (http, https, ws or wss) for network, which
// must be money.Ethereum or money.Polygon, and reads its chain id. The
// node must answer: upstream_unavailable when it does not. Only the
// network's own chains are followed (see chainIDs): a node on any other
// chain is refused as a configuration mistake. A chain other than the
// main one (a test network, a development chain) is followed with the
// tokens of opts only. Errors never repeat the URL, which may hold
// credentials.
func New(ctx context.Context, network money.Network, rawURL string, opts Options) (*Node, error) {
	if network != money.Ethereum && network != money.Polygon {
		return nil, fmt.Errorf("evm: %q is not an EVM network payd serves", network)
	}
	if network == money.Ethereum && opts.Price == nil {
		return nil, fmt.Errorf("evm: ethereum needs Options.Price for its fee estimates")
	}
	rpc, err := newClient(string(network), rawURL, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	n, err := connect(ctx, network, rpc, opts)
	if err != nil {
		rpc.close()
		return nil, err
	}
	return n, nil
}

// connect reads the node's chain id and settles the rest of New.
func connect(ctx context.Context, network money.Network, rpc *client, opts Options) (*Node, error) {
	var id quantity
	if err := rpc.call(ctx, &id, "eth_chainId"); err != nil {
		return nil, err
	}
	n := &Node{network: network, chainID: uint64(id), rpc: rpc, price: opts.Price,
		clock: opts.Clock, keys: hd.NewKeyCache(maxCachedKeys)}
	if n.clock == nil {
		n.clock = clock.Real{}
	}
	if err := n.checkChain(); err != nil {
		return nil, err
	}
	if err := n.setTokens(opts.Tokens); err != nil {
		return nil, err
	}
	if err := n.checkDecimals(ctx); err != nil {
		return nil, err
	}
	n.explorer = strings.TrimRight(opts.Explorer, "/")
	if n.explorer == "" && n.mainnet() {
		n.explorer = defaultExplorers[network]
	}
	return n, nil
}

// defaultExplorers are the block explorers of the main chains.
var defaultExplorers = map[money.Network]string{
	money.Ethereum: "https://etherscan.io",
	money.Polygon:  "https://polygonscan.com",
}

// chainIDs are the EIP-155 chain ids each network follows: its main
// chain, its public test networks, and the ids development chains use
// (1337: geth --dev and payd's tests; 31337: Hardhat and Anvil). Any other
// chain is refused, because its native coin would be counted as the
// network's: a BNB Smart Chain node (56) given for ethereum would make BNB
// count as ETH.
var chainIDs = map[money.Network][]uint64{
	money.Ethereum: {1, 11155111, 17000, 560048, 1337, 31337}, // mainnet, Sepolia, Holesky, Hoodi, dev
	money.Polygon:  {137, 80002, 1337, 31337},                 // mainnet, Amoy, dev
}

// checkChain refuses a node on a chain the network does not follow.
func (n *Node) checkChain() error {
	if !slices.Contains(chainIDs[n.network], n.chainID) {
		return fmt.Errorf("evm: the %s node %s follows chain id %d, which is not a %s chain payd follows (%v)",
			n.network, n.rpc.endpoint, n.chainID, n.network, chainIDs[n.network])
	}
	return nil
}

// mainnet reports whether the node follows its network's main chain.
func (n *Node) mainnet() bool {
	id, _ := chain.ChainID(n.network)
	return n.chainID == uint64(id)
}

// setTokens settles the token contracts: the mainnet ones on the main
// chain, then those configured.
func (n *Node) setTokens(configured map[money.Asset]string) error {
	contracts := map[money.Asset]string{}
	if n.mainnet() {
		for _, a := range money.Assets {
			if c, ok := chain.TokenContract(n.network, a); ok {
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
		if !money.Supports(a, n.network) || a == n.network.Native() {
			return fmt.Errorf("evm: %s is not a token payd takes on %s", a, n.network)
		}
		acc, ok := parseAccount(c)
		if !ok {
			return fmt.Errorf("evm: the %s contract on %s is not an address: %q", a, n.network, c)
		}
		if other, dup := n.byToken[acc]; dup {
			return fmt.Errorf("evm: %s and %s have one contract on %s", a, other, n.network)
		}
		n.tokens[a], n.byToken[acc] = acc, a
	}
	return nil
}

// Close closes the websocket connection to a ws(s) node, if one is open,
// and an http(s) client's idle connections. A later call dials again.
func (n *Node) Close() error { return n.rpc.close() }

// decimalsSelector is the input of an ERC-20's decimals() call: the first
// four bytes of keccak256("decimals()").
const decimalsSelector = "0x313ce567"

// checkDecimals asks each token contract its decimals() and refuses one
// whose decimals are not its asset's base decimals (package money): a
// contract configured by mistake (an 18-decimal token given for USDC)
// would make every amount paid to it a million million times too large.
// A contract that answers nothing (an address without code) is refused
// too. The node's own failure stays upstream_unavailable.
func (n *Node) checkDecimals(ctx context.Context) error {
	for _, a := range money.Assets {
		acc, ok := n.tokens[a]
		if !ok {
			continue
		}
		contract := addressOf(acc)
		var out *data
		call := map[string]string{"to": contract, "data": decimalsSelector}
		if err := n.rpc.call(ctx, &out, "eth_call", call, "latest"); err != nil {
			return fmt.Errorf("evm: reading decimals() of the %s contract %s on %s: %w", a, contract, n.network, err)
		}
		if out == nil || len(*out) != 32 {
			return fmt.Errorf("evm: the %s contract %s on %s (%s) does not answer decimals(): is it the token's contract?",
				a, contract, n.network, n.Chain())
		}
		got := new(big.Int).SetBytes(*out)
		if want := big.NewInt(int64(a.BaseDecimals())); got.Cmp(want) != 0 {
			return fmt.Errorf("evm: the %s contract %s on %s (%s) has %s decimals, %s has %s: is it the token's contract?",
				a, contract, n.network, n.Chain(), got, a, want)
		}
	}
	return nil
}

// Name is the network the node serves.
func (n *Node) Name() money.Network { return n.network }

// Chain is "chain ID" with the node's EIP-155 chain id: "chain 1",
// "chain 137", "chain 1337".
func (n *Node) Chain() string { return "chain " + strconv.FormatUint(n.chainID, 10) }

// ChainID is the node's EIP-155 chain id, as eth_chainId answered it.
func (n *Node) ChainID() uint64 { return n.chainID }

// Endpoint is the node's URL without credentials, path or query
// (scheme://host), for logs and the status page.
func (n *Node) Endpoint() string { return n.rpc.endpoint }

// Assets are ETH on ethereum (polygon's native POL is not a payd coin)
// and the tokens with a contract on the node's chain, in money.Assets'
// order.
func (n *Node) Assets() []money.Asset {
	var out []money.Asset
	for _, a := range money.Assets {
		if _, token := n.tokens[a]; token || (a == n.network.Native() && a != "") {
			out = append(out, a)
		}
	}
	return out
}

// TokenContract is the contract of token a on the node's chain, EIP-55
// spelled, and false when a has none there.
func (n *Node) TokenContract(a money.Asset) (string, bool) {
	acc, ok := n.tokens[a]
	if !ok {
		return "", false
	}
	return addressOf(acc), true
}

// takes reports whether a is one of Assets.
func (n *Node) takes(a money.Asset) bool { return slices.Contains(n.Assets(), a) }
