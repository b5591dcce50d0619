package hd

import (
	"strings"
	"testing"

	"payd/money"
)

// fuzzNetwork picks a network from a fuzzed byte, including one payd does
// not serve.
func fuzzNetwork(b byte) money.Network {
	all := append(append([]money.Network(nil), money.Networks...), "dogecoin")
	return all[int(b)%len(all)]
}

// checkRefusal fails unless err is an *Error that does not repeat a long
// input.
func checkRefusal(t *testing.T, err error, input string) {
	t.Helper()
	if ReasonOf(err) == "" {
		t.Fatalf("error %v is not an *Error", err)
	}
	if len(input) >= 16 && strings.Contains(err.Error(), input) {
		t.Fatalf("error %q repeats the input", err)
	}
}

func FuzzParseAccountKey(f *testing.F) {
	for i, s := range []string{bip84Zpub, bip84Vpub, bip84Zprv, ethXpub, ethXprv, tronXpub, slip132Ypub,
		btcTestTpub, bip84MasterZpub, bip84ChainZpub, rootXpub, abandonSolana, "", "zpub", "11111111111111111111111111111111"} {
		for n := range byte(6) {
			f.Add(n+byte(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, nb byte, s string) {
		n := fuzzNetwork(nb)
		k, err := ParseAccountKey(n, s)
		if err != nil {
			checkRefusal(t, err, s)
			return
		}
		again, err := ParseAccountKey(n, k.String())
		if err != nil || again.String() != k.String() {
			t.Fatalf("canonical key %q does not parse back: %v", k.String(), err)
		}
		a, err := k.Address(0)
		if err != nil {
			t.Fatalf("Address(0): %v", err)
		}
		if err := validate(n, k.Testnet(), a); err != nil {
			t.Fatalf("derived address %q does not validate: %v", a, err)
		}
	})
}

func FuzzValidAddress(f *testing.F) {
	for i, s := range []string{bip84Addr0, "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "BC1SW50QGDZ25J",
		"1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2",
		eip55Cases[4], eip55Cases[0], ledgerTronAddress, abandonSolana, "", "bc1", "0x", "T"} {
		f.Add(byte(i), i%2 == 0, s)
	}
	f.Fuzz(func(t *testing.T, nb byte, testnet bool, s string) {
		n := fuzzNetwork(nb)
		if err := validate(n, testnet, s); err != nil {
			checkRefusal(t, err, s)
		}
	})
}

func FuzzValidTxHash(f *testing.F) {
	for i, s := range []string{btcTxID, ethTxHash, tronTxID, solTxSig, "", "0x", abandonSolana} {
		f.Add(byte(i), s)
	}
	f.Fuzz(func(t *testing.T, nb byte, s string) {
		if err := ValidTxHash(fuzzNetwork(nb), s); err != nil {
			checkRefusal(t, err, s)
		}
	})
}

// normalizePhrase is the decoder of WalletFromMnemonic in front of PBKDF2.
func FuzzNormalizePhrase(f *testing.F) {
	for _, v := range bip39Vectors {
		f.Add(v.phrase)
	}
	f.Add(strings.Repeat("abandon ", 12))
	f.Add("")
	f.Fuzz(func(t *testing.T, phrase string) {
		normal, err := normalizePhrase(phrase)
		if err != nil {
			checkRefusal(t, err, phrase)
			return
		}
		if again, err := normalizePhrase(normal); err != nil || again != normal {
			t.Fatalf("normal form %q is not stable: %q, %v", normal, again, err)
		}
	})
}
