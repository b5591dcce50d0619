package payd

import (
	"context"

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

// Network is one blockchain as payd uses it (DESIGN §4). chain/devnet
// simulates every network in-process; adapters for real nodes implement
// the same methods.
type Network interface {
	// Name is the network the adapter serves.
	Name() money.Network
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
	// Transfers reports every transfer, waiting or confirmed, into the
	// deposits: on Solana those carrying a deposit's reference, elsewhere
	// those to its address. upstream_unavailable when the network cannot be
	// read now; the watcher then tries again.
	Transfers(ctx context.Context, deposits []Deposit) ([]Transfer, error)
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
