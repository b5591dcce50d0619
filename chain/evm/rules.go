package evm

import (
	"encoding/hex"
	"net/url"

	"payd"
	"payd/chain"
	"payd/hd"
	"payd/money"
)

// Deposit derives the address of checkout number index from a wallet's
// account key (hd's canonical spelling): the EIP-55 address of
// m/44'/60'/0'/0/index, the same on ethereum and polygon. invalid_request
// (field account_key, or index for a hardened index) when hd refuses.
func (n *Node) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	return chain.Deposit(n.keys, n.network, accountKey, index)
}

// ValidAddress returns invalid_request (field address) unless s is 0x and
// 40 hex digits, EIP-55 checksummed when its case is mixed.
func (n *Node) ValidAddress(s string) error {
	return chain.ValidAddress(n.network, s)
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s is 0x and
// 64 hex digits.
func (n *Node) ValidTxHash(s string) error {
	return chain.ValidTxHash(n.network, s)
}

// PaymentURI is the EIP-681 request for req on the node's chain, with the
// node's chain id and token contracts, so that on a test or development
// chain a wallet is asked to pay there and not on mainnet. "" when the
// coin is not one of Assets.
func (n *Node) PaymentURI(req payd.PaymentRequest) string {
	a := req.Amount.Asset
	if !n.takes(a) {
		return ""
	}
	contract, _ := n.TokenContract(a)
	return chain.EIP681(n.chainID, contract, req)
}

// ExplorerURL is the explorer's page of the transaction (BASE/tx/HASH), or
// "" when no explorer is known for the node's chain.
func (n *Node) ExplorerURL(txHash string) string {
	if n.explorer == "" {
		return ""
	}
	return n.explorer + "/tx/" + url.PathEscape(txHash)
}

// WatchKey is the 20 raw bytes of the account address names, as a string:
// the form BlockAt matches transaction recipients and the recipient topic
// of Transfer logs by, whatever the case of address. false when address is
// not an address (a mixed-case one must pass its EIP-55 checksum).
func (n *Node) WatchKey(address string) (string, bool) {
	if hd.ValidAddress(n.network, address) != nil {
		return "", false
	}
	acc, _ := parseAccount(address)
	return string(acc[:]), true
}

// parseAccount reads 0x and 40 hex digits of either case, without checking
// a checksum.
func parseAccount(s string) (account, bool) {
	var acc account
	if len(s) != 42 || s[:2] != "0x" {
		return acc, false
	}
	if _, err := hex.Decode(acc[:], []byte(s[2:])); err != nil {
		return acc, false
	}
	return acc, true
}

// addressOf is the EIP-55 spelling of an account, the one Deposit returns.
func addressOf(acc account) string {
	s, _ := hd.SampleAddress(money.Ethereum, acc[:]) // 20 bytes: never refused
	return s
}
