package devnet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/hd"
	"payd/money"
)

// validOps returns one op of each kind as the devnet writes them, with
// fixed hashes and senders.
func validOps(t testing.TB) [][]byte {
	sample := func(n money.Network, size int, fill byte) string {
		s, err := hd.SampleAddress(n, bytes.Repeat([]byte{fill}, size))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return [][]byte{
		op{V: 1, Kind: opTransfer, Network: money.Bitcoin, At: 1933049228000000, TxHash: strings.Repeat("ab", 32),
			Asset: money.BTC, Units: "123000", To: sample(money.Bitcoin, 20, 1), From: sample(money.Bitcoin, 20, 2)}.encode(),
		op{V: 1, Kind: opTransfer, Network: money.Solana, At: 5, TxHash: base58.Encode(bytes.Repeat([]byte{9}, 64)),
			Asset: money.USDC, Units: "12500000", To: sample(money.Solana, 32, 3), From: sample(money.Solana, 32, 4),
			Reference: sample(money.Solana, 32, 5)}.encode(),
		op{V: 1, Kind: opTransfer, Network: money.Ethereum, TxHash: "0x" + strings.Repeat("0F", 32), Asset: money.ETH,
			Units: "15000000000000000000000", To: sample(money.Ethereum, 20, 6), From: sample(money.Ethereum, 20, 7)}.encode(),
		[]byte(`{"v":1,"op":"mine","network":"polygon","at":0,"count":1000}`),
		[]byte(`{"v":1,"op":"reorg","network":"tron","at":-1,"depth":3}`),
	}
}

func TestDecodeOp(t *testing.T) {
	for _, s := range validOps(t) {
		if _, err := decodeOp(s); err != nil {
			t.Errorf("decodeOp(%s): %v", s, err)
		}
	}
	b := setup(t)
	dep := b.deposit(money.Bitcoin, 0)
	o, err := b.d.transferOp(TransferRequest{Network: "bitcoin", Asset: "BTC", To: dep.Address, Amount: "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	o.V = opVersion
	got, err := decodeOp(o.encode())
	if err != nil || got != o {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, o)
	}
	for _, bad := range []string{
		``, `{}`, `null`, `[]`, `{"v":1,"op":"mine","network":"bitcoin","count":1} {}`,
		`{"v":1,"op":"mine","network":"bitcoin","count":1,"extra":1}`,
		`{"v":1,"op":"mine","network":"bitcoin","count":1001}`,
		`{"v":1,"op":"mine","network":"bitcoin","count":1,"to":"x"}`,
		`{"v":1,"op":"reorg","network":"bitcoin","depth":0}`,
		`{"v":1,"op":"burn","network":"bitcoin"}`,
		`{"v":1,"op":"mine","network":"Bitcoin","count":1}`,
		strings.Replace(string(o.encode()), `"units":"50000000"`, `"units":"050000000"`, 1),
		strings.Replace(string(o.encode()), `"asset":"BTC"`, `"asset":"ETH"`, 1),
		strings.Replace(string(o.encode()), `"tx_hash":"`, `"tx_hash":"0x`, 1),
		strings.Replace(string(o.encode()), `"to":"`, `"reference":"`+dep.Address+`","to":"`, 1),
	} {
		if _, err := decodeOp([]byte(bad)); err == nil {
			t.Errorf("decodeOp accepted %s", bad)
		}
	}
}

// FuzzDecodeOp feeds the op-log decoder anything: it never panics, and an
// op it accepts encodes back to bytes it reads as the same op.
func FuzzDecodeOp(f *testing.F) {
	for _, s := range validOps(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"v":1,"op":"transfer","network":"ethereum","units":"1e3"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeOp(b)
		if err != nil {
			return
		}
		again, err := decodeOp(o.encode())
		if err != nil || again != o {
			t.Fatalf("%s decodes to %+v, which re-encodes to %s (%v)", b, o, o.encode(), err)
		}
		if !bytes.Equal(again.encode(), o.encode()) {
			t.Fatalf("encoding is not stable for %s", b)
		}
		if o.Kind == opTransfer && o.amount().Sign() <= 0 {
			t.Fatalf("accepted a transfer of %s", o.Units)
		}
	})
}
