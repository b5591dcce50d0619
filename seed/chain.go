package seed

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"math/rand/v2"

	"payd/money"
)

// Addresses and transaction hashes in each network's real format, so that
// search, the dashboard and the explorer links look like production: a
// bech32 P2WPKH address (bc1q…) with a valid checksum on bitcoin, 0x and 40
// hex digits on the EVM networks, a base58 public key on Solana, a
// base58check T… address on Tron; 64 hex digits for bitcoin and Tron
// transaction ids, 0x and 64 hex digits on EVM, and a base58 64-byte
// signature (87 or 88 characters) on Solana. The bytes come from the seeded
// generator, so nothing here is a real key or transaction.

// address returns a fresh address on n.
func address(r *rand.Rand, n money.Network) string {
	switch n {
	case money.Bitcoin:
		return bech32Segwit("bc", 0, randomBytes(r, 20))
	case money.Solana:
		return base58(randomBytes(r, 32))
	case money.Tron:
		return base58Check(append([]byte{0x41}, randomBytes(r, 20)...))
	}
	return "0x" + hex.EncodeToString(randomBytes(r, 20))
}

// txHash returns a fresh transaction hash on n.
func txHash(r *rand.Rand, n money.Network) string {
	switch n {
	case money.Ethereum, money.Polygon:
		return "0x" + hex.EncodeToString(randomBytes(r, 32))
	case money.Solana:
		return base58(randomBytes(r, 64))
	}
	return hex.EncodeToString(randomBytes(r, 32))
}

// explorers are the public block explorers of each network, by the address
// of a transaction page without its hash.
var explorers = map[money.Network]string{
	money.Bitcoin:  "https://mempool.space/tx/",
	money.Ethereum: "https://etherscan.io/tx/",
	money.Polygon:  "https://polygonscan.com/tx/",
	money.Solana:   "https://solscan.io/tx/",
	money.Tron:     "https://tronscan.org/#/transaction/",
}

// explorerURL is where a person looks the transaction up.
func explorerURL(n money.Network, hash string) string { return explorers[n] + hash }

// randomBytes draws n bytes from r.
func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes b in Bitcoin's base58 alphabet, one '1' per leading zero
// byte, as Solana and Tron write keys and signatures.
func base58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	var out []byte
	base, mod := big.NewInt(58), new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for range zeros {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58Check appends the first four bytes of the double SHA-256 of
// payload and encodes the whole in base58 (Tron addresses).
func base58Check(payload []byte) string {
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	return base58(append(payload, second[:4]...))
}

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// bech32Segwit encodes a segwit address (BIP 173): hrp, "1", the witness
// version and the program in 5-bit groups, and the six-character checksum.
func bech32Segwit(hrp string, version byte, program []byte) string {
	data := append([]byte{version}, regroup(program)...)
	values := append(hrpExpand(hrp), data...)
	values = append(values, 0, 0, 0, 0, 0, 0)
	mod := bech32Polymod(values) ^ 1
	out := []byte(hrp + "1")
	for _, d := range data {
		out = append(out, bech32Charset[d])
	}
	for i := range 6 {
		out = append(out, bech32Charset[(mod>>uint(5*(5-i)))&31])
	}
	return string(out)
}

// regroup turns 8-bit bytes into 5-bit groups, padding the last one.
func regroup(b []byte) []byte {
	var out []byte
	acc, bits := 0, 0
	for _, v := range b {
		acc = acc<<8 | int(v)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, byte(acc>>bits&31))
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(5-bits)&31))
	}
	return out
}

// hrpExpand is the human-readable part as the checksum covers it.
func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// bech32Polymod is BIP 173's checksum function.
func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>uint(i))&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}
