package hd

import (
	"encoding/hex"
	"strings"
	"testing"

	"payd/money"
)

// EIP-55's test cases (eips.ethereum.org/EIPS/eip-55, ERCS/erc-55.md in
// github.com/ethereum/ERCs; the same list is in trezor/trezor-firmware
// tests/test_apps.ethereum.get_address.py): all caps, all lower, normal.
var eip55Cases = []string{
	"0x52908400098527886E0F7030069857D2E4169EE7",
	"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
	"0xde709f2102306220921060314715629080e2fb77",
	"0x27b1fdb04752bbc536007a920d24acb045561c26",
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
	"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
	"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
}

func TestEIP55(t *testing.T) {
	t.Parallel()
	for _, want := range eip55Cases {
		account, err := hex.DecodeString(want[2:])
		if err != nil {
			t.Fatal(err)
		}
		if got := eip55(account); got != want {
			t.Errorf("eip55(%x) = %s; want %s", account, got, want)
		}
		for _, n := range []money.Network{money.Ethereum, money.Polygon} {
			if err := ValidAddress(n, want); err != nil {
				t.Errorf("ValidAddress(%s, %s) = %v", n, want, err)
			}
			if err := ValidAddress(n, strings.ToLower(want)); err != nil {
				t.Errorf("ValidAddress(%s, lower case) = %v; want no checksum to check", n, err)
			}
		}
	}
}

// Changing the case of any one letter of a mixed-case address breaks its
// checksum.
func TestEIP55CaseFlip(t *testing.T) {
	t.Parallel()
	for _, s := range eip55Cases[4:] {
		for i := 2; i < len(s); i++ {
			c := s[i]
			if c < 'A' || (c > 'F' && c < 'a') || c > 'f' {
				continue
			}
			flipped := s[:i] + string(c^0x20) + s[i+1:]
			if !mixedCase(flipped[2:]) {
				continue // flipping made it all one case, which carries no checksum
			}
			if err := ValidAddress(money.Ethereum, flipped); ReasonOf(err) != BadChecksum {
				t.Errorf("ValidAddress(%s) = %v; want Reason BadChecksum", flipped, err)
			}
		}
	}
}

func TestValidEVMAddressRefuses(t *testing.T) {
	t.Parallel()
	// klever-io/kos-rs packages/kos-sdk/src/chains/ethereum/mod.rs
	// test_validate_address_fail: a wrong digit and wrong lengths.
	tests := []struct {
		name, addr string
		want       Reason
	}{
		{"wrong checksum", "0x9858EfFD232B4033E47d90003D41EC34EcaEda95", BadChecksum},
		{"39 digits", "0x9858EfFD232B4033E47d90003D41EC34EcaEda9", BadLength},
		{"41 digits", "0x9858EfFD232B4033E47d90003D41EC34EcaEda941", BadLength},
		{"42 digits", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94Ab", BadLength},
		{"no 0x", "9858EfFD232B4033E47d90003D41EC34EcaEda94", Malformed},
		{"upper-case 0X", "0X9858EfFD232B4033E47d90003D41EC34EcaEda94", Malformed},
		{"not hex", "0x9858EfFD232B4033E47d90003D41EC34EcaEdaZZ", Malformed},
		{"empty", "", Malformed},
		{"tron address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := ValidAddress(money.Polygon, tt.addr); ReasonOf(err) != tt.want {
				t.Errorf("ValidAddress(%q) = %v; want Reason %q", tt.addr, err, tt.want)
			}
		})
	}
}

// kos-rs .../chains/ethereum/mod.rs: the first account of "abandon … about"
// has this private key and address. The private key's public key comes
// from btcec, independently of BIP32.
func TestEVMAddressOfKnownKey(t *testing.T) {
	t.Parallel()
	pub := publicFromPrivate(t, "1ab42cc412b618bdea3a599e3c9bae199ebf030895b039e9db1e30dafb12b727")
	if got := evmAddress(pub.SerializeUncompressed()); got != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" {
		t.Errorf("evmAddress = %s", got)
	}
}
