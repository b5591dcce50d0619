package payd

import (
	"context"
	"iter"

	"payd/money"
)

// Deposit is where one checkout receives: a fresh address (bitcoin,
// ethereum, polygon, tron), or the wallet's one Solana address told apart
// by a Solana Pay reference key.
type Deposit struct {
	Address string
	// Reference is the Solana Pay reference key; "" on other networks.
	Reference string
}

// Transfer is one movement of a coin into a watched deposit, as a network
// reports it at one moment. The same transfer is reported again on every
// read, with its confirmations then; payd keys it by TxHash and Index and
// counts it once.
type Transfer struct {
	TxHash string
	// Index tells apart several transfers of one transaction (an output
	// number, a log index).
	Index int
	From  string
	// To and Reference are the deposit the transfer pays.
	To        string
	Reference string
	// Amount is in base units; its Asset is the coin that moved.
	Amount money.CoinAmount
	// Confirmations is 0 while the transfer waits in the mempool, then the
	// number of blocks that include it or build on it. A reorg can lower it.
	Confirmations int
}

// Key identifies the transfer across reads.
func (t Transfer) Key() TransferKey { return TransferKey{t.TxHash, t.Index} }

// TransferKey identifies one transfer.
type TransferKey struct {
	TxHash string
	Index  int
}

// PaymentRequest is what a wallet is asked to send: the coin amount to a
// deposit, for a payment URI (spec 2.5 payment_uri).
type PaymentRequest struct {
	Deposit Deposit
	Amount  money.CoinAmount
	// Label names the business, for wallets that show it (Solana Pay).
	Label string
}

// Rules are what payd knows of a network without reading its chain:
// deposit addresses, formats, payment URIs, explorer pages and fees.
// chain/devnet has them for every network; the adapters for real nodes
// for theirs (chain/bitcoin, chain/evm).
type Rules interface {
	// Name is the network the adapter serves.
	Name() money.Network
	// Assets are the coins a checkout can take on the network as
	// configured: on a real node only the native coin and the tokens
	// with a contract on the node's chain.
	Assets() []money.Asset
	// Deposit derives where checkout number index of a wallet receives,
	// from the network's account key in hd's canonical spelling.
	// invalid_request when the key is not one of this network's.
	Deposit(accountKey string, index uint32) (Deposit, error)
	// ValidAddress returns invalid_request unless s is an address of this
	// network.
	ValidAddress(s string) error
	// ValidTxHash returns invalid_tx_hash unless s has the shape of a
	// transaction hash (or Solana signature) of this network.
	ValidTxHash(s string) error
	// PaymentURI is the URI a wallet scans to pay req: BIP21 on bitcoin,
	// EIP-681 (an ERC-20 transfer call for tokens) on ethereum and polygon,
	// Solana Pay with the reference key, and the TRC-20 form on tron.
	PaymentURI(req PaymentRequest) string
	// ExplorerURL is the page where a person can look the transaction up.
	ExplorerURL(txHash string) string
	// FeeEstimateUSD estimates, in US cents, the network fee a customer's
	// wallet pays on top to send coin a. upstream_unavailable when the
	// network cannot be asked now.
	FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error)
}

// Network is one blockchain as payd uses it (DESIGN §4): its Rules and
// the transfers into watched deposits. chain/devnet simulates every
// network in-process; a real node's network is its Node followed block
// by block (watch.Follower), which answers Transfers from what it stored.
type Network interface {
	Rules
	// Transfers reports every transfer, waiting or confirmed, into the
	// deposits: on Solana those carrying a deposit's reference, elsewhere
	// those to its address. A transfer reported before and missing now is
	// gone (replaced or double-spent before it confirmed). upstream_unavailable
	// when the network cannot be read now; the watcher then tries again.
	Transfers(ctx context.Context, deposits []Deposit) ([]Transfer, error)
}

// BlockRef names one block of a chain.
type BlockRef struct {
	Height int64
	Hash   string
}

// Block is one block of a followed chain and the transfers in it to
// watched addresses (their Confirmations are not set: the follower counts
// them from the tip).
type Block struct {
	BlockRef
	// Parent is the hash of the block before it.
	Parent    string
	Transfers []Transfer
}

// Watched is the set of deposit addresses a follower watches, by the
// Node's WatchKey of each (a Scanner's DepositKey).
type Watched interface {
	Has(key string) bool
}

// WatchedSet is a Watched set whose keys can be listed, for a Scanner,
// which asks the node about each watched account rather than reading
// every block.
type WatchedSet interface {
	Watched
	Keys() iter.Seq[string]
}

// Pending is what a node's mempool holds for the follower: the transfers
// waiting there to watched addresses, and which of the transactions the
// follower holds unconfirmed are still alive (waiting or mined).
type Pending struct {
	Transfers []Transfer
	// Alive has an entry, true, for each asked transaction the node still
	// knows; the others were replaced or double-spent.
	Alive map[string]bool
}

// Node is a real network's node as a follower reads it (DESIGN §4): the
// network's Rules, and its chain block by block. Every method may fail
// with upstream_unavailable while the node cannot be reached.
type Node interface {
	Rules
	// Chain says which chain the node follows, for logs and the status:
	// "regtest", "main", "chain 137".
	Chain() string
	// Tip is the node's best block.
	Tip(ctx context.Context) (BlockRef, error)
	// BlockAt returns the block at height on the node's best chain with
	// its transfers to the addresses in w. not_found when the node has no
	// block there yet although its Tip is at or above height (a provider's
	// backend behind the one that answered Tip): the follower reads it
	// again at its next run rather than fail.
	BlockAt(ctx context.Context, height int64, w Watched) (Block, error)
	// Pending reads the node's mempool: the waiting transfers to the
	// addresses in w (none on a node whose mempool payd does not read),
	// and which of the transactions unconfirmed are still alive: waiting,
	// or mined in a block above processed, the height the follower has
	// read up to. One mined at or below it is not: the follower took that
	// block's transfers (or the branch that replaced it) already.
	Pending(ctx context.Context, w Watched, unconfirmed []string, processed int64) (Pending, error)
	// WatchKey is address's key in a Watched set: the form the node
	// matches outputs by (a script, raw account bytes). false when address
	// is not one of this network's.
	WatchKey(address string) (string, bool)
}

// Scanner is a Node whose chain is not read block by block but asked,
// for each watched account, which transactions touched it: Solana, whose
// blocks come every 400 ms with thousands of transactions each, and whose
// payments a Solana Pay reference key tells apart. The follower calls Scan
// once a run instead of reading blocks and the mempool; BlockAt gives only
// the block it starts from on a new database (docs/networks.md).
//
// A Scanner's Tip is its latest final block, one no reorg can take back
// (Solana's finalized slot), so the blocks Scan returns are never unwound.
type Scanner interface {
	Node
	// DepositKey is d's key in the Watched set Scan is given (on solana,
	// the wallet's address and the reference); false when d is not one of
	// this network's deposits.
	DepositKey(d Deposit) (string, bool)
	// Scan reads the transfers into the watched deposits since head, the
	// last block the follower stored. Those final in blocks after head up
	// to tip come back in blocks, ascending, each naming the one before as
	// its parent (the first, head), with a block at tip last (or at the
	// height the run got to, below tip, when a Scanner bounds the work of
	// one run: the next goes on from there); those seen
	// but not final yet in Pending.Transfers. Pending.Alive answers for the
	// unconfirmed transactions as Node.Pending does: still waiting, or
	// final in one of the returned blocks. not_found when the node listed
	// a transfer at or under tip that it does not return yet (a backend
	// behind the others): head must not pass it, and the follower asks
	// again at its next run as for BlockAt's not_found. An error whose
	// chain holds a NotYet() bool method answering true (a rate limit
	// being waited out), from Scan or Tip, is waited out the same way.
	Scan(ctx context.Context, head, tip BlockRef, w WatchedSet, unconfirmed []string) ([]Block, Pending, error)
	// FinalDepth is how many confirmations a transfer counts once its
	// block is final, one more for each height (a slot on solana) the tip
	// moved on since: 32 on solana, whose Tower BFT roots a block once 32
	// votes are stacked on it.
	FinalDepth() int
}

// DefaultConfirmations is how many confirmations each network needs
// before payd counts a transfer, unless the operator configures otherwise
// (docs/checkouts.md says why each).
var DefaultConfirmations = map[money.Network]int{
	money.Bitcoin:  2,
	money.Ethereum: 12,
	money.Polygon:  32,
	money.Solana:   32,
	money.Tron:     19,
}
