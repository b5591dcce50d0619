package hd

import (
	"bytes"
	"encoding/hex"
	"testing"

	"payd/money"
)

func TestSampleAddress(t *testing.T) {
	for _, n := range money.Networks {
		size := 20
		if n == money.Solana {
			size = 32
		}
		for _, b := range []byte{0x00, 0x5a, 0xff} {
			s, err := SampleAddress(n, bytes.Repeat([]byte{b}, size))
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			if err := ValidAddress(n, s); err != nil {
				t.Errorf("%s: SampleAddress gave %q, which ValidAddress refuses: %v", n, s, err)
			}
		}
		if _, err := SampleAddress(n, make([]byte, size+1)); ReasonOf(err) != BadLength {
			t.Errorf("%s: a payload of %d bytes gave %v", n, size+1, err)
		}
	}
	if _, err := SampleAddress("dogecoin", make([]byte, 20)); ReasonOf(err) != Unsupported {
		t.Errorf("dogecoin: %v", err)
	}
}

// TestSampleAddressKnown checks the encodings against addresses derived
// from public keys: the same 20 bytes give the same address.
func TestSampleAddressKnown(t *testing.T) {
	k, err := ParseAccountKey(money.Ethereum, ethXpub)
	if err != nil {
		t.Fatal(err)
	}
	want, err := k.Address(0)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(want[2:])
	if err != nil {
		t.Fatal(err)
	}
	got, err := SampleAddress(money.Ethereum, raw)
	if err != nil || got != want {
		t.Fatalf("SampleAddress = %q, %v; want %q", got, err, want)
	}
}
