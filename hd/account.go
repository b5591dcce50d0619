package hd

import (
	"crypto/ed25519"
	"slices"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"payd/money"
)

// AccountKey is the public key of one account of a business's wallet on one
// network, the thing a business attaches (DESIGN 1.3). On bitcoin, ethereum,
// polygon and tron it is a BIP32 account extended public key, from which a
// fresh receive address is derived per checkout; on solana it is the
// wallet's one ed25519 public key, and checkouts are told apart by Solana Pay
// references instead (NewReference).
//
// The zero AccountKey is not usable; make one with ParseAccountKey or
// WalletFromMnemonic. An AccountKey is immutable and safe for concurrent use.
type AccountKey struct {
	network  money.Network
	testnet  bool
	ext      *hdkeychain.ExtendedKey // the account key (BIP32 networks)
	external *hdkeychain.ExtendedKey // its receive chain, account/0
	solana   ed25519.PublicKey
}

// ParseAccountKey parses and checks the account public key a business
// attaches for network n:
//
//   - bitcoin: the BIP84 account key m/84'/0'/0' as a zpub or an xpub
//     (a vpub or tpub for testnet), depth 3;
//   - ethereum and polygon: the BIP44 account xpub m/44'/60'/0' (polygon
//     uses the same key and addresses as ethereum);
//   - tron: the BIP44 account xpub m/44'/195'/0';
//   - solana: the wallet's ed25519 public key in base58 (32 bytes, a point
//     of the curve, so not a token account or other program address).
//
// Private keys, keys at another depth, other script types (ypub, multisig)
// and typos are refused with an *Error saying which and why. The coin type
// inside a BIP44 path is not recorded in an xpub, so an xpub of another coin
// cannot be told apart; the receive addresses shown to the business are the
// check.
func ParseAccountKey(n money.Network, s string) (AccountKey, error) {
	switch n {
	case money.Bitcoin, money.Ethereum, money.Polygon, money.Tron:
		return parseExtended(n, s)
	case money.Solana:
		return parseSolanaKey(s)
	}
	return AccountKey{}, refuse(n, InputAccountKey, Unsupported, "network %q is not one payd serves", string(n))
}

// Network is the network the key was parsed for.
func (k AccountKey) Network() money.Network { return k.network }

// Testnet reports whether the key belongs to bitcoin's test network (a vpub
// or tpub). Keys of the other networks are the same on their test networks
// and report false.
func (k AccountKey) Testnet() bool { return k.testnet }

// String returns the key in payd's canonical spelling: zpub (vpub on
// testnet) for bitcoin whether it was given as zpub or xpub, xpub for
// ethereum, polygon and tron, base58 for solana. Two spellings of one key
// give one String, so it can back a uniqueness check. The zero AccountKey
// gives "".
func (k AccountKey) String() string {
	switch {
	case k.ext != nil:
		return k.ext.String()
	case k.solana != nil:
		return encodeSolana(k.solana)
	}
	return ""
}

// Address returns the deposit address at index on the account's receive
// chain (change 0): BIP84 P2WPKH bech32 for bitcoin (bc1q…, tb1q… on
// testnet), an EIP-55 checksummed 0x address for ethereum and polygon, a
// base58check T… address for tron. On solana every index gives the wallet's
// one public key; a checkout is identified by its reference instead.
//
// index must be below 2^31: hardened indexes cannot be derived from a public
// key and are refused with Reason Hardened. In the rare case (about 2^-127)
// that BIP32 has no key at an index, Address returns an error that is not an
// *Error and the caller moves on to the next index.
func (k AccountKey) Address(index uint32) (string, error) {
	if index >= hardenedStart {
		return "", refuse(k.network, InputIndex, Hardened,
			"%d is a hardened index; deposit indexes must be below 2^31", index)
	}
	if k.network == money.Solana && k.solana != nil {
		return encodeSolana(k.solana), nil
	}
	if k.external == nil {
		return "", refuse(k.network, InputAccountKey, Malformed, "is empty: make account keys with ParseAccountKey")
	}
	pub, err := childPublicKey(k.external, index)
	if err != nil {
		return "", err
	}
	switch k.network {
	case money.Bitcoin:
		return bitcoinAddress(pub.SerializeCompressed(), k.testnet), nil
	case money.Ethereum, money.Polygon:
		return evmAddress(pub.SerializeUncompressed()), nil
	default: // tron: parseExtended admits no other network
		return tronAddress(pub.SerializeUncompressed()), nil
	}
}

// segwitHRPs are the bech32 prefixes BitcoinAddress encodes for: bitcoin's
// main chain (bc), its test networks testnet3, testnet4 and signet (tb),
// and regtest (bcrt).
var segwitHRPs = []string{"bc", "tb", "bcrt"}

// BitcoinAddress is Address for a bitcoin key, with the P2WPKH address
// encoded for the chain whose bech32 prefix is hrp (bc, tb or bcrt)
// rather than the chain the key's version bytes name. A node follows one
// chain, and the addresses it is asked to watch must be that chain's: a
// zpub attached in a regtest deployment gives bcrt1 addresses of the same
// keys. Whether a key of one chain may be used on another is the caller's
// rule, not this function's.
func (k AccountKey) BitcoinAddress(index uint32, hrp string) (string, error) {
	if k.network != money.Bitcoin || k.external == nil {
		return "", refuse(k.network, InputAccountKey, WrongKind, "is not a bitcoin account key")
	}
	if !slices.Contains(segwitHRPs, hrp) {
		return "", refuse(money.Bitcoin, InputAddress, Unsupported, "prefix %q is not a bitcoin chain's (bc, tb, bcrt)", hrp)
	}
	if index >= hardenedStart {
		return "", refuse(k.network, InputIndex, Hardened,
			"%d is a hardened index; deposit indexes must be below 2^31", index)
	}
	pub, err := childPublicKey(k.external, index)
	if err != nil {
		return "", err
	}
	return p2wpkhAddress(pub.SerializeCompressed(), hrp), nil
}
