package hd

import (
	"testing"

	"payd/money"
)

func TestValidBitcoinAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		addr    string
		testnet bool
		want    Reason // "" for valid
	}{
		// BIP350 "Test vectors for v0-v16 native segregated witness
		// addresses" (github.com/bitcoin/bips/blob/master/bip-0350.mediawiki),
		// valid list. payd accepts v0 and v1 taproot …
		{"v0 p2wpkh upper case", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", false, ""},
		{"v0 p2wsh testnet", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", true, ""},
		{"v0 p2wsh testnet 2", "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy", true, ""},
		{"v1 taproot testnet", "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c", true, ""},
		{"v1 taproot", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", false, ""},
		// … and refuses, as policy, the versions not yet in use.
		{"v1 40-byte program", "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", false, Unsupported},
		{"v16", "BC1SW50QGDZ25J", false, Unsupported},
		{"v2", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", false, Unsupported},

		// BIP350, invalid list, with its reasons.
		{"invalid hrp", "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", false, Malformed},
		{"bech32 instead of bech32m", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", false, BadChecksum},
		{"bech32 instead of bech32m v19", "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf", true, BadChecksum},
		{"bech32 instead of bech32m v16", "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", false, BadChecksum},
		{"bech32m instead of bech32", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", false, BadChecksum},
		{"bech32m instead of bech32 testnet", "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47", true, BadChecksum},
		{"invalid character in checksum", "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", false, Malformed},
		{"invalid witness version", "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", false, Malformed},
		{"program 1 byte", "bc1pw5dgrnzv", false, BadLength},
		{"program 41 bytes", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", false, BadLength},
		{"v0 program 16 bytes", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", false, BadLength},
		{"mixed case", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq", true, Malformed},
		{"zero padding over 4 bits", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", false, Malformed},
		{"non-zero padding", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", true, Malformed},
		{"empty data section", "bc1gmk9yu", false, Malformed},

		// BIP84 test vectors: a P2WPKH address on the wrong network.
		{"mainnet p2wpkh", bip84Addr0, false, ""},
		{"mainnet p2wpkh on testnet", bip84Addr0, true, WrongNet},
		{"testnet p2wpkh on mainnet", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", false, WrongNet},
		// bip_utils test_bip84.py "Bitcoin regtest" address 0.
		{"regtest p2wpkh", "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk", true, ""},
		{"regtest p2wpkh on mainnet", "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk", false, WrongNet},
		{"one character changed", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv", false, BadChecksum},

		// SLIP-0132 "Bitcoin Test Vectors": m/44'/0'/0'/0/0 P2PKH and
		// m/49'/0'/0'/0/0 P2SH.
		{"p2pkh", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", false, ""},
		{"p2sh", "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf", false, ""},
		{"p2pkh on testnet", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", true, WrongNet},
		{"p2pkh checksum", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabB", false, BadChecksum},
		// bip_utils test_bip44.py and test_bip49.py, "Bitcoin test net".
		{"testnet p2pkh", "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", true, ""},
		{"testnet p2sh", "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2", true, ""},
		{"testnet p2sh on mainnet", "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2", false, WrongNet},
		// bip_utils test_bip44.py "Litecoin" address 0: another coin's version byte.
		{"litecoin p2pkh", "LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez", false, WrongKind},

		{"empty", "", false, Malformed},
		{"ethereum address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", false, Malformed},
		{"too long", "bc1q" + bip84Zpub, false, BadLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validate(money.Bitcoin, tt.testnet, tt.addr)
			if got := ReasonOf(err); got != tt.want || (err != nil && got == "") {
				t.Fatalf("validate(%q, testnet=%v) = %v; want Reason %q", tt.addr, tt.testnet, err, tt.want)
			}
			if err != nil && err.(*Error).Input != InputAddress {
				t.Errorf("Input = %q", err.(*Error).Input)
			}
		})
	}
}
