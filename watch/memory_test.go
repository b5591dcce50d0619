package watch

import (
	"context"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// The memory goal of issue 16: the watched set of 1,000,000 deposit
// addresses in under 200 MB.
const memWatched = 1_000_000

// addrStore answers WatchedDeposits with a fixed list, as the store does
// at a full rebuild; the rest of payd.Store is left nil.
type addrStore struct {
	payd.Store
	deposits func() []payd.Deposit
}

func (s addrStore) WatchedDeposits(context.Context, money.Network, time.Time, time.Time) ([]payd.Deposit, error) {
	return s.deposits(), nil
}

// keyNode has the WatchKey of a chain adapter and nothing else: on
// bitcoin the 22-byte P2WPKH output script (0x00 0x14 and the key hash),
// on the EVM chains the 20 bytes of the account. Its addresses are the
// key's bytes in hex after a prefix, as long as real ones.
type keyNode struct {
	payd.Node
	prefix string
	script []byte // the bytes a key starts with before the address's
}

func (n keyNode) Name() money.Network { return money.Bitcoin }
func (n keyNode) Chain() string       { return "bench" }

func (n keyNode) WatchKey(address string) (string, bool) {
	b, err := hex.DecodeString(address[len(n.prefix):])
	if err != nil {
		return "", false
	}
	return string(append(n.script[:len(n.script):len(n.script)], b...)), true
}

// heap is the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkWatchedSetMemory fills a follower's watched set by refresh, as
// a full rebuild does, with 1,000,000 addresses, and reports the heap it
// keeps (set-MB), the deposit list the store returns, alive only during
// the rebuild (addrs-MB), and the time of a rebuild (ns/op). A rebuild
// holds the old set, the list and the new set at once, so its peak is
// about twice set-MB plus addrs-MB.
func BenchmarkWatchedSetMemory(b *testing.B) {
	for _, tc := range []struct {
		name string
		node keyNode
	}{
		{"bitcoin-p2wpkh", keyNode{prefix: "bc1q", script: []byte{0x00, 0x14}}},
		{"evm", keyNode{prefix: "0x"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 16))
			base := heap()
			deposits := make([]payd.Deposit, memWatched)
			var h [20]byte
			for i := range deposits {
				for j := range h {
					h[j] = byte(r.Uint32())
				}
				deposits[i].Address = tc.node.prefix + hex.EncodeToString(h[:])
			}
			addrsMB := float64(heap()-base) / 1e6
			st := addrStore{deposits: func() []payd.Deposit { return deposits }}
			f := NewFollower(st, tc.node, clock.Real{}, slog.New(slog.DiscardHandler), FollowOptions{})
			var setMB float64
			for b.Loop() {
				b.StopTimer()
				f.watched = nil
				before := heap()
				b.StartTimer()
				if err := f.refresh(context.Background(), clock.Real{}.Now()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				setMB = float64(heap()-before) / 1e6
				if len(f.watched) != memWatched {
					b.Fatalf("%d watched, want %d", len(f.watched), memWatched)
				}
				b.StartTimer()
			}
			b.ReportMetric(setMB, "set-MB")
			b.ReportMetric(addrsMB, "addrs-MB")
		})
	}
}
