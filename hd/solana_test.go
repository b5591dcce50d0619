package hd

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/money"
)

// abandonSolana is the Solana address m/44'/501'/0'/0' (account 0 of the
// Solana cookbook's BIP44 example) of the "abandon … about" mnemonic. It is
// repeated in many wallets' tests; TestSolanaAgainstBipUtils below checks
// it against bip_utils' published key for that path.
const abandonSolana = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"

// bipUtilsSeed is bip_utils' TEST_SEED: the BIP39 seed of "abandon … about"
// with an empty passphrase (tests/bip/bip44/test_bip44.py).
const bipUtilsSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

// bip_utils tests/bip/bip44/test_bip44.py, "Solana" (SLIP-0010 ed25519, all
// levels hardened): the keys at m/44'/501'/0' ("account") and
// m/44'/501'/0'/0' ("chain_ext"), serialised BIP32-style with the ed25519
// public key after a 0x00 byte, and the first address, m/44'/501'/0'/0'/0'.
var bipUtilsSolana = []struct {
	path       []uint32
	xpub, xprv string
}{
	{[]uint32{44, 501, 0},
		"xpub6BxGMZDzacMx38jcsWVxXtqgrU85CgRKN2NWXvaJhnCBPEUq5YcTLZreVRkm3uuhC3LiQk7WWp2ursTkxkMRfKnSvweLRtzdfbyUkCxTNgx",
		"xprv9xxux3h6kEoepef9mUxxAktxJSHaoDhTzoSujYAh9SfCWS9gY1JCnmYAeEdZ93ooDXdzAnq5D4nPPMHArDrm7CYVzw2X2WfZ8gwMg34X1dY"},
	{[]uint32{44, 501, 0, 0},
		"xpub6FQ5DsXbWT8Dp2HAaU6aD5fuY318tkgsGHW3oHDkm7msw4W2PYjQFMrEFpgAtFzNKFt9AmR7N4Yam9pgbK4hzF5XvsoGakWjnqg8X18Rtxr",
		"xprvA2QipMzhg5ZvbYChUSZZqwjAz1AeVHy1u4aSztp9CnEu4GAsr1R9hZXkQc8i6m2LZzuUmd8YzMgunJfRrmkfJhGYuxuGU9huHYLWiqz4b78"},
}

const bipUtilsSolanaAddr0 = "B9sVeu4rJU12oUrUtzjc6BSNuEXdfvurZkdcaTVkP2LY"

func TestSolanaAgainstBipUtils(t *testing.T) {
	t.Parallel()
	seed, _ := hex.DecodeString(bipUtilsSeed)
	for _, v := range bipUtilsSolana {
		node, err := slip10Derive(seed, hardened(v.path)...)
		if err != nil {
			t.Fatal(err)
		}
		pub := ed25519.NewKeyFromSeed(node.key[:])[ed25519.SeedSize:]
		xpub, xprv := base58.Decode(v.xpub), base58.Decode(v.xprv)
		if !bytes.Equal(xprv[13:45], node.chain[:]) || !bytes.Equal(xprv[46:78], node.key[:]) {
			t.Errorf("%v: chain code or private key differs from bip_utils' xprv", v.path)
		}
		if xpub[45] != 0x00 || !bytes.Equal(xpub[46:78], pub) {
			t.Errorf("%v: public key %x differs from bip_utils' xpub %x", v.path, pub, xpub[45:78])
		}
	}
	// The chain_ext key is the wallet key of m/44'/501'/0'/0'.
	if got := base58.Encode(base58.Decode(bipUtilsSolana[1].xpub)[46:78]); got != abandonSolana {
		t.Errorf("bip_utils' m/44'/501'/0'/0' key is %s; want %s", got, abandonSolana)
	}
	node, err := slip10Derive(seed, hardened([]uint32{44, 501, 0, 0, 0})...)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeSolana(ed25519.NewKeyFromSeed(node.key[:])[ed25519.SeedSize:]); got != bipUtilsSolanaAddr0 {
		t.Errorf("m/44'/501'/0'/0'/0' = %s; want %s", got, bipUtilsSolanaAddr0)
	}
}

func TestSolanaAccountKey(t *testing.T) {
	t.Parallel()
	k := mustParse(t, money.Solana, abandonSolana)
	if k.String() != abandonSolana || k.Network() != money.Solana || k.Testnet() {
		t.Errorf("key = %q %q %v", k.String(), k.Network(), k.Testnet())
	}
	for _, i := range []uint32{0, 1, 1<<31 - 1} {
		if got, err := k.Address(i); err != nil || got != abandonSolana {
			t.Errorf("Address(%d) = %q, %v; want the wallet key for every index", i, got, err)
		}
	}
}

func TestParseSolanaKeyRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key string
		want      Reason
	}{
		{"empty", "", Malformed},
		{"ethereum address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", Malformed},
		{"tron address (25 bytes)", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", BadLength},
		{"not base58", abandonSolana[:43] + "0", Malformed},
		{"too long", abandonSolana + "1", BadLength},
		{"off the curve", encodeSolana(offCurve(t)), NotOnCurve},
		{"xpub", ethXpub, BadLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAccountKey(money.Solana, tt.key)
			if got := ReasonOf(err); got != tt.want {
				t.Fatalf("ParseAccountKey() error = %v; want Reason %q", err, tt.want)
			}
			if e := err.(*Error); e.Input != InputAccountKey {
				t.Errorf("Input = %q; want %q", e.Input, InputAccountKey)
			}
		})
	}
}

// onCurve agrees with an independent test, Euler's criterion by Jacobi
// symbol, on every y below 400 with both signs, and accepts real keys.
func TestOnCurve(t *testing.T) {
	t.Parallel()
	p, _ := new(big.Int).SetString(curveP, 10)
	d, _ := new(big.Int).SetString(curveD, 10)
	var on, off int
	for y := int64(0); y < 400; y++ {
		yy := big.NewInt(y * y)
		u := new(big.Int).Sub(yy, big.NewInt(1))
		v := new(big.Int).Add(new(big.Int).Mul(d, yy), big.NewInt(1))
		x2 := new(big.Int).Mod(new(big.Int).Mul(u, new(big.Int).ModInverse(v, p)), p)
		square := big.Jacobi(x2, p) >= 0
		for _, sign := range []byte{0, 0x80} {
			enc := make([]byte, 32)
			big.NewInt(y).FillBytes(enc)
			slices.Reverse(enc)
			enc[31] |= sign
			want := square && !(x2.Sign() == 0 && sign != 0)
			if got := onCurve(enc); got != want {
				t.Errorf("onCurve(y=%d, sign=%x) = %v; want %v", y, sign, got, want)
			}
			if want {
				on++
			} else {
				off++
			}
		}
	}
	if on == 0 || off == 0 {
		t.Errorf("the sample has %d points on and %d off the curve; want both", on, off)
	}
	pEnc := make([]byte, 32)
	p.FillBytes(pEnc)
	slices.Reverse(pEnc)
	if onCurve(pEnc) {
		t.Error("onCurve accepts y = p, a non-canonical encoding")
	}
	for i := range 64 {
		seed := sha256.Sum256([]byte{byte(i)})
		if pub := ed25519.NewKeyFromSeed(seed[:])[32:]; !onCurve(pub) {
			t.Errorf("onCurve refuses the public key %x", pub)
		}
	}
}

// RFC 8032 section 7.1, TEST 1: this secret key (seed) has this public key.
func TestNewReference(t *testing.T) {
	t.Parallel()
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	pub, _ := hex.DecodeString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	got, err := NewReference(bytes.NewReader(seed))
	if err != nil || got != base58.Encode(pub) {
		t.Errorf("NewReference(RFC 8032 TEST 1 seed) = %q, %v; want %q", got, err, base58.Encode(pub))
	}
	if err := ValidAddress(money.Solana, got); err != nil {
		t.Errorf("the reference does not validate as a solana address: %v", err)
	}
	other, _ := NewReference(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if other == got {
		t.Error("two seeds gave one reference")
	}
	if _, err := NewReference(strings.NewReader("short")); err == nil || ReasonOf(err) != "" {
		t.Errorf("NewReference(short reader) error = %v; want a plain I/O error", err)
	}
}

func hardened(path []uint32) []uint32 {
	out := make([]uint32, len(path))
	for i, p := range path {
		out[i] = hardenedStart + p
	}
	return out
}

// offCurve returns the encoding of the smallest y whose x² is not a square.
func offCurve(t *testing.T) []byte {
	t.Helper()
	for y := int64(2); y < 100; y++ {
		enc := make([]byte, 32)
		big.NewInt(y).FillBytes(enc)
		slices.Reverse(enc)
		if !onCurve(enc) {
			return enc
		}
	}
	t.Fatal("no off-curve y below 100")
	return nil
}

// TestOnCurveExported: a wallet key is on the curve, an associated token
// account (a program-derived address) is not, and anything not 32 bytes
// is not a point.
func TestOnCurveExported(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"3h1zGmCwsRJnVk5BuRNMLsPaQu1y2aqXqXDWYCgrp5UG", true},
		{"3uetDDizgTtadDHZzyy9BqxrjQcozMEkxzbKhfZF4tG3", false}, // its USDC associated token account
	} {
		b, ok := decodeBase58(c.addr, 32)
		if !ok || OnCurve(b) != c.want {
			t.Errorf("OnCurve(%s) = %v, want %v", c.addr, OnCurve(b), c.want)
		}
	}
	if OnCurve(make([]byte, 31)) {
		t.Error("31 bytes are on the curve")
	}
}
