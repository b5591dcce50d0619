package chain

import (
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
