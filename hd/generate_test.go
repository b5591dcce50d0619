package hd

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"

	"payd/money"
)

const abandonAbout = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// BIP39's English vectors (trezor/python-mnemonic vectors.json, which BIP39
// links as its test vectors): entropy, phrase, and the seed and BIP32 root
// key with the passphrase "TREZOR".
var bip39Vectors = []struct {
	entropy, phrase, seed, xprv string
}{
	{"00000000000000000000000000000000", abandonAbout,
		"c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04",
		"xprv9s21ZrQH143K3h3fDYiay8mocZ3afhfULfb5GX8kCBdno77K4HiA15Tg23wpbeF1pLfs1c5SPmYHrEpTuuRhxMwvKDwqdKiGJS9XFKzUsAF"},
	{"7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f", "legal winner thank year wave sausage worth useful legal winner thank yellow",
		"2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c1069be3a3a5bd381ee6260e8d9739fce1f607",
		"xprv9s21ZrQH143K2gA81bYFHqU68xz1cX2APaSq5tt6MFSLeXnCKV1RVUJt9FWNTbrrryem4ZckN8k4Ls1H6nwdvDTvnV7zEXs2HgPezuVccsq"},
	{"ffffffffffffffffffffffffffffffff", "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong",
		"ac27495480225222079d7be181583751e86f571027b0497b5b5d11218e0a8a13332572917f0f8e5a589620c6f15b11c61dee327651a14c34e18231052e48c069",
		"xprv9s21ZrQH143K2V4oox4M8Zmhi2Fjx5XK4Lf7GKRvPSgydU3mjZuKGCTg7UPiBUD7ydVPvSLtg9hjp7MQTYsW67rZHAXeccqYqrsx8LcXnyd"},
	{"0000000000000000000000000000000000000000000000000000000000000000",
		"abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art",
		"bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd3097170af7a4d73245cafa9c3cca8d561a7c3de6f5d4a10be8ed2a5e608d68f92fcc8",
		"xprv9s21ZrQH143K32qBagUJAMU2LsHg3ka7jqMcV98Y7gVeVyNStwYS3U7yVVoDZ4btbRNf4h6ibWpY22iRmXq35qgLs79f312g2kj5539ebPM"},
	{"8080808080808080808080808080808080808080808080808080808080808080",
		"letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic bless",
		"c0c519bd0e91a2ed54357d9d1ebef6f5af218a153624cf4f2da911a0ed8f7a09e2ef61af0aca007096df430022f7a2b6fb91661a9589097069720d015e4e982f",
		"xprv9s21ZrQH143K3CSnQNYC3MqAAqHwxeTLhDbhF43A4ss4ciWNmCY9zQGvAKUSqVUf2vPHBTSE1rB2pg4avopqSiLVzXEU8KziNnVPauTqLRo"},
}

func TestBIP39Vectors(t *testing.T) {
	t.Parallel()
	for _, v := range bip39Vectors {
		entropy, _ := hex.DecodeString(v.entropy)
		phrase, err := NewMnemonic(bytes.NewReader(entropy), len(entropy)*3/4)
		if err != nil || phrase != v.phrase {
			t.Errorf("NewMnemonic(%s) = %q, %v; want %q", v.entropy, phrase, err, v.phrase)
		}
		seed, err := mnemonicSeed(v.phrase, "TREZOR")
		if err != nil || hex.EncodeToString(seed) != v.seed {
			t.Errorf("seed of %q = %x, %v; want %s", v.phrase, seed, err, v.seed)
			continue
		}
		master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
		if err != nil || master.String() != v.xprv {
			t.Errorf("root key of %q = %v, %v; want %s", v.phrase, master, err, v.xprv)
		}
	}
}

// The whole wallet of "abandon … about": each key against its published
// account key (see account_test.go and solana_test.go for the sources).
func TestWalletFromMnemonic(t *testing.T) {
	t.Parallel()
	w, err := WalletFromMnemonic(abandonAbout, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key     AccountKey
		network money.Network
		s       string
	}{
		{w.Bitcoin, money.Bitcoin, bip84Zpub},
		{w.Ethereum, money.Ethereum, ethXpub},
		{w.Polygon, money.Polygon, ethXpub},
		{w.Tron, money.Tron, tronXpub},
		{w.Solana, money.Solana, abandonSolana},
	}
	for _, tt := range want {
		if tt.key.Network() != tt.network || tt.key.String() != tt.s {
			t.Errorf("%s key = %s %q; want %q", tt.network, tt.key.Network(), tt.key.String(), tt.s)
		}
	}
	if a, _ := w.Bitcoin.Address(0); a != bip84Addr0 {
		t.Errorf("bitcoin Address(0) = %s; want %s", a, bip84Addr0)
	}
	keys := w.Keys()
	if len(keys) != len(money.Networks) {
		t.Fatalf("Keys() has %d keys", len(keys))
	}
	for i, n := range money.Networks {
		if keys[i].Network() != n {
			t.Errorf("Keys()[%d] is %s; want %s", i, keys[i].Network(), n)
		}
	}
}

// bip_utils' TEST_SEED is the seed of "abandon … about" with no passphrase.
func TestMnemonicSeedWithoutPassphrase(t *testing.T) {
	t.Parallel()
	seed, err := mnemonicSeed(abandonAbout, "")
	if err != nil || hex.EncodeToString(seed) != bipUtilsSeed {
		t.Errorf("seed = %x, %v; want %s", seed, err, bipUtilsSeed)
	}
}

func TestWalletPassphraseChangesKeys(t *testing.T) {
	t.Parallel()
	plain, err := WalletFromMnemonic(abandonAbout, "")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := WalletFromMnemonic(abandonAbout, "TREZOR")
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range secret.Keys() {
		if k.String() == plain.Keys()[i].String() {
			t.Errorf("%s key is the same with and without a passphrase", k.Network())
		}
	}
}

// Case and spacing do not change the wallet.
func TestWalletPhraseSpelling(t *testing.T) {
	t.Parallel()
	w, err := WalletFromMnemonic("  ABANDON abandon\tabandon abandon abandon abandon abandon abandon abandon abandon abandon About\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Bitcoin.String() != bip84Zpub {
		t.Errorf("bitcoin key = %s; want %s", w.Bitcoin, bip84Zpub)
	}
}

func TestWalletFromMnemonicRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, phrase string
		want         Reason
		secret       string // a word that must not appear in the error
	}{
		{"bad checksum", strings.Repeat("abandon ", 12), BadChecksum, ""},
		{"swapped words", "about abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon", BadChecksum, ""},
		{"unknown word", strings.Replace(abandonAbout, "about", "aboutt", 1), Malformed, "aboutt"},
		{"eleven words", strings.Repeat("abandon ", 10) + "about", BadLength, ""},
		{"thirteen words", abandonAbout + " abandon", BadLength, ""},
		{"empty", "", BadLength, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := WalletFromMnemonic(tt.phrase, "")
			if ReasonOf(err) != tt.want {
				t.Fatalf("WalletFromMnemonic() error = %v; want Reason %q", err, tt.want)
			}
			if e := err.(*Error); e.Input != InputRecoveryPhrase || e.Network != "" {
				t.Errorf("error fields = %+v", e)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q repeats a word of the phrase", err)
			}
		})
	}
}

func TestNewMnemonic(t *testing.T) {
	t.Parallel()
	for _, words := range []int{12, 24} {
		phrase, err := NewMnemonic(bytes.NewReader(bytes.Repeat([]byte{0x5a}, 32)), words)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Fields(phrase)); n != words {
			t.Errorf("NewMnemonic(%d) has %d words", words, n)
		}
		if _, err := WalletFromMnemonic(phrase, ""); err != nil {
			t.Errorf("the generated phrase does not make a wallet: %v", err)
		}
	}
	for _, words := range []int{0, 11, 15, 18, 25} {
		if _, err := NewMnemonic(bytes.NewReader(make([]byte, 64)), words); ReasonOf(err) != BadLength {
			t.Errorf("NewMnemonic(%d words) error = %v; want Reason BadLength", words, err)
		}
	}
	if _, err := NewMnemonic(bytes.NewReader(make([]byte, 15)), 12); err == nil || ReasonOf(err) != "" {
		t.Errorf("NewMnemonic(short reader) error = %v; want a plain I/O error", err)
	}
}
