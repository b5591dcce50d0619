package bitcoin

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/wire/v2"

	"payd/hd"
	"payd/money"
)

func TestAddressScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, hrp, script string
	}{
		// BIP173 and BIP350 test vectors with their scriptPubKeys.
		{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "tb", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"},
		{"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc", "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"},
		// Base58 P2PKH and P2SH (Bitcoin Core's key_io_valid.json).
		{"1AGNa15ZQXAZUgFiqJ2i7Z2DPU2J6hW62i", "bc", "76a91465a16059864a2fdbc7c99a4723a8395bc6f188eb88ac"},
		{"3CMNFxN1oHBc4R1EpboAL5yzHGgE611Xou", "bc", "a91474f209f6ea907e2ea48f74fae05782ae8a66525787"},
		{"mo9ncXisMeAoXwqcV5EWuyncbmCcQN4rVs", "tb", "76a91453c0307d6851aa0ce7825ba883c6bd9ad242b48688ac"},
		{"2N2JD6wb56AfK4tfmM6PwdVmoYk2dCKf4Br", "tb", "a9146349a418fc4578d10a372b54b45c280cc8c4382f87"},
	}
	for _, tt := range tests {
		script, ok := addressScript(tt.addr)
		if !ok || hex.EncodeToString(script) != tt.script {
			t.Errorf("addressScript(%s) = %x, %v; want %s", tt.addr, script, ok, tt.script)
			continue
		}
		back, ok := scriptAddress(script, tt.hrp)
		want := tt.addr
		if strings.HasPrefix(strings.ToLower(want), tt.hrp+"1") {
			want = strings.ToLower(want)
		}
		if !ok || back != want {
			t.Errorf("scriptAddress(%s) = %q, %v; want %s", tt.script, back, ok, want)
		}
	}
	for _, s := range []string{"", "6a0401020304", "0014" + strings.Repeat("00", 19), "76a914" + strings.Repeat("00", 20) + "88ad"} {
		b, _ := hex.DecodeString(s)
		if a, ok := scriptAddress(b, "bc"); ok {
			t.Errorf("scriptAddress(%s) = %s; want no address", s, a)
		}
	}
}

// FuzzAddressScript checks that every address addressScript takes comes
// back from its script unchanged (bech32 in lower case).
func FuzzAddressScript(f *testing.F) {
	for _, s := range []string{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "1AGNa15ZQXAZUgFiqJ2i7Z2DPU2J6hW62i",
		"2N2JD6wb56AfK4tfmM6PwdVmoYk2dCKf4Br", "bc1", "x", "BC1SW50QGDZ25J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if hd.ValidAddress(money.Bitcoin, addr) != nil && hd.ValidTestnetAddress(money.Bitcoin, addr) != nil {
			return // WatchKey checks addresses before addressScript
		}
		script, ok := addressScript(addr)
		if !ok {
			t.Fatalf("addressScript refused the valid %q", addr)
		}
		want, hrp := addr, "bc"
		if h, _, _, err := bech32.DecodeGeneric(addr); err == nil {
			want, hrp = strings.ToLower(addr), h
		} else if addr[0] != '1' && addr[0] != '3' {
			hrp = "tb"
		}
		back, ok := scriptAddress(script, hrp)
		if !ok || back != want {
			t.Fatalf("%q → %x → %q, %v", addr, script, back, ok)
		}
	})
}

// FuzzScriptAddress checks that an address scriptAddress writes gives
// back the script.
func FuzzScriptAddress(f *testing.F) {
	for _, s := range []string{"0014751e76e8199196d454941c45d1b3a323f1433bd6", "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
		"76a91465a16059864a2fdbc7c99a4723a8395bc6f188eb88ac", "a91474f209f6ea907e2ea48f74fae05782ae8a66525787", "6002abcd", ""} {
		b, _ := hex.DecodeString(s)
		f.Add(b, "bc")
		f.Add(b, "bcrt")
	}
	f.Fuzz(func(t *testing.T, script []byte, hrp string) {
		if hrp != "bc" && hrp != "tb" && hrp != "bcrt" {
			return
		}
		addr, ok := scriptAddress(script, hrp)
		if !ok {
			return
		}
		back, ok := addressScript(addr)
		if !ok || !bytes.Equal(back, script) {
			t.Fatalf("%x → %q → %x, %v", script, addr, back, ok)
		}
	})
}

// FuzzDecodeBlock feeds decodeBlock and decodeTx arbitrary answers: they
// must fail cleanly or decode something that serializes back to the bytes
// given.
func FuzzDecodeBlock(f *testing.F) {
	genesis := "0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4adae5494dffff7f20020000000101000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000"
	f.Add([]byte(`"` + genesis + `"`))
	f.Add([]byte(`"00"`))
	f.Add([]byte(`""`))
	f.Add([]byte(`null`))
	f.Add([]byte(`"zz"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if msg, err := decodeBlock(json.RawMessage(raw)); err == nil {
			var buf bytes.Buffer
			if err := msg.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			if want, _ := unhex(raw); !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("block %x serializes to %x", want, buf.Bytes())
			}
		}
		if tx, err := decodeTx(json.RawMessage(raw)); err == nil {
			var buf bytes.Buffer
			if err := tx.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			if want, _ := unhex(raw); !bytes.Equal(buf.Bytes(), want) && !noncanonical(tx) {
				t.Fatalf("tx %x serializes to %x", want, buf.Bytes())
			}
		}
	})
}

// noncanonical reports a transaction whose encoding wire does not keep: a
// segwit marker with no witness data, which it writes back without one.
func noncanonical(tx *wire.MsgTx) bool { return !tx.HasWitness() }

// FuzzSatPerVB checks that any answer to a fee estimate gives a rate in
// bounds, and quickly.
func FuzzSatPerVB(f *testing.F) {
	for _, s := range []string{"0.00001", "0.00001000", "1e-05", "-1", "0", "", "1e999999999", "12", "0.000012345", "NaN", "1/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := satPerVB(json.Number(s))
		if r < minSatPerVB || r > maxSatPerVB {
			t.Fatalf("satPerVB(%q) = %d", s, r)
		}
	})
}

func TestSatPerVB(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{
		"0.00001":     1,
		"0.00001001":  2, // rounded up
		"0.00012":     12,
		"1.2e-04":     12,
		"0.0002":      20,
		"-1":          1,
		"":            1,
		"0":           1,
		"1":           maxSatPerVB,
		"1e999999999": 1,
		"1/3":         1, // not a number a node prints
	} {
		if got := satPerVB(json.Number(s)); got != want {
			t.Errorf("satPerVB(%q) = %d; want %d", s, got, want)
		}
	}
}

func TestFeeCents(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ rate, price, want int64 }{
		{1, 5_000_000, 8},     // 141 sat at $50,000: 7.05 cents, rounded up
		{10, 10_000_000, 141}, // 1,410 sat at $100,000
		{2000, 1e12, 282e7},   // the ceiling at an absurd price does not overflow
		{1, 1, 1},             // a fraction of a cent is a cent
		{20, 6_000_000, 170},  // 2,820 sat at $60,000: 169.2 cents
		{1, 100_000_000, 141}, // 141 sat at $1,000,000
		{3, 7_123_456, 31},    // 423 sat: 30.13 cents
		{1000, 9_000_000, 12690},
	} {
		if got, ok := feeCents(tt.rate, tt.price); !ok || got != tt.want {
			t.Errorf("feeCents(%d, %d) = %d; want %d", tt.rate, tt.price, got, tt.want)
		}
	}
}
