package evm

import (
	"encoding/json"
	"math/big"
	"testing"

	"golang.org/x/crypto/sha3"
)

func TestQuantity(t *testing.T) {
	for in, want := range map[string]uint64{
		`"0x0"`: 0, `"0x1b4"`: 436, `"0xffffffffffffffff"`: 1<<64 - 1, `"0x01"`: 1,
	} {
		var q quantity
		if err := json.Unmarshal([]byte(in), &q); err != nil || uint64(q) != want {
			t.Errorf("%s: %d, %v; want %d", in, q, err, want)
		}
	}
	for _, in := range []string{`"0x"`, `"1b4"`, `436`, `"0x1g"`, `"0x10000000000000000"`, `"0X1"`, `null`, `"-0x1"`, `"0x-1"`, `"0x+1"`} {
		var q quantity
		if err := json.Unmarshal([]byte(in), &q); err == nil {
			t.Errorf("%s: took it as %d", in, q)
		}
	}
}

func TestBigQuantity(t *testing.T) {
	max256 := `"0x` + string(make64('f')) + `"`
	for _, in := range []string{`"0x0"`, `"0xde0b6b3a7640000"`, max256} {
		var q bigQuantity
		if err := json.Unmarshal([]byte(in), &q); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	var q bigQuantity
	json.Unmarshal([]byte(`"0xde0b6b3a7640000"`), &q)
	if q.Cmp(big.NewInt(1e18)) != 0 {
		t.Errorf("1 ETH read as %s", &q.Int)
	}
	for _, in := range []string{`"0x1` + string(make64('0')) + `"`, `"0x"`, `"0x-1"`, `"0x+1"`, `"0x_1"`, `1`} {
		var q bigQuantity
		if err := json.Unmarshal([]byte(in), &q); err == nil {
			t.Errorf("%s: took it as %s", in, &q.Int)
		}
	}
}

// make64 is 64 copies of c.
func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestTransferTopic(t *testing.T) {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte("Transfer(address,address,uint256)"))
	if got := h.Sum(nil); string(got) != string(transferTopic[:]) {
		t.Errorf("transferTopic = %s, keccak256 says %x", transferTopic, got)
	}
}

func TestFixedHex(t *testing.T) {
	var a account
	for _, in := range []string{`"0x9858effd232b4033e47d90003d41ec34ecaeda9"`, `"9858effd232b4033e47d90003d41ec34ecaeda94"`,
		`"0x9858effd232b4033e47d90003d41ec34ecaeda9z"`, `null`} {
		if err := json.Unmarshal([]byte(in), &a); err == nil {
			t.Errorf("%s: took it", in)
		}
	}
	if err := json.Unmarshal([]byte(`"0x9858EFFD232B4033E47D90003D41EC34ECAEDA94"`), &a); err != nil || addressOf(a) != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" {
		t.Errorf("upper case: %s, %v", addressOf(a), err)
	}
}
