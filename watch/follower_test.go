package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// memNode is a chain in memory for the follower's own tests: blocks that
// link by hash, a mempool, reorgs and replacements, and a switch that
// makes it unreachable. The adapters' tests run the follower against real
// node software (btcd, go-ethereum).
type memNode struct {
	fakeNet
	mu      sync.Mutex
	blocks  []payd.Block // blocks[i] is at height i+1
	mempool []payd.Transfer
	forks   int
	down    bool
	lag     int // BlockAt has no block yet at the lag highest heights: a backend behind Tip's
	reads   int
	chain   string
}

func newMemNode() *memNode {
	n := &memNode{}
	n.mine()
	return n
}

// mine adds a block holding the mempool's transfers.
func (n *memNode) mine() {
	parent := "genesis"
	if len(n.blocks) > 0 {
		parent = n.blocks[len(n.blocks)-1].Hash
	}
	h := int64(len(n.blocks) + 1)
	n.blocks = append(n.blocks, payd.Block{BlockRef: payd.BlockRef{Height: h, Hash: fmt.Sprintf("b%d-%d", h, n.forks)},
		Parent: parent, Transfers: n.mempool})
	n.mempool = nil
}

// reorg orphans the last depth blocks: their transfers go back to the
// mempool, and the new branch starts empty.
func (n *memNode) reorg(depth int) {
	n.forks++
	for _, b := range n.blocks[len(n.blocks)-depth:] {
		n.mempool = append(n.mempool, b.Transfers...)
	}
	n.blocks = n.blocks[:len(n.blocks)-depth]
}

func (n *memNode) Chain() string {
	if n.chain == "" {
		return "memory"
	}
	return n.chain
}

func (n *memNode) Tip(context.Context) (payd.BlockRef, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reads++
	if n.down {
		return payd.BlockRef{}, payd.Errorf(payd.ErrUpstreamUnavailable, "connection refused")
	}
	return n.blocks[len(n.blocks)-1].BlockRef, nil
}

func (n *memNode) BlockAt(_ context.Context, height int64, w payd.Watched) (payd.Block, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.down || height < 1 || height > int64(len(n.blocks)) {
		return payd.Block{}, payd.Errorf(payd.ErrUpstreamUnavailable, "no block %d", height)
	}
	if height > int64(len(n.blocks)-n.lag) {
		return payd.Block{}, payd.Errorf(payd.ErrNotFound, "no block %d yet", height)
	}
	b := n.blocks[height-1]
	var ts []payd.Transfer
	for _, t := range b.Transfers {
		if w.Has(t.To) {
			ts = append(ts, t)
		}
	}
	b.Transfers = ts
	return b, nil
}

func (n *memNode) Pending(_ context.Context, w payd.Watched, unconfirmed []string, _ int64) (payd.Pending, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.down {
		return payd.Pending{}, errors.New("down")
	}
	p := payd.Pending{Alive: map[string]bool{}}
	for _, t := range n.mempool {
		if w.Has(t.To) {
			p.Transfers = append(p.Transfers, t)
		}
	}
	for _, tx := range unconfirmed {
		for _, b := range n.blocks {
			if slices.ContainsFunc(b.Transfers, func(t payd.Transfer) bool { return t.TxHash == tx }) {
				p.Alive[tx] = true
			}
		}
	}
	return p, nil
}

func (n *memNode) WatchKey(address string) (string, bool) { return address, true }

func (n *memNode) do(fn func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn()
}

// TestFollowerPaysThroughReplacementAndReorg follows a chain in memory
// through a payment replaced in the mempool, mined, orphaned by a reorg,
// mined again and confirmed: the payment succeeds once, with one entry
// per step, and the follower resumes after a restart and survives its
// node being down.
func TestFollowerPaysThroughReplacementAndReorg(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := newMemNode()
		log := storetest.Logger(t)
		f := NewFollower(db, node, clk, log, FollowOptions{Lease: 10 * time.Second, DropAfter: time.Second})
		w := NewWatcher(db, f.Network(), clk, log, Options{})
		p := openCheckout(t, db, clk.Now(), "0xpay")
		// A step reads the node twice, DropAfter apart, so what it forgot
		// is dropped, then watches.
		step := func(want ...string) {
			t.Helper()
			must(t, f.RunOnce(ctx))
			clk.Advance(time.Second)
			must(t, f.RunOnce(ctx))
			must(t, w.RunOnce(ctx))
			got, err := db.PaymentByID(ctx, p.BusinessID, p.ID)
			must(t, err)
			var types []string
			for _, e := range got.Events[2:] {
				types = append(types, e.Type)
			}
			if !slices.Equal(types, want) {
				t.Fatalf("events after created, method_selected: %v, want %v", types, want)
			}
		}
		pay := func(tx string) payd.Transfer {
			return payd.Transfer{TxHash: tx, From: "0xcustomer", To: "0xpay", Amount: money.NewCoinAmount(money.USDC, 25_000_000)}
		}
		node.do(func() { node.mempool = []payd.Transfer{pay("0xt1")} })
		step("detected")
		node.do(func() { node.mempool = []payd.Transfer{pay("0xt2")} }) // replaced (RBF)
		must(t, f.RunOnce(ctx))
		if txs, _ := db.UnconfirmedTxs(ctx, money.Polygon); !slices.Contains(txs, "0xt1") {
			t.Fatalf("a transaction missing for one read only was dropped: %v", txs)
		}
		step("detected", "dropped", "detected")
		node.do(node.mine)
		step("detected", "dropped", "detected", "confirmation")
		node.do(func() { node.reorg(1); node.mempool = nil; node.mine(); node.mine() }) // orphaned, and not mined again
		step("detected", "dropped", "detected", "confirmation", "dropped")
		if txs, _ := db.UnconfirmedTxs(ctx, money.Polygon); len(txs) != 0 {
			t.Fatalf("an orphaned transaction the node no longer knows is kept: %v", txs)
		}
		// Mined on another branch after all: detected again, and its first
		// confirmation, told already, is not told twice.
		node.do(func() { node.reorg(2); node.mempool = []payd.Transfer{pay("0xt2")}; node.mine() })
		step("detected", "dropped", "detected", "confirmation", "dropped", "detected")
		node.do(node.mine)
		step("detected", "dropped", "detected", "confirmation", "dropped", "detected", "confirmation", "succeeded")

		// A restart (a new follower, after the lease lapsed) resumes from
		// the last processed block and catches up, batch by batch.
		clk.Advance(11 * time.Second)
		f2 := NewFollower(db, node, clk, log, FollowOptions{Lease: 10 * time.Second, Batch: 100})
		w2 := NewWatcher(db, f2.Network(), clk, log, Options{})
		node.do(func() {
			for range 150 {
				node.mine()
			}
		})
		must(t, f2.RunOnce(ctx))
		if !f2.behind {
			t.Fatal("a follower 150 blocks behind caught up in one batch of 100")
		}
		must(t, f2.RunOnce(ctx))
		must(t, w2.RunOnce(ctx))
		head, err := db.ChainHead(ctx, money.Polygon)
		must(t, err)
		tip, _ := node.Tip(ctx)
		if head.BlockRef != tip || f2.behind {
			t.Fatalf("head %+v, tip %+v", head.BlockRef, tip)
		}
		got, err := db.PaymentByID(ctx, p.BusinessID, p.ID)
		must(t, err)
		if got.Status != payd.PaymentSucceeded || got.Events[len(got.Events)-1].Type != payd.EventSucceeded {
			t.Fatalf("payment %s, events %+v", got.Status, got.Events)
		}

		// The node goes down: the status says so, new checkouts are
		// refused, and the follower backs off.
		node.do(func() { node.down = true })
		if err := f2.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("RunOnce with the node down = %v", err)
		}
		if _, err := f2.Network().FeeEstimateUSD(ctx, money.USDC); payd.ErrorCode(err) != payd.ErrTemporarilyUnavailable {
			t.Fatalf("FeeEstimateUSD with the node down = %v", err)
		}
		reads := node.reads
		must(t, f2.RunOnce(ctx))
		if node.reads != reads {
			t.Fatal("the follower read a failing node again before its backoff")
		}
		statuses, err := db.ChainStatuses(ctx)
		must(t, err)
		if len(statuses) != 1 || statuses[0].Error == "" || statuses[0].FailingSince == nil || statuses[0].Chain != "memory" {
			t.Fatalf("status while down = %+v", statuses)
		}
		node.do(func() { node.down = false; node.mine() })
		clk.Advance(time.Minute)
		must(t, f2.RunOnce(ctx))
		if _, err := f2.Network().FeeEstimateUSD(ctx, money.USDC); err != nil {
			t.Fatalf("FeeEstimateUSD once the node is back = %v", err)
		}
		statuses, _ = db.ChainStatuses(ctx)
		if statuses[0].Error != "" || statuses[0].Head.Height != tip.Height+1 || statuses[0].Lag() != 0 {
			t.Fatalf("status once back = %+v", statuses[0])
		}
	})
}

// TestFollowerRefusesOtherChain: a node on another chain than the stored
// blocks' is refused, and the stored chain is left as it was.
func TestFollowerRefusesOtherChain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := newMemNode()
		log := storetest.Logger(t)
		f := NewFollower(db, node, clk, log, FollowOptions{Lease: 10 * time.Second})
		must(t, f.RunOnce(ctx))
		node.do(func() {
			for range 5 {
				node.mine()
			}
		})
		must(t, f.RunOnce(ctx))
		head, err := db.ChainHead(ctx, money.Polygon)
		must(t, err)
		f.Stop()
		other := &memNode{chain: "another"}
		other.mine()
		g := NewFollower(db, other, clk, log, FollowOptions{Lease: 10 * time.Second})
		for range 2 { // refused again after its backoff: the refusal did not store its chain
			if err := g.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrConflict {
				t.Fatalf("RunOnce on a node of another chain = %v", err)
			}
			clk.Advance(time.Minute)
		}
		if again, _ := db.ChainHead(ctx, money.Polygon); again.BlockRef != head.BlockRef {
			t.Fatalf("a node of another chain moved the head %+v to %+v", head.BlockRef, again.BlockRef)
		}
	})
}

// TestExpirerHoldsQuotesWhileTheChainIsUnseen: while a followed network's
// node cannot be read, its quotes do not end; a payment sent meanwhile is
// seen once the node is back and pays on time, and a quote with nothing
// sent ends only then.
func TestExpirerHoldsQuotesWhileTheChainIsUnseen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := newMemNode()
		log := storetest.Logger(t)
		f := NewFollower(db, node, clk, log, FollowOptions{Lease: 10 * time.Minute})
		w := NewWatcher(db, f.Network(), clk, log, Options{Lease: 10 * time.Minute})
		e := NewExpirer(db, clk, log, Options{Followed: []money.Network{money.Polygon}})
		paid := openCheckout(t, db, clk.Now(), "0xpaid")
		unpaid := openCheckout(t, db, clk.Now(), "0xunpaid")
		must(t, f.RunOnce(ctx))
		node.do(func() { node.down = true })
		if err := f.RunOnce(ctx); err == nil {
			t.Fatal("RunOnce on a node that is down succeeded")
		}
		// Sent while payd cannot see the chain; the quote runs out.
		node.do(func() {
			node.mempool = []payd.Transfer{{TxHash: "0xt", From: "0xc", To: "0xpaid",
				Amount: money.NewCoinAmount(money.USDC, 25_000_000)}}
			node.mine()
		})
		clk.Advance(20 * time.Minute)
		must(t, e.RunOnce(ctx))
		for _, p := range []*payd.Payment{paid, unpaid} {
			c, err := db.CheckoutByID(ctx, p.CheckoutID)
			must(t, err)
			if c.Status != payd.CheckoutOpen {
				t.Fatalf("checkout %s ended while its chain was unseen: %s", c.ID, c.Status)
			}
		}
		node.do(func() { node.down = false; node.mine() })
		must(t, f.RunOnce(ctx))
		must(t, w.RunOnce(ctx))
		must(t, e.RunOnce(ctx))
		got, err := db.PaymentByID(ctx, paid.BusinessID, paid.ID)
		must(t, err)
		if got.Status != payd.PaymentSucceeded {
			t.Fatalf("the payment sent during the outage: %s, events %+v", got.Status, got.Events)
		}
		c, err := db.CheckoutByID(ctx, unpaid.CheckoutID)
		must(t, err)
		if c.Status != payd.CheckoutExpired {
			t.Fatalf("the unpaid checkout once the chain is seen again: %s", c.Status)
		}
	})
}

// TestExpirerHoldsAtMostMaxHold: a node down for longer than MaxHold
// past a quote's end no longer keeps the quote payable.
func TestExpirerHoldsAtMostMaxHold(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := newMemNode()
		f := NewFollower(db, node, clk, storetest.Logger(t), FollowOptions{})
		e := NewExpirer(db, clk, storetest.Logger(t), Options{Followed: []money.Network{money.Polygon}})
		p := openCheckout(t, db, clk.Now(), "0xheld")
		must(t, f.RunOnce(ctx))
		node.do(func() { node.down = true })
		_ = f.RunOnce(ctx)
		clk.Advance(15*time.Minute + MaxHold - time.Second)
		must(t, e.RunOnce(ctx))
		if c, _ := db.CheckoutByID(ctx, p.CheckoutID); c.Status != payd.CheckoutOpen {
			t.Fatalf("within MaxHold: %s", c.Status)
		}
		clk.Advance(2 * time.Second)
		must(t, e.RunOnce(ctx))
		if c, _ := db.CheckoutByID(ctx, p.CheckoutID); c.Status != payd.CheckoutExpired {
			t.Fatalf("past MaxHold: %s", c.Status)
		}
	})
}

// TestFollowerChainBlockNotYet: a node whose Tip names a block its
// BlockAt does not have yet (a provider's backend behind another) is
// read again at the next run, without failing the network's status or
// backing off; one that keeps doing so for staleAfter fails.
func TestFollowerChainBlockNotYet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		node := newMemNode()
		f := NewFollower(db, node, clk, storetest.Logger(t), FollowOptions{Lease: time.Hour})
		must(t, f.RunOnce(ctx))
		node.do(func() {
			node.mine()
			node.mine()
			node.lag = 1
		})
		for range 2 {
			must(t, f.RunOnce(ctx)) // reads block 2, not 3, and does not fail
			must(t, f.Healthy(ctx))
		}
		head, err := db.ChainHead(ctx, money.Polygon)
		must(t, err)
		if head.Height != 2 {
			t.Fatalf("head %d with block 3 not there yet", head.Height)
		}
		if f.again() != nil {
			t.Fatal("the follower runs again at once while the block is not there: it would poll the node without pause")
		}
		clk.Advance(staleAfter)
		if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("RunOnce after staleAfter without the block = %v", err)
		}
		if f.Healthy(ctx) == nil {
			t.Fatal("a node that keeps naming a block it lacks is healthy")
		}
		node.do(func() { node.lag = 0 })
		clk.Advance(time.Minute)
		must(t, f.RunOnce(ctx))
		must(t, f.Healthy(ctx))
		if head, err := db.ChainHead(ctx, money.Polygon); err != nil || head.Height != 3 {
			t.Fatalf("head %d, %v once the block is there", head.Height, err)
		}
	})
}
