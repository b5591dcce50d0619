package hd

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/money"
)

// Solana addresses and signatures are plain base58 (the bitcoin alphabet)
// of 32 and 64 bytes: at most 44 and 88 characters.
const (
	maxSolanaKey = 44
	maxSolanaSig = 88
)

// encodeSolana writes a public key the way Solana does: base58, no checksum.
func encodeSolana(pub []byte) string { return base58.Encode(pub) }

// decodeBase58 decodes s when it is canonical base58 of exactly size bytes,
// and reports whether it was.
func decodeBase58(s string, size int) ([]byte, bool) {
	b := base58.Decode(s)
	if len(b) != size || base58.Encode(b) != s {
		return nil, false
	}
	return b, true
}

// parseSolanaKey parses a wallet's public key: 32 bytes of base58 that
// decode to a point of the ed25519 curve. Solana Pay says the recipient
// "must be the base58-encoded public key of a native SOL account" and not a
// token account; token accounts and other program-derived addresses are off
// the curve by construction, so they are refused here.
func parseSolanaKey(s string) (AccountKey, error) {
	bad := func(r Reason, format string, args ...any) (AccountKey, error) {
		return AccountKey{}, refuse(money.Solana, InputAccountKey, r, format, args...)
	}
	if err := checkSolana32(s, InputAccountKey); err != nil {
		return AccountKey{}, err
	}
	pub, _ := decodeBase58(s, ed25519.PublicKeySize)
	if !onCurve(pub) {
		return bad(NotOnCurve, "is not an ed25519 public key (a token account or program address?); attach the wallet's own address")
	}
	return AccountKey{network: money.Solana, solana: ed25519.PublicKey(pub)}, nil
}

// validSolanaAddress checks that s is base58 of 32 bytes. Any 32 bytes are
// an account address on Solana, program-derived ones included.
func validSolanaAddress(s string) error { return checkSolana32(s, InputAddress) }

// checkSolana32 checks that s is canonical base58 of 32 bytes; input names s
// in the error.
func checkSolana32(s, input string) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(money.Solana, input, r, format, args...)
	}
	switch {
	case s == "":
		return bad(Malformed, "is empty")
	case len(s) > maxSolanaKey:
		return bad(BadLength, "is %d characters; a solana address has at most %d", len(s), maxSolanaKey)
	}
	if _, ok := decodeBase58(s, ed25519.PublicKeySize); !ok {
		if strings.Trim(s, base58Alphabet) != "" {
			return bad(Malformed, "is not base58: it has characters outside the base58 alphabet")
		}
		return bad(BadLength, "does not decode to the 32 bytes of a solana address")
	}
	return nil
}

// NewReference returns a fresh Solana Pay reference for one checkout: the
// base58 public key of a new ed25519 key pair whose 32-byte seed is read
// from r. The wallet adds it to the transfer as a read-only account, which
// is how the payment is found on chain (Solana Pay spec, "reference"). The
// private half is discarded; nothing signs with it. Pass crypto/rand.Reader
// in production; tests pass a fixed reader.
func NewReference(r io.Reader) (string, error) {
	var seed [ed25519.SeedSize]byte
	if _, err := io.ReadFull(r, seed[:]); err != nil {
		return "", fmt.Errorf("hd.NewReference: reading entropy: %w", err)
	}
	priv := ed25519.NewKeyFromSeed(seed[:])
	ref := encodeSolana(priv[ed25519.SeedSize:])
	clear(seed[:])
	clear(priv)
	return ref, nil
}

// The ed25519 curve of RFC 8032: -x² + y² = 1 + d·x²·y² over GF(p),
// p = 2^255 - 19, d = -121665/121666.
const (
	curveP = "57896044618658097711785492504343953926634992332820282019728792003956564819949"
	curveD = "37095705934669439343138083508754565189542113879843219016388785533085940283555"
)

// OnCurve reports whether pub, 32 bytes, encodes a point of the ed25519
// curve: true for a wallet's public key, false for a program-derived
// address, which Solana's find_program_address picks off the curve so
// that no private key can sign for it (chain/solana derives associated
// token accounts with it).
func OnCurve(pub []byte) bool { return len(pub) == ed25519.PublicKeySize && onCurve(pub) }

// onCurve reports whether 32 bytes are the encoding of a point of ed25519
// (RFC 8032 section 5.1.3, decoding): y below p, and x² = (y²-1)/(d·y²+1)
// a square, with x = 0 only for a clear sign bit.
func onCurve(pub []byte) bool {
	p, _ := new(big.Int).SetString(curveP, 10)
	d, _ := new(big.Int).SetString(curveD, 10)
	le := make([]byte, 32)
	for i, b := range pub {
		le[31-i] = b
	}
	sign := le[0] >> 7
	le[0] &= 0x7f
	y := new(big.Int).SetBytes(le)
	if y.Cmp(p) >= 0 {
		return false
	}
	y2 := new(big.Int).Mul(y, y)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	v := new(big.Int).Mul(d, y2)
	v.Add(v, big.NewInt(1)).Mod(v, p)
	if v.Sign() == 0 {
		return false
	}
	x2 := u.Mul(u, new(big.Int).ModInverse(v, p)).Mod(u, p)
	if x2.Sign() == 0 {
		return sign == 0
	}
	return new(big.Int).ModSqrt(x2, p) != nil
}
