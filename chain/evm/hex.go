package evm

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// The node's JSON-RPC answers write numbers as hex quantities ("0x1b4")
// and bytes as hex data ("0x…", two digits a byte) (the Ethereum JSON-RPC
// specification, https://ethereum.github.io/execution-apis/). These types
// decode them and refuse anything else: a node that answers out of shape
// is not believed.

// quantity is a hex quantity that fits a uint64: a block number, a log
// index, a receipt status, a gas price in wei.
type quantity uint64

// UnmarshalJSON reads "0x" and 1 to 16 hex digits.
func (q *quantity) UnmarshalJSON(b []byte) error {
	s, err := jsonHex(b, 16)
	if err != nil {
		return err
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return errors.New("evm: malformed hex quantity")
	}
	*q = quantity(v)
	return nil
}

// bigQuantity is a hex quantity of up to 256 bits: a value in wei.
type bigQuantity struct{ big.Int }

// UnmarshalJSON reads "0x" and 1 to 64 hex digits.
func (q *bigQuantity) UnmarshalJSON(b []byte) error {
	s, err := jsonHex(b, 64)
	if err != nil {
		return err
	}
	if _, ok := q.SetString(s, 16); !ok {
		return errors.New("evm: malformed hex quantity")
	}
	return nil
}

// jsonHex returns the hex digits of a JSON string "0x…" holding 1 to max
// of them.
func jsonHex(b []byte, max int) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", errors.New("evm: a hex quantity must be a JSON string")
	}
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || len(digits) == 0 || len(digits) > max || !isHex(digits) {
		return "", errors.New("evm: a hex quantity is 0x and 1 to " + strconv.Itoa(max) + " hex digits")
	}
	return digits, nil
}

// isHex reports whether s is all hex digits: big.Int and strconv would
// also take a sign or underscores.
func isHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// hash32 is 32 bytes of hex data: a block or transaction hash, a log
// topic. Its String is 0x and 64 lowercase hex digits, as nodes print it,
// so hashes compare as strings.
type hash32 [32]byte

// UnmarshalJSON reads "0x" and exactly 64 hex digits.
func (h *hash32) UnmarshalJSON(b []byte) error { return fixedHex(b, h[:]) }

// String is 0x and 64 lowercase hex digits.
func (h hash32) String() string { return "0x" + hex.EncodeToString(h[:]) }

// account is 20 bytes of hex data: an address.
type account [20]byte

// UnmarshalJSON reads "0x" and exactly 40 hex digits.
func (a *account) UnmarshalJSON(b []byte) error { return fixedHex(b, a[:]) }

// fixedHex decodes a JSON string "0x…" of exactly len(dst) bytes into dst.
func fixedHex(b []byte, dst []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("evm: hex data must be a JSON string")
	}
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || len(digits) != 2*len(dst) {
		return errors.New("evm: hex data of " + strconv.Itoa(len(dst)) + " bytes is 0x and " +
			strconv.Itoa(2*len(dst)) + " hex digits")
	}
	if _, err := hex.Decode(dst, []byte(digits)); err != nil {
		return errors.New("evm: malformed hex data")
	}
	return nil
}

// data is hex data of any length (a log's data), up to what the response
// bound lets through.
type data []byte

// UnmarshalJSON reads "0x" and an even number of hex digits.
func (d *data) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("evm: hex data must be a JSON string")
	}
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return errors.New("evm: hex data must start with 0x")
	}
	out, err := hex.DecodeString(digits)
	if err != nil {
		return errors.New("evm: malformed hex data")
	}
	*d = out
	return nil
}

// hexQuantity writes n as a hex quantity, for a call's parameters.
func hexQuantity(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }
