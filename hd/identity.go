package hd

import (
	"crypto/sha256"
	"encoding/hex"

	"payd/money"
)

// identityDomain starts every hashed identity, so that an identity can
// never be mistaken for a hash of anything else payd stores.
const identityDomain = "payd account key identity v1\x00"

// Identity names the key by what derives its addresses, so that one key
// serialised two ways is seen as one (docs/wallet-keys.md, "One key, one
// business"): the hex SHA-256 of the public key and chain code of a BIP32
// key, or of the ed25519 public key on solana. The version bytes, depth,
// parent fingerprint and child number of a serialisation change no
// address, so they are left out; so is bitcoin's test-network flag (the
// same key material on either network is one wallet's). Two keys are
// compared by Identity within one network. The zero AccountKey gives "".
func (k AccountKey) Identity() string {
	h := sha256.New()
	h.Write([]byte(identityDomain))
	switch {
	case k.ext != nil:
		pub, err := k.ext.ECPubKey()
		if err != nil { // parseExtended checked the point: unreachable
			return ""
		}
		h.Write(pub.SerializeCompressed())
		h.Write(k.ext.ChainCode())
	case k.solana != nil:
		h.Write(k.solana)
	default:
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KeyIdentity parses the account key s of network n (see ParseAccountKey)
// and returns its Identity: for keys stored before identities were, which
// the store's migration fills in.
func KeyIdentity(n money.Network, s string) (string, error) {
	k, err := ParseAccountKey(n, s)
	if err != nil {
		return "", err
	}
	return k.Identity(), nil
}
