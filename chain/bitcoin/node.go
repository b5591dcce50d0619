// Package bitcoin follows a real bitcoin chain through a Bitcoin
// Core-compatible node (bitcoind, btcd) over JSON-RPC: it is the
// payd.Node a chain follower reads block by block and mempool by mempool.
//
// Blocks and mempool transactions are read raw (hex) and decoded here, and
// outputs are matched against the watched deposits by their output script,
// so the node needs no wallet, no address index and no txindex.
package bitcoin

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"payd"
	"payd/chain"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// Options configure a Node; the zero Options are usable on a public chain.
type Options struct {
	// Explorer is the base URL of an Esplora-style explorer (mempool.space,
	// blockstream.info) whose transaction pages are Explorer+"/tx/"+txid.
	// Empty means mempool.space for main, testnet3, testnet4 and signet,
	// and no explorer for regtest.
	Explorer string
	// Price gives the price of BTC in US cents, for FeeEstimateUSD.
	// Without it FeeEstimateUSD answers upstream_unavailable.
	Price chain.Price
	// Clock times the fee-rate cache; nil means clock.Real{}.
	Clock clock.Clock
	// HTTP carries the calls and their timeouts; nil means a client that
	// gives up on a call after Timeout.
	HTTP *http.Client
	// Timeout bounds one call when HTTP is nil; zero means DefaultTimeout.
	Timeout time.Duration
}

// Node is a bitcoin node as payd reads it: payd.Rules for the chain the
// node follows, and its blocks and mempool. It is safe for concurrent use.
type Node struct {
	rpc      *Client
	chain    string // as the node names it
	hrp      string // bech32 prefix of the chain's segwit addresses
	explorer string
	price    chain.Price
	clock    clock.Clock
	keys     *hd.KeyCache

	fee  chain.Reading[feeReading]
	pool mempool
}

var _ payd.Node = (*Node)(nil)

// chains maps the chain names nodes report (getblockchaininfo "chain") to
// their bech32 prefix, default explorer and genesis block hash. Bitcoin
// Core says main, test, testnet4, signet, regtest; btcd says mainnet,
// testnet3, testnet4, signet, regtest (chaincfg Params.Name). btcd's simnet
// is left out: no wallet a customer pays from knows it. The name alone
// does not tell bitcoin: Litecoin and Dogecoin nodes, forks of Bitcoin
// Core, say "main" too, and payd would count their coins as BTC; the
// genesis block does tell (every signet shares one, its challenge is not
// in it).
var chains = map[string]struct{ hrp, explorer, genesis string }{
	"main":     {"bc", "https://mempool.space", genesisMain},
	"mainnet":  {"bc", "https://mempool.space", genesisMain},
	"test":     {"tb", "https://mempool.space/testnet", genesisTestnet3},
	"testnet3": {"tb", "https://mempool.space/testnet", genesisTestnet3},
	"testnet4": {"tb", "https://mempool.space/testnet4", genesisTestnet4},
	"signet":   {"tb", "https://mempool.space/signet", genesisSignet},
	"regtest":  {"bcrt", "", genesisRegtest},
}

// The genesis block hashes of bitcoin's chains.
const (
	genesisMain     = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
	genesisTestnet3 = "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943"
	genesisTestnet4 = "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"
	genesisSignet   = "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6"
	genesisRegtest  = "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
)

// New connects to the node at rawURL (http://USER:PASS@HOST:PORT) and asks
// which chain it follows, which fixes the address encoding: bc1 on main,
// tb1 on the test networks, bcrt1 on regtest, and checks that the chain
// is bitcoin's by its genesis block (getblockhash 0). upstream_unavailable
// when the node cannot be asked; invalid_request when the URL is malformed
// or the node follows a chain payd does not serve, such as Litecoin's.
func New(ctx context.Context, rawURL string, opts Options) (*Node, error) {
	hc := opts.HTTP
	if hc == nil {
		t := opts.Timeout
		if t <= 0 {
			t = DefaultTimeout
		}
		hc = &http.Client{Timeout: t}
	}
	rpc, err := NewClient(rawURL, hc)
	if err != nil {
		return nil, err
	}
	var info struct {
		Chain string `json:"chain"`
	}
	if err := rpc.Call(ctx, "getblockchaininfo", &info); err != nil {
		return nil, err
	}
	c, ok := chains[info.Chain]
	if !ok {
		return nil, payd.FieldError("url", "the bitcoin node at %s follows chain %q, which payd does not serve", rpc.Host(), info.Chain)
	}
	var genesis string
	if err := rpc.Call(ctx, "getblockhash", &genesis, 0); err != nil {
		return nil, err
	}
	if genesis != c.genesis {
		return nil, payd.FieldError("url", "the bitcoin node at %s follows a chain %q whose genesis block is %s, not bitcoin's %s: is it another coin's node (Litecoin, Dogecoin)?",
			rpc.Host(), info.Chain, truncate(genesis), c.genesis)
	}
	n := &Node{rpc: rpc, chain: info.Chain, hrp: c.hrp, explorer: c.explorer,
		price: opts.Price, clock: opts.Clock, keys: hd.NewKeyCache(64)}
	if opts.Explorer != "" {
		n.explorer = strings.TrimRight(opts.Explorer, "/")
	}
	if n.clock == nil {
		n.clock = clock.Real{}
	}
	n.pool.init()
	return n, nil
}

// Name is bitcoin.
func (n *Node) Name() money.Network { return money.Bitcoin }

// Chain is the chain the node follows as it names it ("main", "regtest",
// "mainnet" on btcd, …).
func (n *Node) Chain() string { return n.chain }

// Assets are BTC alone.
func (n *Node) Assets() []money.Asset { return []money.Asset{money.BTC} }

// main reports whether the node follows bitcoin's main chain.
func (n *Node) main() bool { return n.hrp == "bc" }

// Deposit derives the P2WPKH address of checkout number index from a
// BIP84 account key, encoded for the chain the node follows: a mainnet
// zpub on a regtest node gives the bcrt1 addresses of the same keys, so a
// deployment can be tried on regtest with the wallet it will use. A test
// key (vpub) is refused on the main chain, where its owner's wallet would
// not see the payments. invalid_request (field account_key or index).
func (n *Node) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	k, err := n.keys.Parse(money.Bitcoin, accountKey)
	if err != nil {
		return payd.Deposit{}, chain.KeyError("account_key", err)
	}
	if k.Testnet() && n.main() {
		return payd.Deposit{}, payd.FieldError("account_key", "is a testnet key (vpub); the bitcoin node follows the main chain")
	}
	addr, err := k.BitcoinAddress(index, n.hrp)
	if err != nil {
		return payd.Deposit{}, chain.KeyError("index", err)
	}
	return payd.Deposit{Address: addr}, nil
}

// ValidAddress returns invalid_request (field address) unless s is an
// address of the chain the node follows: bc1/1/3 on main; on the test
// networks tb1 (bcrt1 on regtest) and the shared m/n/2 legacy forms.
func (n *Node) ValidAddress(s string) error {
	if n.main() {
		return chain.KeyError("address", hd.ValidAddress(money.Bitcoin, s))
	}
	if err := hd.ValidTestnetAddress(money.Bitcoin, s); err != nil {
		return chain.KeyError("address", err)
	}
	lower := strings.ToLower(s)
	other := map[string]string{"tb": "bcrt1", "bcrt": "tb1"}[n.hrp]
	if strings.HasPrefix(lower, other) {
		return payd.FieldError("address", "is a %s… address; the bitcoin node follows %s, whose addresses start %s1", other, n.chain, n.hrp)
	}
	return nil
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s has the
// shape of a bitcoin txid.
func (n *Node) ValidTxHash(s string) error {
	return chain.ValidTxHash(money.Bitcoin, s)
}

// PaymentURI is the BIP21 URI a wallet scans to pay req (see
// chain.PaymentURI).
func (n *Node) PaymentURI(req payd.PaymentRequest) string {
	return chain.PaymentURI(money.Bitcoin, req)
}

// ExplorerURL is the explorer's page of the transaction, or "" on a chain
// without one (regtest unless Options.Explorer names one).
func (n *Node) ExplorerURL(txHash string) string {
	if n.explorer == "" {
		return ""
	}
	return n.explorer + "/tx/" + url.PathEscape(txHash)
}

// WatchKey is the output script address pays to, as a string: outputs are
// matched by script, so a block is scanned without encoding the address
// of each output. false when address is not one of the node's chain.
func (n *Node) WatchKey(address string) (string, bool) {
	if n.ValidAddress(address) != nil {
		return "", false
	}
	script, ok := addressScript(address)
	return string(script), ok
}

// unavailable is upstream_unavailable for a node answer payd cannot use.
func (n *Node) unavailable(format string, args ...any) error {
	return n.rpc.unavailable(format, args...)
}
