package hd

import (
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/btcec/v2"

	"payd/money"
)

// LedgerHQ/app-tron README.md "Test seed" and fbsobreira/trx-ledger
// README.md "Test Case": the first key of "abandon … about" on m/44'/195'.
const (
	ledgerTronPriv    = "b5a4cea271ff424d7c31dc12a3e43e401df7a40d7412a15750f3f0b6b5449a28"
	ledgerTronPub     = "04ff21f8e64d3a3c0198edfbb7afdc79be959432e92e2f8a1984bb436a414b8edcec0345aad0c1bf7da04fd036dd7f9f617e30669224283d950fab9dd84831dc83"
	ledgerTronHex     = "41c8599111f29c1e1e061265b4af93ea1f274ad78a"
	ledgerTronAddress = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
)

func TestTronAddressOfKnownKey(t *testing.T) {
	t.Parallel()
	pub, _ := hex.DecodeString(ledgerTronPub)
	if got := tronAddress(pub); got != ledgerTronAddress {
		t.Errorf("tronAddress(published public key) = %s; want %s", got, ledgerTronAddress)
	}
	payload, v, err := base58.CheckDecode(ledgerTronAddress)
	if err != nil || hex.EncodeToString(append([]byte{v}, payload...)) != ledgerTronHex {
		t.Errorf("%s decodes to %x%x, %v; want %s", ledgerTronAddress, v, payload, err, ledgerTronHex)
	}
	if got := publicFromPrivate(t, ledgerTronPriv).SerializeUncompressed(); hex.EncodeToString(got) != ledgerTronPub {
		t.Errorf("public key of the published private key = %x", got)
	}
}

func TestValidTronAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, addr string
		want       Reason
	}{
		// klever-io/kos-rs packages/kos-sdk/src/chains/tron/mod.rs,
		// test_validate_address_ok and test_validate_address_invalid.
		{"abandon 0", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", ""},
		{"abandon 1", "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK", ""},
		{"usdt contract", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
		{"case changed", "TuEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", BadChecksum},
		// Vanity strings that are valid base58check with prefix 0x42.
		{"vanity look-alike", "TronEnergyioE1Z3ukeRv38sYkv5Jn55bL", WrongKind},
		{"vanity look-alike 2", "TronEnergyioNijNo8g3LF2ABKUAae6D2Z", WrongKind},
		{"extra character", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH1", BadLength},
		{"ethereum address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", WrongKind},
		// SLIP-0132: a bitcoin P2PKH address has version 0x00.
		{"bitcoin address", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", WrongKind},
		{"not base58", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWY0H", Malformed},
		{"empty", "", Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := ValidAddress(money.Tron, tt.addr); ReasonOf(err) != tt.want || (err != nil && tt.want == "") {
				t.Errorf("ValidAddress(%q) = %v; want Reason %q", tt.addr, err, tt.want)
			}
		})
	}
}

func publicFromPrivate(t *testing.T, privHex string) *btcec.PublicKey {
	t.Helper()
	b, err := hex.DecodeString(privHex)
	if err != nil {
		t.Fatal(err)
	}
	_, pub := btcec.PrivKeyFromBytes(b)
	return pub
}
