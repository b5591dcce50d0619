package bitcoin

import (
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// everyScript watches every script.
type everyScript struct{}

func (everyScript) Has(string) bool { return true }

// TestMatchSkips checks that match passes over outputs of no value and
// every output of a coinbase, and counts the rest.
func TestMatchSkips(t *testing.T) {
	n := &Node{hrp: "bcrt"}
	script := append([]byte{0x00, 0x14}, make([]byte, 20)...) // P2WPKH
	spend := wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}, Index: 0}, nil, nil)
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(spend)
	tx.AddTxOut(wire.NewTxOut(0, script))
	tx.AddTxOut(wire.NewTxOut(-1, script))
	tx.AddTxOut(wire.NewTxOut(5_000, script))
	got := n.match(tx, everyScript{})
	if len(got) != 1 || got[0].Index != 2 || got[0].Amount.Units.Int64() != 5_000 {
		t.Errorf("match = %+v, want output 2 only", got)
	}
	coinbase := wire.NewMsgTx(2)
	coinbase.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{0x51, 0x00}, nil))
	coinbase.AddTxOut(wire.NewTxOut(5_000_000_000, script))
	if got := n.match(coinbase, everyScript{}); len(got) != 0 {
		t.Errorf("match(coinbase) = %+v, want none", got)
	}
}
