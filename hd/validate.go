package hd

import (
	"crypto/ed25519"
	"encoding/hex"
	"strings"

	"payd/money"
)

// ValidAddress reports, as an *Error, why s is not an address on network n's
// main chain, or returns nil:
//
//   - bitcoin: bech32 segwit v0 (bc1q…, P2WPKH or P2WSH) or bech32m v1
//     taproot (bc1p…), or legacy base58check P2PKH (1…) or P2SH (3…);
//     testnet addresses are refused with Reason WrongNet;
//   - ethereum and polygon: 0x and 40 hex digits, EIP-55 checksum enforced
//     when the case is mixed;
//   - tron: base58check of 25 bytes with prefix 0x41 (T…);
//   - solana: base58 of 32 bytes.
//
// Later segwit versions, valid in BIP350 but not yet defined on chain, are
// refused (Reason Unsupported): money sent there could be taken by anyone.
func ValidAddress(n money.Network, s string) error { return validAddress(n, s, false) }

// ValidTestnetAddress is ValidAddress for a wallet on bitcoin's test
// networks: tb1…/bcrt1… segwit, m…/n… P2PKH and 2… P2SH, with mainnet
// addresses refused. The other networks use one address format on every
// chain, so for them it is the same as ValidAddress.
func ValidTestnetAddress(n money.Network, s string) error { return validAddress(n, s, true) }

func validAddress(n money.Network, s string, testnet bool) error {
	switch n {
	case money.Bitcoin:
		return validBitcoinAddress(s, testnet)
	case money.Ethereum, money.Polygon:
		return validEVMAddress(n, s)
	case money.Tron:
		return validTronAddress(s)
	case money.Solana:
		return validSolanaAddress(s)
	}
	return refuse(n, InputAddress, Unsupported, "network %q is not one payd serves", string(n))
}

// ValidTxHash reports, as an *Error, why s is not a transaction hash on
// network n as explorers and nodes print it, or returns nil: 64 hex digits
// for bitcoin and tron, 0x and 64 hex digits for ethereum and polygon, and
// base58 of a 64-byte signature for solana. Hex of either case is accepted;
// callers comparing hashes should lower-case them first.
func ValidTxHash(n money.Network, s string) error {
	switch n {
	case money.Bitcoin, money.Tron:
		if strings.HasPrefix(s, "0x") {
			return refuse(n, InputTxHash, Malformed, "starts with 0x; a %s transaction id is 64 hex digits without it", n)
		}
		return checkHex32(n, s)
	case money.Ethereum, money.Polygon:
		if !strings.HasPrefix(s, "0x") {
			return refuse(n, InputTxHash, Malformed, "must start with 0x")
		}
		return checkHex32(n, s[2:])
	case money.Solana:
		return validSolanaSignature(s)
	}
	return refuse(n, InputTxHash, Unsupported, "network %q is not one payd serves", string(n))
}

// checkHex32 checks that s is 64 hex digits: a 32-byte hash.
func checkHex32(n money.Network, s string) error {
	if len(s) != 64 {
		return refuse(n, InputTxHash, BadLength, "has %d hex digits; a transaction hash has 64", len(s))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return refuse(n, InputTxHash, Malformed, "has a character that is not a hex digit")
	}
	return nil
}

// validSolanaSignature checks that s is base58 of a 64-byte ed25519
// signature, which is how Solana names a transaction.
func validSolanaSignature(s string) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Solana, InputTxHash, r, format, args...)
	}
	switch {
	case s == "":
		return bad(Malformed, "is empty")
	case len(s) > maxSolanaSig:
		return bad(BadLength, "is %d characters; a solana transaction signature has at most %d", len(s), maxSolanaSig)
	}
	if _, ok := decodeBase58(s, ed25519.SignatureSize); !ok {
		if strings.Trim(s, base58Alphabet) != "" {
			return bad(Malformed, "is not base58: it has characters outside the base58 alphabet")
		}
		return bad(BadLength, "does not decode to the 64 bytes of a solana transaction signature")
	}
	return nil
}

// base58Alphabet is the bitcoin base58 alphabet Solana uses too.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
