package btcdtest_test

import (
	"slices"
	"testing"

	"payd/chain/bitcoin/btcdtest"
)

// TestHarness checks the moves the harness offers against btcd itself.
func TestHarness(t *testing.T) {
	t.Parallel()
	h := btcdtest.Start(t)
	height, tip := h.Tip()
	if height != 125 {
		t.Fatalf("a new harness node is at height %d; want 125", height)
	}

	// Invalidate and reconsider move the tip back and forth.
	h.Invalidate(tip)
	if hh, back := h.Tip(); hh != height-1 || back == tip {
		t.Errorf("tip after invalidateblock: %d %s", hh, back)
	}
	h.Reconsider(tip)
	if hh, again := h.Tip(); hh != height || again != tip {
		t.Errorf("tip after reconsiderblock: %d %s; want %d %s", hh, again, height, tip)
	}

	// A payment, replaced by fee, final payments, and a chain of spends
	// from confirmed change.
	a := h.Send(h.Address(), 10_000)
	b := h.Replace(a, btcdtest.Output{To: h.Address(), Sats: 9_000})
	if pool := h.Mempool(); !slices.Equal(pool, []string{b}) {
		t.Errorf("mempool after the replacement = %v; want [%s]", pool, b)
	}
	h.Mine(1)
	// At height 126 the coinbases of blocks 1 to 27 are mature; the first
	// paid a; the 27th payment spends b's confirmed change.
	for range 27 {
		h.SendOutputs([]btcdtest.Output{{To: h.Address(), Sats: 1_000}}, btcdtest.SendOptions{Final: true})
	}
	if n := len(h.Mempool()); n != 27 {
		t.Errorf("mempool holds %d transactions; want 27", n)
	}
	hashes := h.Mine(1)

	// A restart keeps the chain (and, as btcd does, loses the mempool).
	h.Send(h.Address(), 5_000)
	h.Restart()
	if hh, now := h.Tip(); hh != height+2 || now != hashes[0] {
		t.Errorf("tip after a restart: %d %s; want %d %s", hh, now, height+2, hashes[0])
	}
	if pool := h.Mempool(); len(pool) != 0 {
		t.Errorf("mempool after a restart = %v", pool)
	}
	h.Send(h.Address(), 5_000)
}
