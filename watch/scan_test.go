package watch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// scanTransfer is a transfer on memScanner's chain: in slot, final or not.
type scanTransfer struct {
	payd.Transfer
	slot  int64
	final bool
}

// memScanner is a payd.Scanner in memory, as chain/solana is one over a
// Solana RPC node: a finalized slot that only grows (or reads behind, as a
// lagging backend does), transfers seen before they are final, and a
// switch that drops one (its slot forked away). Its deposits are keyed
// by address and reference.
type memScanner struct {
	fakeNet
	mu        sync.Mutex
	finalized int64
	transfers []scanTransfer
	scans     int
	tipErr    error // Tip's answer while set
	scanErr   error // Scan's answer while set
}

var _ payd.Scanner = (*memScanner)(nil)

func (n *memScanner) Chain() string { return "memory" }

func (n *memScanner) Tip(context.Context) (payd.BlockRef, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tipErr != nil {
		return payd.BlockRef{}, n.tipErr
	}
	return payd.BlockRef{Height: n.finalized, Hash: fmt.Sprint(n.finalized)}, nil
}

func (n *memScanner) BlockAt(_ context.Context, h int64, _ payd.Watched) (payd.Block, error) {
	return payd.Block{BlockRef: payd.BlockRef{Height: h, Hash: fmt.Sprint(h)}}, nil
}

func (n *memScanner) Pending(context.Context, payd.Watched, []string, int64) (payd.Pending, error) {
	panic("the follower asks a Scanner through Scan")
}

func (n *memScanner) WatchKey(string) (string, bool) {
	panic("the follower keys a Scanner's deposits by DepositKey")
}

func (n *memScanner) DepositKey(d payd.Deposit) (string, bool) {
	return d.Address + "/" + d.Reference, true
}

func (n *memScanner) FinalDepth() int { return 32 }

func (n *memScanner) Scan(_ context.Context, head, tip payd.BlockRef, w payd.WatchedSet, unconfirmed []string) (
	[]payd.Block, payd.Pending, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.scans++
	if n.scanErr != nil {
		return nil, payd.Pending{}, n.scanErr
	}
	keys := slices.Collect(w.Keys())
	p := payd.Pending{Alive: map[string]bool{}}
	bySlot := map[int64][]payd.Transfer{}
	for _, t := range n.transfers {
		if !slices.Contains(keys, t.To+"/"+t.Reference) {
			continue
		}
		switch {
		case !t.final:
			p.Transfers = append(p.Transfers, t.Transfer)
		case t.slot > head.Height && t.slot <= tip.Height:
			bySlot[t.slot] = append(bySlot[t.slot], t.Transfer)
			p.Alive[t.TxHash] = true
		}
	}
	var blocks []payd.Block
	parent := head.Hash
	for s := head.Height + 1; s <= tip.Height; s++ {
		if ts := bySlot[s]; len(ts) > 0 || s == tip.Height {
			blocks = append(blocks, payd.Block{BlockRef: payd.BlockRef{Height: s, Hash: fmt.Sprint(s)}, Parent: parent,
				Transfers: ts})
			parent = fmt.Sprint(s)
		}
	}
	return blocks, p, nil
}

// TestFollowerScans follows a Scanner's chain: a transfer seen before it is
// final is detected with no confirmation, then counted FinalDepth deep in
// the block that made it final, and the payment succeeds; one whose slot
// was forked away is dropped once the node forgot it for DropAfter; a
// tip read behind the stored head (a lagging backend) unwinds nothing.
func TestFollowerScans(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := &memScanner{finalized: 100}
		log := storetest.Logger(t)
		f := NewFollower(db, node, clk, log, FollowOptions{Lease: 10 * time.Second, DropAfter: time.Minute})
		w := NewWatcher(db, f.Network(), clk, log, Options{})
		paid := openCheckout(t, db, clk.Now(), "wallet")
		forked := openCheckout(t, db, clk.Now(), "wallet2")
		events := func(p *payd.Payment) string {
			t.Helper()
			got, err := db.PaymentByID(ctx, p.BusinessID, p.ID)
			must(t, err)
			var types []string
			for _, e := range got.Events[2:] {
				types = append(types, e.Type)
			}
			return strings.Join(types, " ")
		}
		run := func() {
			t.Helper()
			must(t, f.RunOnce(ctx))
			must(t, w.RunOnce(ctx))
		}
		run()
		if head, err := db.ChainHead(ctx, money.Polygon); err != nil || head.Height != 100 {
			t.Fatalf("the first run stored %+v, %v; want the tip, 100", head, err)
		}

		pay := func(tx, to string) payd.Transfer {
			return payd.Transfer{TxHash: tx, From: "customer", To: to, Amount: money.NewCoinAmount(money.USDC, 25_000_000)}
		}
		node.mu.Lock()
		node.transfers = []scanTransfer{{Transfer: pay("s1", "wallet"), slot: 103}, {Transfer: pay("s2", "wallet2"), slot: 104}}
		node.mu.Unlock()
		run()
		if got := events(paid); got != "detected" {
			t.Fatalf("a transfer seen, not final: %q", got)
		}
		if ts, _ := f.Network().Transfers(ctx, []payd.Deposit{{Address: "wallet"}}); len(ts) != 1 || ts[0].Confirmations != 0 {
			t.Fatalf("transfers before finality = %+v", ts)
		}

		// s1 is finalized in slot 103, the tip is 110; s2's slot is forked
		// away and the node no longer knows it.
		node.mu.Lock()
		node.finalized = 110
		node.transfers = []scanTransfer{{Transfer: pay("s1", "wallet"), slot: 103, final: true}}
		node.mu.Unlock()
		run()
		if got := events(paid); got != "detected confirmation confirmation succeeded" { // 2 required
			t.Fatalf("a finalized transfer: %q", got)
		}
		ts, err := f.Network().Transfers(ctx, []payd.Deposit{{Address: "wallet"}})
		must(t, err)
		if len(ts) != 1 || ts[0].Confirmations != 110-103+32 {
			t.Fatalf("confirmations of a transfer finalized 7 slots under the tip = %+v, want %d", ts, 110-103+32)
		}
		if got := events(forked); got != "detected" {
			t.Fatalf("a transfer the node forgot for less than DropAfter: %q", got)
		}
		clk.Advance(time.Minute)
		run()
		if got := events(forked); got != "detected dropped" {
			t.Fatalf("a transfer the node forgot for DropAfter: %q", got)
		}

		// A lagging backend answers an older finalized slot: nothing is
		// unwound and the run succeeds.
		node.mu.Lock()
		node.finalized = 105
		node.mu.Unlock()
		run()
		if head, _ := db.ChainHead(ctx, money.Polygon); head.Height != 110 {
			t.Fatalf("head after a lagging tip = %+v", head)
		}
		if ts, _ := f.Network().Transfers(ctx, []payd.Deposit{{Address: "wallet"}}); len(ts) != 1 || ts[0].Confirmations != 39 {
			t.Fatalf("transfers after a lagging tip = %+v", ts)
		}
	})
}

// throttled is an error a Scanner's node answers while its rate limit is
// waited out: upstream_unavailable, with NotYet.
type throttled struct{ error }

func (throttled) NotYet() bool { return true }

// TestFollowerScanNotYet: a Scan that answers not_found (a transfer
// listed at or under the tip the node does not return yet) and a Tip or
// Scan refused while the node's rate limit is waited out are read again
// at the next run, without moving the head, failing the status or
// backing off; for staleAfter they fail.
func TestFollowerScanNotYet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := &memScanner{finalized: 100}
		f := NewFollower(db, node, clk, storetest.Logger(t), FollowOptions{Lease: time.Hour})
		must(t, f.RunOnce(ctx))
		limited := throttled{payd.Errorf(payd.ErrUpstreamUnavailable, "rate limited")}
		for _, c := range []struct {
			name          string
			tipErr, scErr error
		}{
			{"not_found", nil, payd.Errorf(payd.ErrNotFound, "listed but not returned yet")},
			{"a rate limit in Scan", nil, limited},
			{"a rate limit in Tip", limited, nil},
		} {
			node.mu.Lock()
			node.finalized += 10
			node.tipErr, node.scanErr = c.tipErr, c.scErr
			node.mu.Unlock()
			for range 2 {
				if err := f.RunOnce(ctx); err != nil {
					t.Fatalf("%s: RunOnce = %v", c.name, err)
				}
				must(t, f.Healthy(ctx))
				clk.Advance(time.Second)
			}
			if f.again() != nil {
				t.Fatalf("%s: the follower runs again at once", c.name)
			}
			head, err := db.ChainHead(ctx, money.Polygon)
			must(t, err)
			if head.Height != node.finalized-10 {
				t.Fatalf("%s: head %d moved past what the node did not answer", c.name, head.Height)
			}
			clk.Advance(staleAfter)
			if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
				t.Fatalf("%s: RunOnce after staleAfter = %v", c.name, err)
			}
			if f.Healthy(ctx) == nil {
				t.Fatalf("%s: healthy after staleAfter", c.name)
			}
			node.mu.Lock()
			node.tipErr, node.scanErr = nil, nil
			node.mu.Unlock()
			clk.Advance(time.Minute)
			must(t, f.RunOnce(ctx))
			must(t, f.Healthy(ctx))
			if head, err := db.ChainHead(ctx, money.Polygon); err != nil || head.Height != node.finalized {
				t.Fatalf("%s: head %d, %v once the node answers", c.name, head.Height, err)
			}
		}
	})
}
