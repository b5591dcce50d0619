package tron

import (
	"encoding/hex"
	"net/url"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd"
	"payd/chain"
	"payd/hd"
	"payd/money"
)

// prefix is the first byte of every tron account address (base58 "T…").
const prefix = 0x41

// Deposit derives the address of checkout number index from a wallet's
// account key (hd's canonical spelling): the base58 address of
// m/44'/195'/0'/0/index. invalid_request (field account_key, or index for
// a hardened index) when hd refuses.
func (n *Node) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	return chain.Deposit(n.keys, money.Tron, accountKey, index)
}

// ValidAddress returns invalid_request (field address) unless s is a
// base58check tron address (T…).
func (n *Node) ValidAddress(s string) error {
	return chain.ValidAddress(money.Tron, s)
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s is 64 hex
// digits, as tron writes a transaction id.
func (n *Node) ValidTxHash(s string) error { return chain.ValidTxHash(money.Tron, s) }

// PaymentURI is the TRC-20 request for req with the node's token contract,
// so that on nile or shasta a wallet is asked for the token there. "" when
// the coin is not one of Assets.
func (n *Node) PaymentURI(req payd.PaymentRequest) string {
	contract, ok := n.TokenContract(req.Amount.Asset)
	if !ok {
		return ""
	}
	return chain.TRC20(contract, req)
}

// ExplorerURL is tronscan's page of the transaction
// (BASE/#/transaction/HASH), or "" when no explorer is known.
func (n *Node) ExplorerURL(txHash string) string {
	if n.explorer == "" {
		return ""
	}
	return n.explorer + "/#/transaction/" + url.PathEscape(txHash)
}

// WatchKey is the 20 account bytes of the base58 address, as a string:
// the form BlockAt matches the recipient topic of Transfer logs by.
// false when address is not a tron address.
func (n *Node) WatchKey(address string) (string, bool) {
	if hd.ValidAddress(money.Tron, address) != nil {
		return "", false
	}
	acc, ok := parseAccount(address)
	return string(acc[:]), ok
}

// parseAccount reads a tron address as base58check (T…) or as hex with
// its 41 prefix (42 digits), as contracts are written in either.
func parseAccount(s string) (account, bool) {
	var acc account
	if len(s) == 42 {
		b, err := hex.DecodeString(s)
		if err != nil || b[0] != prefix {
			return acc, false
		}
		copy(acc[:], b[1:])
		return acc, true
	}
	if hd.ValidAddress(money.Tron, s) != nil {
		return acc, false
	}
	payload, _, err := base58.CheckDecode(s)
	if err != nil || len(payload) != len(acc) {
		return acc, false
	}
	copy(acc[:], payload)
	return acc, true
}

// addressOf is the base58 spelling of an account, the one Deposit returns.
func addressOf(acc account) string {
	s, _ := hd.SampleAddress(money.Tron, acc[:]) // 20 bytes: never refused
	return s
}
