package api

import (
	"strconv"
	"sync"
	"testing"

	"payd"
	"payd/money"
)

// countingNetwork derives a made-up deposit per index and counts calls.
type countingNetwork struct {
	payd.Network
	mu    sync.Mutex
	calls map[uint32]int
}

func (n *countingNetwork) Deposit(key string, index uint32) (payd.Deposit, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls[index]++
	return payd.Deposit{Address: key + "/" + strconv.Itoa(int(index))}, nil
}

// TestDepositsAhead checks that requests derive the next indexes ahead
// once one has been handed out, that a transaction takes the deposit of
// its own index whether derived ahead or not, and that each index is
// derived once while its deposit waits to be taken.
func TestDepositsAhead(t *testing.T) {
	net := &countingNetwork{calls: map[uint32]int{}}
	a := newDepositsAhead(map[money.Network]payd.Network{money.Polygon: net})
	a.prepare(money.Polygon, "k")
	if len(net.calls) != 0 {
		t.Fatalf("derived %v before any index was handed out; want nothing", net.calls)
	}
	take := func(idx uint32) {
		t.Helper()
		d, err := a.take(money.Polygon, "k", idx)
		if want := "k/" + strconv.Itoa(int(idx)); err != nil || d.Address != want {
			t.Fatalf("take(%d) = %v, %v; want %s", idx, d, err, want)
		}
	}
	take(5) // derived in the transaction
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { a.prepare(money.Polygon, "k") })
	}
	wg.Wait()
	for _, idx := range []uint32{6, 7, 8} {
		if net.calls[idx] != 1 {
			t.Fatalf("index %d derived %d times ahead, want 1 (calls %v)", idx, net.calls[idx], net.calls)
		}
	}
	take(6)
	take(8)
	take(9) // not derived ahead
	for idx, n := range net.calls {
		if n != 1 {
			t.Fatalf("index %d derived %d times, want 1", idx, n)
		}
	}
	take(7) // handed out late (another process's, or ran again): still ready
	take(7) // handed out again after a transaction ran again: derived anew
	if net.calls[7] != 2 {
		t.Fatalf("index 7 derived %d times, want 2: a deposit derived ahead is taken once", net.calls[7])
	}
}
