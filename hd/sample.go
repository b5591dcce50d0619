package hd

import (
	"crypto/ed25519"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"

	"payd/money"
)

// accountSize is the size of a bitcoin P2WPKH key hash and of an EVM or
// tron account: 20 bytes.
const accountSize = 20

// SampleAddress writes payload as an address of network n's main chain, in
// the form ValidAddress accepts: payload is the 20-byte key hash of a
// P2WPKH output on bitcoin (bc1q…), the 20-byte account on ethereum and
// polygon (EIP-55 0x…) and tron (T…), and 32 bytes on solana. It is how
// simulated senders (chain/devnet) and tests get well-formed addresses
// from random bytes; nobody holds a key for them. A payload of the wrong
// size is refused with Reason BadLength.
func SampleAddress(n money.Network, payload []byte) (string, error) {
	size := accountSize
	if n == money.Solana {
		size = ed25519.PublicKeySize
	}
	if !n.Valid() {
		return "", refuse(n, InputAddress, Unsupported, "network %q is not one payd serves", string(n))
	}
	if len(payload) != size {
		return "", refuse(n, InputAddress, BadLength, "needs %d bytes, not %d", size, len(payload))
	}
	switch n {
	case money.Bitcoin:
		// Neither call can fail: 20 bytes regroup into 5-bit values below 32.
		data, _ := bech32.ConvertBits(payload, 8, 5, true)
		s, _ := bech32.Encode("bc", append([]byte{0}, data...))
		return s, nil
	case money.Ethereum, money.Polygon:
		return eip55(payload), nil
	case money.Tron:
		return base58.CheckEncode(payload, tronPrefix), nil
	}
	return encodeSolana(payload), nil
}
