package chain

import (
	"crypto/rand"
	"errors"

	"payd"
	"payd/hd"
	"payd/money"
)

// KeyError turns a refusal of package hd into invalid_request naming
// field, as every adapter answers a key, index or address it cannot use;
// other errors (no key at a BIP32 index, about 2^-127) pass unchanged.
func KeyError(field string, err error) error {
	var e *hd.Error
	if errors.As(err, &e) {
		return payd.FieldError(field, "%s", e.Error())
	}
	return err
}

// ValidTxHash returns invalid_tx_hash (field tx_hash) unless s has the
// shape of a transaction hash (or Solana signature) of network n.
func ValidTxHash(n money.Network, s string) error {
	if err := hd.ValidTxHash(n, s); err != nil {
		return &payd.Error{Code: payd.ErrInvalidTxHash, Field: "tx_hash", Message: err.Error()}
	}
	return nil
}

// ValidAddress returns invalid_request (field address) unless s is an
// address of network n's main chain.
func ValidAddress(n money.Network, s string) error {
	return KeyError("address", hd.ValidAddress(n, s))
}

// Deposit derives where checkout number index of a wallet receives on
// network n, from the wallet's account key (hd's canonical spelling,
// parsed through keys): a fresh address of the key at index on bitcoin,
// ethereum, polygon and tron; on solana the wallet's one address (the
// key itself, the same at every index) with a fresh random Solana Pay
// reference, which the customer's wallet adds to the transfer as a
// read-only account. invalid_request (field account_key, or index for a
// hardened index) when hd refuses. The devnet and the real adapters both
// derive deposits here, so a wallet receives at the same addresses
// whichever backs the network.
func Deposit(keys *hd.KeyCache, n money.Network, accountKey string, index uint32) (payd.Deposit, error) {
	k, err := keys.Parse(n, accountKey)
	if err != nil {
		return payd.Deposit{}, KeyError("account_key", err)
	}
	addr, err := k.Address(index)
	if err != nil {
		return payd.Deposit{}, KeyError("index", err)
	}
	if n != money.Solana {
		return payd.Deposit{Address: addr}, nil
	}
	ref, err := hd.NewReference(rand.Reader)
	if err != nil {
		return payd.Deposit{}, err
	}
	return payd.Deposit{Address: addr, Reference: ref}, nil
}
