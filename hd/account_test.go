package hd

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"payd/money"
)

// Published account keys of the mnemonic "abandon abandon abandon abandon
// abandon abandon abandon abandon abandon abandon abandon about" (empty
// passphrase) and their first receive addresses.
const (
	// BIP84 "Test vectors" (github.com/bitcoin/bips/blob/master/bip-0084.mediawiki):
	// account 0 m/84'/0'/0', first and second receiving addresses. The
	// same zpub is SLIP-0132's m/84'/0'/0' vector.
	bip84Zpub  = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84Zprv  = "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE"
	bip84Addr0 = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	bip84Addr1 = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"

	// bip_utils tests/bip/bip84/test_bip84.py (github.com/ebellocchia/bip_utils),
	// "Bitcoin test net": account m/84'/1'/0' and its first addresses.
	bip84Vpub = "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"

	// bip_utils tests/bip/bip44/test_bip44.py, "Ethereum" (also "Polygon"):
	// account m/44'/60'/0' and addresses 0-4. Address 0 is also in
	// klever-io/kos-rs packages/kos-sdk/src/chains/ethereum/mod.rs.
	ethXpub = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
	ethXprv = "xprv9zDSoJv1aBcjX6sNgEpE2J9K6MV2MUnXuqXsFgzVn3zY2aHyupaFQdYCtdCbNMkvcTdx9FeN49sgXw6mjrhrFLRSzJVnRYPfSCCgjeg4GxY"

	// bip_utils tests/bip/bip44/test_bip44.py, "Tron": account m/44'/195'/0'
	// and addresses 0-4. Address 0 is also LedgerHQ/app-tron README.md
	// "Test seed", and all five are in kos-rs .../chains/tron/mod.rs.
	tronXpub = "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"

	// bip_utils tests/bip/bip84/test_bip84.py TEST_VECT_EX_KEY_DEPTHS and the
	// "Bitcoin" entry: the same wallet's keys at other depths.
	bip84MasterZpub = "zpub6jftahH18ngZxLmXaKw3GSZzZsszmt9WqedkyZdezFtWRFBZqsQH5hyUmb4pCEeZGmVfQuP5bedXTB8is6fTv19U1GQRyQUKQGUTzyHACMF"
	bip84Depth2Zpub = "zpub6pNAXMNU74t5ERmvhYL68oqmkaRKPPFucgE6Vrd7Q11N712u3EFZ3X18MY9LsL48ySz5fTaetHhpft2bsPDtxK97HnnKkzR2ES2qB69sCPf"
	bip84ChainZpub  = "zpub6u4KbU8TSgNuZSxzv7HaGq5Tk361gMHdZxnM4UYuwzg5CMLcNytzhobitV4Zq6vWtWHpG9QijsigkxAzXvQWyLRfLq1L7VxPP1tky1hPfD4"
	bip84Depth5Zpub = "zpub6uWj3N2LbHteHkuNPXs9bwnQGZ3RDnr5GtGmPo8aouYQLe6zQghcBDS78p221mbYb5eVgviZ2mEkdgMvLfSmvzsSe6nMYVaALaL6rZ9pTbq"

	// SLIP-0132 "Bitcoin Test Vectors" (github.com/satoshilabs/slips/blob/master/slip-0132.md).
	slip132Ypub = "ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP"
	slip132Xprv = "xprv9xpXFhFpqdQK3TmytPBqXtGSwS3DLjojFhTGht8gwAAii8py5X6pxeBnQ6ehJiyJ6nDjWGJfZ95WxByFXVkDxHXrqu53WCRGypk2ttuqncb"

	// bip_utils tests/bip/bip44/test_bip44.py, "Bitcoin test net": account
	// m/44'/1'/0', a tpub.
	btcTestTpub = "tpubDC5FSnBiZDMmhiuCmWAYsLwgLYrrT9rAqvTySfuCCrgsWz8wxMXUS9Tb9iVMvcRbvFcAHGkMD5Kx8koh4GquNGNTfohfk7pgjhaPCdXpoba"

	// BIP-0086 test vectors, as copied in bitpay/bitcore
	// packages/bitcore-lib/test/data/taproot_accounts.js: the root xpub.
	rootXpub = "xpub661MyMwAqRbcFkPHucMnrGNzDwb6teAX1RbKQmqtEF8kK3Z7LZ59qafCjB9eCRLiTVG3uxBxgKvRgbubRhqSKXnGGb1aoaqLrpMBDrVxga8"
)

func TestAccountAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		network money.Network
		key     string
		want    []string // addresses at indexes 0, 1, …
	}{
		{"bip84", money.Bitcoin, bip84Zpub, []string{
			bip84Addr0, bip84Addr1,
			// bip_utils test_bip84.py "Bitcoin" addresses 2-4.
			"bc1qp59yckz4ae5c4efgw2s5wfyvrz0ala7rgvuz8z",
			"bc1qgl5vlg0zdl7yvprgxj9fevsc6q6x5dmcyk3cn3",
			"bc1qm97vqzgj934vnaq9s53ynkyf9dgr05rargr04n",
		}},
		{"bip84 testnet", money.Bitcoin, bip84Vpub, []string{
			"tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
			"tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97",
			"tb1qxdyjf6h5d6qxap4n2dap97q4j5ps6ua8sll0ct",
		}},
		{"ethereum", money.Ethereum, ethXpub, []string{
			"0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
			"0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0",
			"0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A",
			"0xF3f50213C1d2e255e4B2bAD430F8A38EEF8D718E",
			"0x51cA8ff9f1C0a99f88E86B8112eA3237F55374cA",
		}},
		{"polygon", money.Polygon, ethXpub, []string{
			"0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
			"0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0",
		}},
		{"tron", money.Tron, tronXpub, []string{
			"TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
			"TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK",
			"TYJPRrdB5APNeRs4R7fYZSwW3TcrTKw2gx",
			"TRhVWK5XEDkQBDevcdCWW7RW51aRncty4W",
			"TT2X2yyubp7qpAWYYNE5JQWBtoZ7ikQFsY",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := mustParse(t, tt.network, tt.key)
			if k.String() != tt.key || k.Network() != tt.network {
				t.Errorf("String, Network = %q, %q; want %q, %q", k.String(), k.Network(), tt.key, tt.network)
			}
			for i, want := range tt.want {
				got, err := k.Address(uint32(i))
				if err != nil || got != want {
					t.Errorf("Address(%d) = %q, %v; want %q", i, got, err, want)
				}
				if err := validate(tt.network, k.Testnet(), got); err != nil {
					t.Errorf("the derived address %q does not validate: %v", got, err)
				}
			}
		})
	}
}

// The xpub spelling of the BIP84 account is the same key under BIP32's
// version bytes; it gives the same addresses and the canonical zpub back.
func TestBitcoinXpubSpelling(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ key, as string }{
		{bip84Zpub, "xpub"},
		{bip84Vpub, "tpub"},
	} {
		v := versionXpub
		if tt.as == "tpub" {
			v = [4]byte{0x04, 0x35, 0x87, 0xcf}
		}
		respelled := mutate(t, tt.key, func(p []byte) { copy(p, v[:]) })
		if !strings.HasPrefix(respelled, tt.as) {
			t.Fatalf("respelled key %q does not start with %s", respelled, tt.as)
		}
		k := mustParse(t, money.Bitcoin, respelled)
		if k.String() != tt.key {
			t.Errorf("String() = %q; want the canonical %q", k.String(), tt.key)
		}
	}
	k := mustParse(t, money.Bitcoin, mutate(t, bip84Zpub, func(p []byte) { copy(p, versionXpub[:]) }))
	if got, _ := k.Address(0); got != bip84Addr0 {
		t.Errorf("Address(0) of the xpub spelling = %q; want %q", got, bip84Addr0)
	}
}

func TestParseAccountKeyRefuses(t *testing.T) {
	t.Parallel()
	nonHardened := depth3NonHardened(t)
	tests := []struct {
		name    string
		network money.Network
		key     string
		want    Reason
	}{
		{"zprv", money.Bitcoin, bip84Zprv, PrivateKey},
		{"xprv for ethereum", money.Ethereum, ethXprv, PrivateKey},
		{"xprv for bitcoin", money.Bitcoin, slip132Xprv, PrivateKey},
		{"xprv for tron", money.Tron, slip132Xprv, PrivateKey},
		{"public version, private data", money.Ethereum, mutate(t, ethXpub, func(p []byte) { p[45] = 0x00 }), PrivateKey},
		{"ypub", money.Bitcoin, slip132Ypub, WrongKind},
		{"zpub for ethereum", money.Ethereum, bip84Zpub, WrongKind},
		{"vpub for tron", money.Tron, bip84Vpub, WrongKind},
		{"tpub for ethereum", money.Ethereum, btcTestTpub, WrongNet},
		{"multisig Zpub", money.Bitcoin, mutate(t, bip84Zpub, func(p []byte) { copy(p, []byte{0x02, 0xaa, 0x7e, 0xd3}) }), WrongKind},
		{"unknown version", money.Bitcoin, mutate(t, bip84Zpub, func(p []byte) { copy(p, []byte{1, 2, 3, 4}) }), WrongKind},
		{"master key", money.Bitcoin, bip84MasterZpub, BadDepth},
		{"depth 2", money.Bitcoin, bip84Depth2Zpub, BadDepth},
		{"depth 4 receive chain", money.Bitcoin, bip84ChainZpub, BadDepth},
		{"depth 5", money.Bitcoin, bip84Depth5Zpub, BadDepth},
		{"root xpub for ethereum", money.Ethereum, rootXpub, BadDepth},
		{"depth 3, not hardened", money.Bitcoin, nonHardened, BadDepth},
		{"one character changed", money.Bitcoin, bip84Zpub[:60] + swapChar(bip84Zpub[60]) + bip84Zpub[61:], BadChecksum},
		{"truncated", money.Bitcoin, bip84Zpub[:100], BadLength},
		{"too long", money.Bitcoin, bip84Zpub + strings.Repeat("z", 40), BadLength},
		{"not base58", money.Bitcoin, "zpub0OIl" + bip84Zpub[8:], Malformed},
		{"empty", money.Ethereum, "", Malformed},
		{"surrounding space", money.Bitcoin, " " + bip84Zpub, Malformed},
		{"x not on the curve", money.Ethereum, mutate(t, ethXpub, func(p []byte) {
			copy(p[46:78], bytes.Repeat([]byte{0xff}, 32))
		}), NotOnCurve},
		{"unsupported network", money.Network("dogecoin"), ethXpub, Unsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := ParseAccountKey(tt.network, tt.key)
			if got := ReasonOf(err); got != tt.want {
				t.Fatalf("ParseAccountKey() = %v, %v; want Reason %q", k, err, tt.want)
			}
			e := err.(*Error)
			if e.Network != tt.network || e.Input != InputAccountKey || e.Detail == "" {
				t.Errorf("error fields = %+v", e)
			}
			if len(tt.key) > 8 && strings.Contains(err.Error(), tt.key[8:]) {
				t.Errorf("error %q repeats the input", err)
			}
		})
	}
}

func TestAddressRefusesHardenedIndex(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		network money.Network
		key     string
	}{
		{money.Bitcoin, bip84Zpub},
		{money.Ethereum, ethXpub},
		{money.Tron, tronXpub},
		{money.Solana, abandonSolana},
	} {
		k := mustParse(t, tt.network, tt.key)
		for _, i := range []uint32{1 << 31, 1<<31 + 1, 1<<32 - 1} {
			if _, err := k.Address(i); ReasonOf(err) != Hardened {
				t.Errorf("%s Address(%d) error = %v; want Reason Hardened", tt.network, i, err)
			}
		}
		if _, err := k.Address(1<<31 - 1); err != nil {
			t.Errorf("%s Address(2^31-1) = %v; want the last normal index to work", tt.network, err)
		}
	}
}

func TestZeroAccountKey(t *testing.T) {
	t.Parallel()
	var k AccountKey
	if k.String() != "" {
		t.Errorf("String() = %q; want empty", k.String())
	}
	if _, err := k.Address(0); ReasonOf(err) != Malformed {
		t.Errorf("Address(0) error = %v; want Reason Malformed", err)
	}
}

func mustParse(t *testing.T, n money.Network, s string) AccountKey {
	t.Helper()
	k, err := ParseAccountKey(n, s)
	if err != nil {
		t.Fatalf("ParseAccountKey(%s, %q): %v", n, s, err)
	}
	return k
}

func validate(n money.Network, testnet bool, s string) error {
	if testnet {
		return ValidTestnetAddress(n, s)
	}
	return ValidAddress(n, s)
}

// mutate decodes a BIP32 serialisation, lets f change its 78-byte payload,
// and encodes it again with a correct checksum.
func mutate(t *testing.T, s string, f func(payload []byte)) string {
	t.Helper()
	raw := base58.Decode(s)
	if len(raw) != 82 {
		t.Fatalf("mutate: %q decodes to %d bytes", s, len(raw))
	}
	payload := raw[:78]
	f(payload)
	first := sha256.Sum256(payload)
	second := sha256.Sum256(first[:])
	return base58.Encode(append(payload, second[:4]...))
}

// depth3NonHardened derives the published depth-2 key's normal child 0: a
// depth-3 key that is not an account key.
func depth3NonHardened(t *testing.T) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(bip84Depth2Zpub)
	if err != nil {
		t.Fatal(err)
	}
	child, err := k.Derive(0)
	if err != nil {
		t.Fatal(err)
	}
	return child.String()
}

// swapChar returns a different base58 character.
func swapChar(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func TestBitcoinAddressForChain(t *testing.T) {
	t.Parallel()
	main, err := ParseAccountKey(money.Bitcoin, bip84Zpub)
	if err != nil {
		t.Fatal(err)
	}
	test, err := ParseAccountKey(money.Bitcoin, bip84Vpub)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []AccountKey{main, test} {
		for i := uint32(0); i < 3; i++ {
			own, err := k.Address(i)
			if err != nil {
				t.Fatal(err)
			}
			_, ownProgram, err := bech32.Decode(own)
			if err != nil {
				t.Fatal(err)
			}
			for _, hrp := range segwitHRPs {
				got, err := k.BitcoinAddress(i, hrp)
				if err != nil {
					t.Fatalf("BitcoinAddress(%d, %q): %v", i, hrp, err)
				}
				gotHRP, program, err := bech32.Decode(got)
				if err != nil {
					t.Fatalf("%s does not decode: %v", got, err)
				}
				if gotHRP != hrp || !bytes.Equal(program, ownProgram) {
					t.Errorf("BitcoinAddress(%d, %q) = %s; want the program of %s under %s", i, hrp, got, own, hrp)
				}
				if (hrp == "bc" && !k.Testnet()) || (hrp == "tb" && k.Testnet()) {
					if got != own {
						t.Errorf("BitcoinAddress(%d, %q) = %s; Address gives %s", i, hrp, got, own)
					}
				}
			}
		}
	}
	// The checksum was computed independently with BIP173's reference
	// polymod in Python.
	if got, _ := main.BitcoinAddress(0, "bcrt"); got != "bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx" {
		t.Errorf("regtest address of the BIP84 vector's first key = %s", got)
	}
	eth, err := ParseAccountKey(money.Ethereum, ethXpub)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k     AccountKey
		index uint32
		hrp   string
		want  Reason
	}{
		{main, 0, "ltc", Unsupported},
		{main, 1 << 31, "bc", Hardened},
		{eth, 0, "bc", WrongKind},
		{AccountKey{}, 0, "bc", WrongKind},
	} {
		if _, err := c.k.BitcoinAddress(c.index, c.hrp); ReasonOf(err) != c.want {
			t.Errorf("BitcoinAddress(%d, %q) of a %s key: %v; want reason %s", c.index, c.hrp, c.k.Network(), err, c.want)
		}
	}
}
