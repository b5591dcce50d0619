package hd

import (
	"errors"
	"strings"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"

	"payd/money"
)

// Base58 version bytes of legacy bitcoin addresses (Bitcoin Core chainparams).
const (
	p2pkhMain = 0x00 // 1…
	p2shMain  = 0x05 // 3…
	p2pkhTest = 0x6f // m… or n…
	p2shTest  = 0xc4 // 2…
)

// maxBech32 is BIP173's length limit for a segwit address.
const maxBech32 = 90

// bitcoinAddress encodes a compressed public key as a BIP84 pay-to-witness-
// public-key-hash address: bech32 (BIP173) of witness version 0 and the
// key's HASH160.
func bitcoinAddress(compressed []byte, testnet bool) string {
	hrp := "bc"
	if testnet {
		hrp = "tb"
	}
	return p2wpkhAddress(compressed, hrp)
}

// p2wpkhAddress is bitcoinAddress with the bech32 prefix of any chain.
func p2wpkhAddress(compressed []byte, hrp string) string {
	// Neither call can fail: the bit widths are fixed and every 5-bit group
	// is below 32.
	data, _ := bech32.ConvertBits(address.Hash160(compressed), 8, 5, true)
	s, _ := bech32.Encode(hrp, append([]byte{0}, data...))
	return s
}

// validBitcoinAddress checks a bitcoin address of either family: segwit
// (bech32 v0 P2WPKH/P2WSH, bech32m v1 P2TR; BIP173, BIP350) or legacy base58
// (P2PKH, P2SH). testnet selects tb1/bcrt1, m/n/2 over bc1, 1/3.
func validBitcoinAddress(s string, testnet bool) error {
	switch {
	case s == "":
		return refuse(money.Bitcoin, InputAddress, Malformed, "is empty")
	case len(s) > maxBech32:
		return refuse(money.Bitcoin, InputAddress, BadLength, "is %d characters; a bitcoin address has at most %d", len(s), maxBech32)
	}
	lower := strings.ToLower(s)
	for _, p := range []string{"bc1", "tb1", "bcrt1"} {
		if strings.HasPrefix(lower, p) {
			return validSegwit(s, testnet)
		}
	}
	return validLegacyBitcoin(s, testnet)
}

// validSegwit checks a bech32 or bech32m segwit address. payd accepts the
// witness programs in use: v0 of 20 bytes (P2WPKH) or 32 bytes (P2WSH) and
// v1 of 32 bytes (taproot). Later versions are valid per BIP350 but spendable
// by anyone until a soft fork defines them, so payd sends nothing there.
func validSegwit(s string, testnet bool) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Bitcoin, InputAddress, r, format, args...)
	}
	hrp, data, enc, err := bech32.DecodeGeneric(s)
	if err != nil {
		return bech32Refusal(err)
	}
	switch {
	case hrp != "bc" && hrp != "tb" && hrp != "bcrt":
		return bad(Malformed, "has an unknown prefix; bitcoin addresses start bc1 (tb1 on testnet)")
	case hrp == "bc" && testnet:
		return bad(WrongNet, "is a mainnet address (bc1…); a testnet address is needed")
	case hrp != "bc" && !testnet:
		return bad(WrongNet, "is a test-network address (%s1…); a mainnet address is needed", hrp)
	case len(data) == 0:
		return bad(Malformed, "has no witness version")
	case data[0] > 16:
		return bad(Malformed, "has an invalid witness version")
	}
	version := data[0]
	program, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return bad(Malformed, "has invalid padding in its data")
	}
	if len(program) < 2 || len(program) > 40 {
		return bad(BadLength, "has a witness program of %d bytes; BIP141 allows 2 to 40", len(program))
	}
	return checkWitness(version, len(program), enc)
}

// checkWitness applies BIP141 and BIP350 to a decoded witness version and
// program length, and payd's own rule that only v0 and v1 taproot are used.
func checkWitness(version byte, size int, enc bech32.Version) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Bitcoin, InputAddress, r, format, args...)
	}
	if version == 0 {
		switch {
		case enc != bech32.Version0:
			return bad(BadChecksum, "has a bech32m checksum; a version 0 address uses bech32 (BIP350)")
		case size != 20 && size != 32:
			return bad(BadLength, "has a version 0 program of %d bytes; it must be 20 or 32", size)
		}
		return nil
	}
	switch {
	case enc != bech32.VersionM:
		return bad(BadChecksum, "has a bech32 checksum; a version %d address uses bech32m (BIP350)", version)
	case version == 1 && size == 32:
		return nil
	case version == 1:
		return bad(Unsupported, "is a version 1 program of %d bytes, not a taproot output; payd does not send to it", size)
	}
	return bad(Unsupported, "uses witness version %d, which bitcoin does not define yet; funds sent there could be taken by anyone", version)
}

// bech32Refusal turns a bech32 decoding error into an *Error without
// repeating the input.
func bech32Refusal(err error) error {
	var (
		sum    bech32.ErrInvalidChecksum
		length bech32.ErrInvalidLength
		mixed  bech32.ErrMixedCase
	)
	switch {
	case errors.As(err, &sum):
		return refuse(money.Bitcoin, InputAddress, BadChecksum, "has a bad checksum: a character is wrong or missing")
	case errors.As(err, &length):
		return refuse(money.Bitcoin, InputAddress, BadLength, "has the wrong length for a segwit address")
	case errors.As(err, &mixed):
		return refuse(money.Bitcoin, InputAddress, Malformed, "mixes upper and lower case")
	}
	return refuse(money.Bitcoin, InputAddress, Malformed, "is not valid bech32: it has a character outside the bech32 alphabet or a misplaced separator")
}

// validLegacyBitcoin checks a base58check P2PKH or P2SH address.
func validLegacyBitcoin(s string, testnet bool) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Bitcoin, InputAddress, r, format, args...)
	}
	if strings.Trim(s, base58Alphabet) != "" {
		return bad(Malformed, "is neither a bech32 (bc1…) nor a base58 (1…, 3…) bitcoin address")
	}
	if len(s) > 40 { // 25 bytes are at most 35 base58 characters
		return bad(BadLength, "is %d characters; a legacy bitcoin address has at most 35", len(s))
	}
	payload, v, err := base58.CheckDecode(s)
	switch {
	case errors.Is(err, base58.ErrChecksum):
		return bad(BadChecksum, "has a bad checksum: a character is wrong or missing")
	case err != nil:
		return bad(Malformed, "is neither a bech32 (bc1…) nor a base58 (1…, 3…) bitcoin address")
	case len(payload) != 20:
		return bad(BadLength, "decodes to a %d-byte hash; a bitcoin address holds 20", len(payload))
	case base58.CheckEncode(payload, v) != s:
		return bad(Malformed, "is not canonical base58")
	}
	switch v {
	case p2pkhMain, p2shMain:
		if testnet {
			return bad(WrongNet, "is a mainnet address; a testnet address is needed")
		}
		return nil
	case p2pkhTest, p2shTest:
		if !testnet {
			return bad(WrongNet, "is a testnet address; a mainnet address is needed")
		}
		return nil
	}
	return bad(WrongKind, "has version byte 0x%02x, which is not a bitcoin address (another coin's?)", v)
}
