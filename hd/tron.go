package hd

import (
	"errors"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/money"
)

// tronPrefix is the first byte of every tron mainnet account (base58 "T…").
const tronPrefix = 0x41

// tronAddress is the base58check address of an uncompressed secp256k1
// public key: 0x41 followed by the same 20 bytes ethereum would use.
func tronAddress(uncompressed []byte) string {
	return base58.CheckEncode(evmAccount(uncompressed), tronPrefix)
}

// validTronAddress checks a base58check tron address: 25 bytes, prefix 0x41,
// double-SHA-256 checksum.
func validTronAddress(s string) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Tron, InputAddress, r, format, args...)
	}
	switch {
	case s == "":
		return bad(Malformed, "is empty")
	case strings.HasPrefix(s, "0x"):
		return bad(WrongKind, "is an ethereum-style hex address; tron addresses are base58 and start with T")
	case len(s) != 34:
		return bad(BadLength, "is %d characters; a tron address has 34", len(s))
	}
	payload, v, err := base58.CheckDecode(s)
	switch {
	case errors.Is(err, base58.ErrChecksum):
		return bad(BadChecksum, "has a bad checksum: a character is wrong")
	case err != nil:
		return bad(Malformed, "is not base58: it has characters outside the base58 alphabet")
	case v != tronPrefix:
		return bad(WrongKind, "has version byte 0x%02x; tron addresses start with 0x41 (T…)", v)
	case len(payload) != 20:
		return bad(BadLength, "decodes to %d bytes after the prefix; a tron address holds 20", len(payload))
	case base58.CheckEncode(payload, v) != s:
		return bad(Malformed, "is not canonical base58")
	}
	return nil
}
