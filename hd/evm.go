package hd

import (
	"encoding/hex"

	"golang.org/x/crypto/sha3"

	"payd/money"
)

// keccak256 is Ethereum's hash: the original Keccak padding, not NIST SHA-3.
func keccak256(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b) // a hash.Hash never returns an error
	return h.Sum(nil)
}

// evmAccount is the 20-byte account of an uncompressed secp256k1 public key
// (65 bytes, 0x04 prefix): the last 20 bytes of keccak256 of the 64-byte X‖Y.
func evmAccount(uncompressed []byte) []byte {
	return keccak256(uncompressed[1:])[12:]
}

// evmAddress is the EIP-55 checksummed address of an uncompressed public key.
func evmAddress(uncompressed []byte) string {
	return eip55(evmAccount(uncompressed))
}

// eip55 writes a 20-byte account as 0x and 40 hex digits, upper-casing each
// letter whose nibble in keccak256 of the lowercase hex is 8 or more (EIP-55).
func eip55(account []byte) string {
	lower := hex.EncodeToString(account)
	hash := keccak256([]byte(lower))
	out := []byte("0x" + lower)
	for i := range len(lower) {
		nibble := hash[i/2] >> 4
		if i%2 == 1 {
			nibble = hash[i/2] & 0x0f
		}
		if c := lower[i]; c >= 'a' && nibble >= 8 {
			out[i+2] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// validEVMAddress checks an ethereum or polygon address: 0x and 40 hex
// digits; all-lowercase and all-uppercase carry no checksum and pass, mixed
// case must be the EIP-55 spelling.
func validEVMAddress(n money.Network, s string) error {
	bad := func(r Reason, format string, args ...any) error {
		return refuse(n, InputAddress, r, format, args...)
	}
	switch {
	case s == "":
		return bad(Malformed, "is empty")
	case len(s) < 2 || s[:2] != "0x":
		return bad(Malformed, "must start with 0x")
	case len(s) != 42:
		return bad(BadLength, "has %d hex digits after 0x; an address has 40", len(s)-2)
	}
	account, err := hex.DecodeString(s[2:])
	if err != nil {
		return bad(Malformed, "has a character that is not a hex digit")
	}
	digits := s[2:]
	if !mixedCase(digits) {
		return nil
	}
	if eip55(account) != s {
		return bad(BadChecksum, "fails its EIP-55 mixed-case checksum: a character is wrong")
	}
	return nil
}

// mixedCase reports whether s holds both lower- and upper-case letters.
func mixedCase(s string) bool {
	var lower, upper bool
	for i := range len(s) {
		c := s[i]
		lower = lower || ('a' <= c && c <= 'z')
		upper = upper || ('A' <= c && c <= 'Z')
	}
	return lower && upper
}
