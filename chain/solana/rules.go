package solana

import (
	"net/url"
	"strings"

	"payd"
	"payd/chain"
	"payd/hd"
)

// Deposit is where checkout number index of a wallet receives: the
// wallet's one address (its account key, the same at every index) with a
// fresh random Solana Pay reference, which the customer's wallet adds to
// the transfer as a read-only account and Scan finds it by.
// invalid_request (field account_key) when the key is not a solana wallet
// key.
func (n *Node) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	return chain.Deposit(n.keys, n.Name(), accountKey, index)
}

// ValidAddress returns invalid_request (field address) unless s is the
// base58 of 32 bytes.
func (n *Node) ValidAddress(s string) error {
	return chain.ValidAddress(n.Name(), s)
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s is the
// base58 of a 64-byte signature.
func (n *Node) ValidTxHash(s string) error { return chain.ValidTxHash(n.Name(), s) }

// PaymentURI is the Solana Pay transfer request for req with the node's
// cluster's mint, so that off mainnet a wallet is asked for the token the
// node watches. "" when the coin is not one of Assets.
func (n *Node) PaymentURI(req payd.PaymentRequest) string {
	if !n.takes(req.Amount.Asset) {
		return ""
	}
	mint, _ := n.Mint(req.Amount.Asset)
	return chain.SolanaPay(mint, req)
}

// ExplorerURL is the explorer's page of the transaction: the Solana
// Explorer's (with the cluster off mainnet), or BASE/tx/SIGNATURE of the
// configured explorer.
func (n *Node) ExplorerURL(txHash string) string {
	return n.explorer + "/tx/" + url.PathEscape(txHash) + n.suffix
}

// WatchKey is address itself when it is a solana address. The follower
// keys a Scanner's deposits by DepositKey; WatchKey serves the Node
// interface only.
func (n *Node) WatchKey(address string) (string, bool) {
	if hd.ValidAddress(n.Name(), address) != nil {
		return "", false
	}
	return address, true
}

// DepositKey is "OWNER/REFERENCE", the deposit's key in the set Scan is
// given: Scan reads the owners from it and matches transactions by the
// references. false when either is not a solana address.
func (n *Node) DepositKey(d payd.Deposit) (string, bool) {
	if hd.ValidAddress(n.Name(), d.Address) != nil || hd.ValidAddress(n.Name(), d.Reference) != nil {
		return "", false
	}
	return d.Address + "/" + d.Reference, true
}

// splitKey reads a DepositKey back.
func splitKey(k string) (owner, ref string, ok bool) {
	owner, ref, ok = strings.Cut(k, "/")
	return owner, ref, ok && owner != "" && ref != ""
}
