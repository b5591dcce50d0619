package solana

import (
	"crypto/sha256"
	"errors"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/hd"
)

// The programs a token payment goes through.
const (
	// tokenProgram is the SPL Token program, which owns USDC's and USDT's
	// mints and token accounts.
	tokenProgram = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	// ataProgram is the Associated Token Account program: a wallet's
	// token account of a mint is at one address derived from both, where
	// Solana Pay wallets send.
	ataProgram = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
)

// pdaMarker ends the hash input of a program-derived address.
const pdaMarker = "ProgramDerivedAddress"

// errNoPDA is the (about 2^-256) case of no bump seed giving an address
// off the curve.
var errNoPDA = errors.New("solana: no program address for these seeds")

// findProgramAddress is Solana's find_program_address: the first address
// SHA-256(seeds || bump || program || "ProgramDerivedAddress") off the
// ed25519 curve, trying bump 255 down to 0, so that no private key can
// sign for it.
func findProgramAddress(seeds [][]byte, program []byte) ([]byte, error) {
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program)
		h.Write([]byte(pdaMarker))
		addr := h.Sum(nil)
		if !hd.OnCurve(addr) {
			return addr, nil
		}
	}
	return nil, errNoPDA
}

// AssociatedTokenAccount is the address of owner's associated token
// account of mint (all three base58): the PDA of [owner, token program,
// mint] under the associated token account program.
func AssociatedTokenAccount(owner, mint string) (string, error) {
	o, m := base58.Decode(owner), base58.Decode(mint)
	if len(o) != 32 || len(m) != 32 {
		return "", errors.New("solana: an owner or mint is not 32 bytes of base58")
	}
	addr, err := findProgramAddress([][]byte{o, base58.Decode(tokenProgram), m}, base58.Decode(ataProgram))
	if err != nil {
		return "", err
	}
	return base58.Encode(addr), nil
}
