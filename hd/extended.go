package hd

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"payd/money"
)

// keyKind is the address family a serialisation's version bytes announce.
type keyKind uint8

const (
	kindPlain    keyKind = iota // xpub/tpub: BIP32 as written, BIP44 for payd
	kindNested                  // ypub/upub: BIP49, P2WPKH nested in P2SH
	kindNative                  // zpub/vpub: BIP84, native P2WPKH
	kindMultisig                // Ypub/Zpub/Upub/Vpub: multisig script wallets
)

// version is what four version bytes of a BIP32 serialisation mean.
type version struct {
	name    string // the base58 prefix people see: "zpub"
	private bool
	testnet bool
	kind    keyKind
}

// versions is SLIP-0132's registry of bitcoin version bytes
// (github.com/satoshilabs/slips/blob/master/slip-0132.md).
var versions = map[[4]byte]version{
	{0x04, 0x88, 0xb2, 0x1e}: {"xpub", false, false, kindPlain},
	{0x04, 0x88, 0xad, 0xe4}: {"xprv", true, false, kindPlain},
	{0x04, 0x9d, 0x7c, 0xb2}: {"ypub", false, false, kindNested},
	{0x04, 0x9d, 0x78, 0x78}: {"yprv", true, false, kindNested},
	{0x04, 0xb2, 0x47, 0x46}: {"zpub", false, false, kindNative},
	{0x04, 0xb2, 0x43, 0x0c}: {"zprv", true, false, kindNative},
	{0x02, 0x95, 0xb4, 0x3f}: {"Ypub", false, false, kindMultisig},
	{0x02, 0x95, 0xb0, 0x05}: {"Yprv", true, false, kindMultisig},
	{0x02, 0xaa, 0x7e, 0xd3}: {"Zpub", false, false, kindMultisig},
	{0x02, 0xaa, 0x7a, 0x99}: {"Zprv", true, false, kindMultisig},
	{0x04, 0x35, 0x87, 0xcf}: {"tpub", false, true, kindPlain},
	{0x04, 0x35, 0x83, 0x94}: {"tprv", true, true, kindPlain},
	{0x04, 0x4a, 0x52, 0x62}: {"upub", false, true, kindNested},
	{0x04, 0x4a, 0x4e, 0x28}: {"uprv", true, true, kindNested},
	{0x02, 0x42, 0x89, 0xef}: {"Upub", false, true, kindMultisig},
	{0x02, 0x42, 0x85, 0xb5}: {"Uprv", true, true, kindMultisig},
	{0x04, 0x5f, 0x1c, 0xf6}: {"vpub", false, true, kindNative},
	{0x04, 0x5f, 0x18, 0xbc}: {"vprv", true, true, kindNative},
	{0x02, 0x57, 0x54, 0x83}: {"Vpub", false, true, kindMultisig},
	{0x02, 0x57, 0x50, 0x48}: {"Vprv", true, true, kindMultisig},
}

// The version bytes payd writes keys back in (String): one canonical
// spelling per network, so two spellings of one key compare equal.
var (
	versionXpub = [4]byte{0x04, 0x88, 0xb2, 0x1e}
	versionZpub = [4]byte{0x04, 0xb2, 0x47, 0x46}
	versionVpub = [4]byte{0x04, 0x5f, 0x1c, 0xf6}
)

const (
	serializedLen = 78  // BIP32: 4+1+4+4+32+33
	maxExtended   = 120 // base58 of 82 bytes is at most 112 characters
	hardenedStart = hdkeychain.HardenedKeyStart
)

// extended is a parsed BIP32 serialisation, before the network's rules apply.
type extended struct {
	version  version
	depth    uint8
	parentFP []byte
	child    uint32
	chain    []byte
	key      []byte // 33-byte compressed public key
}

// decodeExtended checks the serialisation of BIP32 ("Serialization format")
// and returns its fields. It refuses private keys whatever their version.
func decodeExtended(n money.Network, s string) (extended, error) {
	if s == "" {
		return extended{}, refuse(n, InputAccountKey, Malformed, "is empty")
	}
	if len(s) > maxExtended {
		return extended{}, refuse(n, InputAccountKey, BadLength, "is %d characters; an extended key has about 111", len(s))
	}
	raw := base58.Decode(s)
	if len(raw) == 0 {
		return extended{}, refuse(n, InputAccountKey, Malformed, "is not base58: it has characters outside the base58 alphabet")
	}
	if len(raw) != serializedLen+4 {
		return extended{}, refuse(n, InputAccountKey, BadLength, "decodes to %d bytes; an extended key is %d", len(raw), serializedLen+4)
	}
	payload, sum := raw[:serializedLen], raw[serializedLen:]
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	if !bytes.Equal(sum, second[:4]) {
		return extended{}, refuse(n, InputAccountKey, BadChecksum, "has a bad checksum: a character is wrong or missing")
	}
	v, ok := versions[[4]byte(payload[:4])]
	if !ok {
		return extended{}, refuse(n, InputAccountKey, WrongKind, "has version bytes %x, which are not those of a BIP32 public key payd knows", payload[:4])
	}
	x := extended{version: v, depth: payload[4], parentFP: payload[5:9],
		child: binary.BigEndian.Uint32(payload[9:13]), chain: payload[13:45], key: payload[45:78]}
	switch {
	case v.private:
		return extended{}, refuse(n, InputAccountKey, PrivateKey,
			"is an extended private key (%s); payd takes only the public key and never needs a private one", v.name)
	case x.key[0] == 0x00:
		return extended{}, refuse(n, InputAccountKey, PrivateKey,
			"holds private key data behind public version bytes (%s); payd takes only public keys", v.name)
	}
	if _, err := btcec.ParsePubKey(x.key); err != nil {
		return extended{}, refuse(n, InputAccountKey, NotOnCurve, "does not hold a valid secp256k1 public key")
	}
	return x, nil
}

// parseExtended parses an account extended public key for bitcoin,
// ethereum, polygon or tron and derives its external (receive) chain.
func parseExtended(n money.Network, s string) (AccountKey, error) {
	x, err := decodeExtended(n, s)
	if err != nil {
		return AccountKey{}, err
	}
	canon, err := checkVersion(n, x.version)
	if err != nil {
		return AccountKey{}, err
	}
	if x.depth != 3 {
		return AccountKey{}, refuse(n, InputAccountKey, BadDepth,
			"is at depth %d; payd needs the account key at depth 3 (%s)", x.depth, accountPath(n))
	}
	if x.child < hardenedStart {
		return AccountKey{}, refuse(n, InputAccountKey, BadDepth,
			"is not an account key: its index %d is not hardened (%s)", x.child, accountPath(n))
	}
	ext := hdkeychain.NewExtendedKey(canon[:], x.key, x.chain, x.parentFP, x.depth, x.child, false)
	external, err := ext.Derive(0)
	if err != nil { // probability about 2^-127 (BIP32 "invalid child")
		return AccountKey{}, fmt.Errorf("hd.ParseAccountKey(%s): deriving the receive chain: %w", n, err)
	}
	return AccountKey{network: n, testnet: x.version.testnet, ext: ext, external: external}, nil
}

// checkVersion applies a network's rules to a public key's version bytes and
// returns the version payd writes the key back in.
func checkVersion(n money.Network, v version) ([4]byte, error) {
	if n == money.Bitcoin {
		switch v.kind {
		case kindNative, kindPlain:
			if v.testnet {
				return versionVpub, nil
			}
			return versionZpub, nil
		case kindNested:
			return [4]byte{}, refuse(n, InputAccountKey, WrongKind,
				"is a BIP49 nested-segwit key (%s); attach the BIP84 native-segwit account key (zpub, m/84'/0'/0')", v.name)
		default:
			return [4]byte{}, refuse(n, InputAccountKey, WrongKind,
				"is a multisig key (%s); payd takes a single-signature BIP84 account key (zpub)", v.name)
		}
	}
	switch {
	case v.kind != kindPlain:
		return [4]byte{}, refuse(n, InputAccountKey, WrongKind,
			"is a bitcoin segwit key (%s); %s takes the BIP44 account xpub (%s)", v.name, n, accountPath(n))
	case v.testnet:
		return [4]byte{}, refuse(n, InputAccountKey, WrongNet,
			"is a bitcoin testnet key (%s); %s takes the BIP44 account xpub (%s)", v.name, n, accountPath(n))
	}
	return versionXpub, nil
}

// accountPath is the derivation path of the account key a network takes.
func accountPath(n money.Network) string {
	switch n {
	case money.Bitcoin:
		return "m/84'/0'/0'"
	case money.Ethereum, money.Polygon:
		return "m/44'/60'/0'"
	case money.Tron:
		return "m/44'/195'/0'"
	case money.Solana:
		return "m/44'/501'/0'/0'"
	}
	return ""
}

// childPublicKey derives the non-hardened child index of a public extended
// key and returns its secp256k1 public key.
func childPublicKey(parent *hdkeychain.ExtendedKey, index uint32) (*btcec.PublicKey, error) {
	child, err := parent.Derive(index)
	if err != nil { // probability about 2^-127 (BIP32 "invalid child")
		return nil, fmt.Errorf("hd: deriving index %d: %w", index, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return nil, fmt.Errorf("hd: child %d public key: %w", index, err)
	}
	return pub, nil
}
