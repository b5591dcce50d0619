package watch

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"maps"
	"sync"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
	"payd/money"
)

// FollowOptions tune a Follower; zero values take the defaults.
type FollowOptions struct {
	// Interval is how often the node's tip is read.
	Interval time.Duration
	// Lease is how long one replica keeps following the network before
	// another may take over.
	Lease time.Duration
	// Batch is how many blocks one run reads at most; a follower behind
	// runs again at once.
	Batch int
	// Rebuild is how often the watched addresses are read again whole,
	// dropping those no longer watched; between rebuilds only the
	// checkouts opened since the last read are added.
	Rebuild time.Duration
	// Slack is how far back each read of new checkouts reaches, for those
	// that committed after a later one did.
	Slack time.Duration
	// Keep is how many processed blocks are kept to walk back through in
	// a reorg; deeper ones are pruned.
	Keep int64
	// MaxBackoff bounds the wait between reads of a node that fails.
	MaxBackoff time.Duration
	// DropAfter is how long an unconfirmed transaction must stay unknown
	// to the node before it is taken as gone: a node reorganising puts the
	// orphaned blocks' transactions back in its pool a moment after it
	// switched branches, and a restarted node reloads (bitcoind) or
	// relearns from its peers (btcd) its mempool over minutes.
	DropAfter time.Duration
}

func (o FollowOptions) withDefaults() FollowOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 15 * time.Second
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Rebuild <= 0 {
		o.Rebuild = 10 * time.Minute
	}
	if o.Slack <= 0 {
		o.Slack = time.Minute
	}
	if o.Keep <= 0 {
		o.Keep = 10_000
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.DropAfter <= 0 {
		o.DropAfter = 10 * time.Minute
	}
	return o
}

// statusEvery is how often the status is stored while nothing changes,
// so that a status older than staleAfter means no replica follows.
const (
	statusEvery = 10 * time.Second
	staleAfter  = 45 * time.Second
)

// Follower follows one real network's chain (DESIGN §4, docs/networks.md):
// it reads every new block once, and the mempool, and keeps the
// transfers into watched deposit addresses, matched in memory against the
// set of watched addresses. It stores each processed block's hash, so a
// block that does not connect is found and the follower walks back to the
// fork point, taking the orphaned blocks' transfers back to unconfirmed,
// and it resumes after a restart from the last processed block. One
// replica at a time follows a network, holding the lease "follow:NETWORK".
// The watcher of the network reads what it stored through Network.
type Follower struct {
	store  payd.Store
	node   payd.Node
	clock  clock.Clock
	log    *slog.Logger
	opts   FollowOptions
	holder string
	runner loop.Runner

	// Only the loop's goroutine (or RunOnce's caller) uses these.
	watched     keySet
	refreshedAt time.Time
	rebuiltAt   time.Time
	resumed     bool
	leasedAt    time.Time // when this run last took or renewed the lease
	checked     bool      // the node's chain was compared with the stored one
	retryAt     time.Time
	backoff     time.Duration
	missing     map[string]time.Time // unconfirmed txs the node did not know, since
	status      payd.ChainStatus     // this run's, filled in as it goes
	saved       payd.ChainStatus     // the last stored
	savedAt     time.Time
	behind      bool
	notYetSince time.Time // since when BlockAt has had no block at a height below the tip

	mu      sync.Mutex
	changed chan struct{}
}

// keySet is the watched addresses by the node's WatchKey.
type keySet map[string]struct{}

// Has reports whether key is watched.
func (s keySet) Has(key string) bool {
	_, ok := s[key]
	return ok
}

// Keys lists the watched keys.
func (s keySet) Keys() iter.Seq[string] { return maps.Keys(s) }

// NewFollower returns the follower of node.
func NewFollower(st payd.Store, node payd.Node, clk clock.Clock, log *slog.Logger, o FollowOptions) *Follower {
	return &Follower{store: st, node: node, clock: clk, opts: o.withDefaults(), holder: payd.NewID("fol_"),
		log:     log.With(slog.String("network", string(node.Name()))),
		changed: make(chan struct{})}
}

// Network is the network as the API and the watcher use it: the node's
// rules, and the transfers the follower stored.
func (f *Follower) Network() payd.Network { return &Chain{Node: f.node, f: f} }

// Start follows the chain in the background until Stop or ctx ends.
func (f *Follower) Start(ctx context.Context) {
	f.runner.Start(ctx, func(ctx context.Context) {
		every(ctx, f.clock, f.opts.Interval, f.again, f.log, func(ctx context.Context, _ bool) error {
			// A node that cannot be read is logged once, when it starts
			// failing (record), and shows in the network's status:
			// logging each retry as an error would only repeat it.
			if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
				return err
			}
			return nil
		})
	})
}

// Stop stops the follower, waits for a run in progress to end and gives
// its lease up, so a restarted replica follows at once.
func (f *Follower) Stop() {
	f.runner.Stop()
	release(f.store, f.log, "follow:"+string(f.node.Name()), f.holder)
}

// again wakes the loop at once while the follower is behind the tip and
// may read the node (not while it backs off from a failure).
func (f *Follower) again() <-chan struct{} {
	if f.behind && !f.clock.Now().Before(f.retryAt) {
		c := make(chan struct{})
		close(c)
		return c
	}
	return nil
}

// Changed returns a channel closed when the follower next stores
// something, so the network's watcher runs at once.
func (f *Follower) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *Follower) notify() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.changed)
	f.changed = make(chan struct{})
}

// RunOnce reads the node once: the new blocks (up to Batch), then, once
// caught up, the mempool. It does nothing while another replica holds the
// lease, and waits out its backoff after the node failed.
func (f *Follower) RunOnce(ctx context.Context) error {
	now := f.clock.Now()
	held, err := f.lease(ctx, now)
	if err != nil || !held {
		// Another replica may move the chain on meanwhile: what this one
		// noted of it is stale, and it is not behind for this replica.
		f.resumed, f.missing, f.behind = false, nil, false
		return err
	}
	if now.Before(f.retryAt) {
		return nil
	}
	err = f.follow(ctx, now)
	if err != nil {
		f.missing, f.behind = nil, false
	}
	f.record(ctx, now, err)
	return err
}

// renew extends the lease while a long run (a catch-up over a slow node)
// goes on, so no other replica starts following the same chain; false
// when it was lost, which ends the run.
func (f *Follower) renew(ctx context.Context) (bool, error) {
	now := f.clock.Now()
	if now.Sub(f.leasedAt) < f.opts.Lease/3 {
		return true, nil
	}
	return f.lease(ctx, now)
}

// lease takes or extends the lease "follow:NETWORK" from now on.
func (f *Follower) lease(ctx context.Context, now time.Time) (bool, error) {
	held, err := f.store.AcquireLease(ctx, "follow:"+string(f.node.Name()), f.holder, now, now.Add(f.opts.Lease))
	if held {
		f.leasedAt = now
	}
	return held, err
}

// checkChain refuses to follow a node on another chain than the one the
// stored blocks come from (a mainnet database pointed at a testnet node):
// its blocks would unwind everything processed.
func (f *Follower) checkChain(ctx context.Context) error {
	if f.checked {
		return nil
	}
	s, ok, err := chainStatus(ctx, f.store, f.node.Name())
	if err != nil {
		return err
	}
	if ok && s.Chain != "" && s.Chain != f.node.Chain() {
		return payd.Errorf(payd.ErrConflict, "the %s node follows %s, but this database followed %s: "+
			"point --chain %s at a node of %s, or use another database", s.Network, f.node.Chain(), s.Chain,
			s.Network, s.Chain)
	}
	f.checked = true
	return nil
}

// record notes the run's outcome in the status, stored when it changed
// or every statusEvery, and sets the backoff after a failure.
func (f *Follower) record(ctx context.Context, now time.Time, err error) {
	s := f.status
	// The chain is written only once the node's was compared with the
	// stored one: a refused node's (or an unconnected one's "") must not
	// replace it, or the next run would follow it.
	s.Network, s.Chain, s.CheckedAt = f.node.Name(), "", now
	if f.checked {
		s.Chain = f.node.Chain()
	}
	if err == nil {
		s.Error, s.FailingSince, f.backoff, f.retryAt = "", nil, 0, time.Time{}
	} else {
		s.Error = err.Error()
		if s.FailingSince == nil {
			s.FailingSince = &now
			f.log.Warn("the node cannot be read: new checkouts on this network are refused until it can",
				slog.Any("error", err))
		}
		f.backoff = min(max(2*f.backoff, f.opts.Interval), f.opts.MaxBackoff)
		f.retryAt = now.Add(f.backoff)
	}
	if s.Error == "" && f.saved.Error != "" {
		f.log.Info("the node can be read again", slog.Int64("height", s.Head.Height))
	}
	f.status = s
	same := s.Tip == f.saved.Tip && s.Head == f.saved.Head && s.Error == f.saved.Error
	if same && now.Sub(f.savedAt) < statusEvery {
		return
	}
	if serr := f.store.SaveChainStatus(ctx, s); serr != nil {
		f.log.Error("storing the network's status failed", slog.Any("error", serr))
		return
	}
	f.saved, f.savedAt = s, now
}

// follow is one run: the watched set brought up to date, the chain
// followed to the tip, then the mempool read.
func (f *Follower) follow(ctx context.Context, now time.Time) error {
	tip, err := f.node.Tip(ctx)
	if waiting(err) {
		return f.notYet(err, now)
	}
	if err != nil {
		return err
	}
	if err := f.checkChain(ctx); err != nil {
		return err
	}
	if err := f.refresh(ctx, now); err != nil {
		return err
	}
	f.status.Tip = tip
	if sc, ok := f.node.(payd.Scanner); ok {
		return f.scan(ctx, sc, tip, now)
	}
	head, err := f.advance(ctx, tip, now)
	f.status.Head = head.BlockRef
	if ny := (notYetError{}); errors.As(err, &ny) {
		return f.notYet(ny.err, now)
	}
	f.notYetSince = time.Time{}
	if err != nil {
		return err
	}
	f.behind = head.Hash != tip.Hash
	if f.behind {
		f.missing = nil // pending does not run: its grace starts again
		return nil
	}
	return f.pending(ctx, tip, now)
}

// waiting reports whether err says the node is to be asked again later
// rather than failing (a rate limit being waited out): an error in its
// chain with a NotYet method that answers true (payd.Scanner).
func waiting(err error) bool {
	var ny interface{ NotYet() bool }
	return errors.As(err, &ny) && ny.NotYet()
}

// notYetError is BlockAt's not_found for a block at or below the tip the
// node named (advance).
type notYetError struct{ err error }

func (e notYetError) Error() string { return e.err.Error() }
func (e notYetError) Unwrap() error { return e.err }

// notYet ends a run whose node named a tip but had no block at a height
// below it: a provider's load balancer sent the two reads to backends a
// block or two apart (a Scanner's not_found is the same), or the node's
// rate limit is being waited out. The follower reads again at its next run, without
// backing off or failing the status (which would refuse checkouts for a
// lag of seconds), and without reading the mempool. A node that keeps
// naming a tip it has no block for (staleAfter) is failing: err is
// returned as upstream_unavailable then.
func (f *Follower) notYet(err error, now time.Time) error {
	f.behind, f.missing = false, nil
	if f.notYetSince.IsZero() {
		f.notYetSince = now
	}
	if now.Sub(f.notYetSince) < staleAfter {
		f.log.Debug("the node cannot answer yet up to the tip it named (no block there yet, or its rate limit); "+
			"reading it again next run", slog.Any("error", err))
		return nil
	}
	return payd.Errorf(payd.ErrUpstreamUnavailable, "for %s the node has named a tip but had no block up to it: %v",
		now.Sub(f.notYetSince).Round(time.Second), err)
}

// refresh brings the watched set up to date: whole every Rebuild (and at
// the first run), else with the checkouts opened since the last read.
func (f *Follower) refresh(ctx context.Context, now time.Time) error {
	full := f.watched == nil || now.Sub(f.rebuiltAt) >= f.opts.Rebuild
	var since time.Time
	if !full {
		since = f.refreshedAt.Add(-f.opts.Slack)
	}
	deposits, err := f.store.WatchedDeposits(ctx, f.node.Name(), now, since)
	if err != nil {
		return err
	}
	key := func(d payd.Deposit) (string, bool) { return f.node.WatchKey(d.Address) }
	if sc, ok := f.node.(payd.Scanner); ok {
		key = sc.DepositKey
	}
	set := f.watched
	if full {
		// Let the old set go before the new one is built: at a million
		// watched addresses each is 80 MB (docs/benchmarks.md).
		f.watched = nil
		set = make(keySet, len(deposits))
	}
	for _, d := range deposits {
		if k, ok := key(d); ok {
			set[k] = struct{}{}
		}
	}
	f.watched, f.refreshedAt = set, now
	if full {
		f.rebuiltAt = now
	}
	return nil
}

// advance processes the node's blocks after the last one processed, up
// to Batch of them, and returns the new head. A block that does not
// connect to the head means the head was orphaned: it is unwound and the
// follower walks back until the chains meet. With nothing processed yet
// it starts at the tip: no deposit address existed before.
func (f *Follower) advance(ctx context.Context, tip payd.BlockRef, now time.Time) (payd.Block, error) {
	name := f.node.Name()
	head, fresh, err := f.start(ctx, tip, now)
	if fresh || err != nil {
		return head, err
	}
	changed := false
	defer func() {
		if changed {
			f.notify()
		}
	}()
	for i := 0; i < f.opts.Batch && head.Hash != tip.Hash; i++ {
		if held, err := f.renew(ctx); err != nil || !held {
			f.resumed, f.behind = false, false
			return head, err
		}
		if head.Height >= tip.Height {
			// The node's best chain is no longer than what was processed
			// and ends elsewhere: the head was orphaned. (A node merely
			// behind, syncing again or a provider's lagging backend, looks
			// the same from here; unwinding then costs only confirmations
			// shown lower until it catches up, where trusting a shorter
			// branch could count an orphaned transfer.)
			head, err = f.unwind(ctx, head, now)
			changed = true
			if err != nil {
				return head, err
			}
			continue
		}
		next, err := f.node.BlockAt(ctx, head.Height+1, f.watched)
		if payd.IsNotFound(err) {
			return head, notYetError{err}
		}
		if err != nil {
			return head, err
		}
		if next.Parent == head.Hash {
			if err := f.store.AddChainBlock(ctx, name, next, now); err != nil {
				return head, err
			}
			head, changed = payd.Block{BlockRef: next.BlockRef, Parent: next.Parent}, true
			if head.Height%1000 == 0 {
				if err := f.store.PruneChainBlocks(ctx, name, head.Height-f.opts.Keep); err != nil {
					return head, err
				}
			}
			continue
		}
		cur, err := f.node.BlockAt(ctx, head.Height, f.watched)
		if err != nil {
			return head, err
		}
		if cur.Hash == head.Hash {
			// The node switched branches between the two reads: read
			// the tip again and go on from the head.
			if tip, err = f.node.Tip(ctx); err != nil {
				return head, err
			}
			f.status.Tip = tip
			continue
		}
		head, err = f.unwind(ctx, head, now)
		changed = true
		if err != nil {
			return head, err
		}
	}
	return head, nil
}

// unwind forgets the orphaned head and returns the block before it. When
// that block was pruned already (a reorg deeper than Keep), the node's
// block at that height becomes the new base.
func (f *Follower) unwind(ctx context.Context, head payd.Block, now time.Time) (payd.Block, error) {
	name := f.node.Name()
	f.log.Warn("reorg: a processed block left the best chain; its transfers wait again",
		slog.Int64("height", head.Height), slog.String("hash", head.Hash))
	if err := f.store.UnwindChainBlock(ctx, name, head.BlockRef); err != nil {
		return head, err
	}
	prev, err := f.store.ChainBlock(ctx, name, head.Height-1)
	if !payd.IsNotFound(err) {
		return prev, err
	}
	b, err := f.node.BlockAt(ctx, head.Height-1, f.watched)
	if err != nil {
		return payd.Block{}, err
	}
	if err := f.store.AddChainBlock(ctx, name, b, now); err != nil {
		return payd.Block{}, err
	}
	return payd.Block{BlockRef: b.BlockRef, Parent: b.Parent}, nil
}

// pending reads the mempool once the follower is at the tip: new waiting
// transfers are stored, and the unconfirmed transactions the node has not
// known for DropAfter (replaced, double-spent, orphaned and dropped)
// deleted. The deletion is skipped when the tip moved meanwhile: the
// transaction may have been mined into a block not processed yet.
func (f *Follower) pending(ctx context.Context, tip payd.BlockRef, now time.Time) error {
	unconfirmed, err := f.store.UnconfirmedTxs(ctx, f.node.Name())
	if err != nil {
		return err
	}
	p, err := f.node.Pending(ctx, f.watched, unconfirmed, tip.Height)
	if err != nil {
		return err
	}
	return f.keepPending(ctx, unconfirmed, p, now, func(ctx context.Context) (bool, error) {
		again, err := f.node.Tip(ctx)
		if err != nil {
			return false, err
		}
		if again.Hash != tip.Hash {
			f.behind = true
			return false, nil
		}
		return true, nil
	})
}

// keepPending stores what a read of the node found waiting, and deletes
// the unconfirmed transactions it has not known for DropAfter once
// settled says nothing can have confirmed them meanwhile.
func (f *Follower) keepPending(ctx context.Context, unconfirmed []string, p payd.Pending, now time.Time,
	settled func(context.Context) (bool, error)) error {
	name := f.node.Name()
	stored := make(map[string]bool, len(unconfirmed))
	for _, tx := range unconfirmed {
		stored[tx] = true
	}
	alive := map[string]bool{}
	var fresh []payd.Transfer
	for _, t := range p.Transfers {
		alive[t.TxHash] = true
		if !stored[t.TxHash] {
			fresh = append(fresh, t)
		}
	}
	var dead []string
	missing := map[string]time.Time{}
	for _, tx := range unconfirmed {
		if alive[tx] || p.Alive[tx] {
			continue
		}
		since, ok := f.missing[tx]
		if !ok {
			since = now
		}
		if now.Sub(since) >= f.opts.DropAfter {
			dead = append(dead, tx)
		} else {
			missing[tx] = since
		}
	}
	f.missing = missing
	if len(fresh) > 0 {
		if err := f.store.AddPendingTransfers(ctx, name, fresh, now); err != nil {
			return err
		}
	}
	if len(dead) > 0 {
		ok, err := settled(ctx)
		if err != nil {
			return err
		}
		if ok {
			f.log.Info("waiting transactions left the mempool unmined (replaced or double-spent)",
				slog.Any("tx_hashes", dead))
			if err := f.store.DropUnconfirmed(ctx, name, dead); err != nil {
				return err
			}
		}
	}
	if len(fresh) > 0 || len(dead) > 0 {
		f.notify()
	}
	return nil
}

// start returns the stored head the run goes on from. With nothing stored
// (the first run on a network) it stores the node's block at the tip and
// returns it, fresh: no deposit address existed before, so nothing below
// it is read. A tip the node has no block for yet is notYetError.
func (f *Follower) start(ctx context.Context, tip payd.BlockRef, now time.Time) (head payd.Block, fresh bool, err error) {
	name := f.node.Name()
	head, err = f.store.ChainHead(ctx, name)
	if payd.IsNotFound(err) {
		b, err := f.node.BlockAt(ctx, tip.Height, f.watched)
		if payd.IsNotFound(err) {
			return payd.Block{}, false, notYetError{err}
		}
		if err != nil {
			return payd.Block{}, false, err
		}
		if err := f.store.AddChainBlock(ctx, name, b, now); err != nil {
			return payd.Block{}, false, err
		}
		f.log.Info("following the chain from its tip", slog.String("chain", f.node.Chain()), slog.Int64("height", b.Height),
			slog.String("hash", b.Hash))
		f.resumed = true
		f.notify()
		return payd.Block{BlockRef: b.BlockRef, Parent: b.Parent}, true, nil
	}
	if err != nil {
		return payd.Block{}, false, err
	}
	if !f.resumed {
		f.log.Info("following the chain", slog.String("chain", f.node.Chain()), slog.Int64("from_height", head.Height+1),
			slog.Int64("tip", tip.Height))
		f.resumed = true
	}
	return head, false, nil
}

// scan is a run on a Scanner's network (solana): one Scan from the stored
// head to the tip stores the final blocks that pay watched deposits and
// the transfers seen but not final yet. The tip is final, so nothing is
// ever unwound, and a node behind what was stored (a provider's lagging
// backend) only has nothing new to say. With nothing stored it starts at
// the tip, as advance does.
func (f *Follower) scan(ctx context.Context, sc payd.Scanner, tip payd.BlockRef, now time.Time) error {
	name := f.node.Name()
	head, _, err := f.start(ctx, tip, now)
	if ny := (notYetError{}); errors.As(err, &ny) {
		return f.notYet(ny.err, now)
	}
	if err != nil {
		return err
	}
	f.status.Head = head.BlockRef
	if tip.Height < head.Height {
		tip = head.BlockRef
	}
	unconfirmed, err := f.store.UnconfirmedTxs(ctx, name)
	if err != nil {
		return err
	}
	blocks, p, err := sc.Scan(ctx, head.BlockRef, tip, f.watched, unconfirmed)
	if payd.IsNotFound(err) || waiting(err) {
		// A transaction listed at or under the tip the node does not
		// return yet (a lagging backend), or the node's rate limit being
		// waited out: as BlockAt's not_found in advance.
		return f.notYet(err, now)
	}
	f.notYetSince = time.Time{}
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if b.Height <= head.Height {
			continue
		}
		if held, err := f.renew(ctx); err != nil || !held {
			f.resumed = false
			return err
		}
		if err := f.store.AddChainBlock(ctx, name, b, now); err != nil {
			return err
		}
		// Blocks of a Scanner are far apart (only those that pay a
		// deposit, and the tip): prune by the step, not by a multiple.
		if b.Height/1000 != head.Height/1000 {
			if err := f.store.PruneChainBlocks(ctx, name, b.Height-f.opts.Keep); err != nil {
				return err
			}
		}
		head = payd.Block{BlockRef: b.BlockRef, Parent: b.Parent}
		f.notify()
	}
	f.status.Head = head.BlockRef
	// A scan may be long (a request per watched account): the lease must
	// still be held before what it found waiting is written and dropped.
	if held, err := f.renew(ctx); err != nil || !held {
		f.resumed = false
		return err
	}
	// A transaction the node stopped knowing was not made final: Alive
	// names those in the blocks just stored, and a final one never leaves.
	return f.keepPending(ctx, unconfirmed, p, now, func(context.Context) (bool, error) { return true, nil })
}

// Chain is a followed network as payd.Network: the node's rules, with the
// transfers the follower stored, counted from the last processed block.
type Chain struct {
	payd.Node
	f *Follower
}

var _ payd.Network = (*Chain)(nil)

// Transfers reports the stored transfers into the deposits, with their
// confirmations: the processed head's height minus the block's, plus one
// (plus a Scanner's FinalDepth); 0 while they wait. It reads the store, never the node, so any replica
// answers and a node that is down leaves the last known state.
func (c *Chain) Transfers(ctx context.Context, deposits []payd.Deposit) ([]payd.Transfer, error) {
	name := c.Node.Name()
	head, err := c.f.store.ChainHead(ctx, name)
	if err != nil && !payd.IsNotFound(err) {
		return nil, err
	}
	rows, err := c.f.store.ChainTransfers(ctx, name, deposits)
	if err != nil {
		return nil, err
	}
	// A Scanner's blocks are final when stored: a transfer in one counts
	// the network's final depth, and one more per block since.
	first := int64(1)
	if sc, ok := c.Node.(payd.Scanner); ok {
		first = int64(sc.FinalDepth())
	}
	out := make([]payd.Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.Transfer
		if r.Height > 0 {
			out[i].Confirmations = int(max(0, head.Height-r.Height+first))
		}
	}
	return out, nil
}

// Changed returns a channel closed when the follower next stores
// something (in this process), so the watcher runs at once.
func (c *Chain) Changed() <-chan struct{} { return c.f.Changed() }

// Unseen reports whether payd cannot see the chain now (see unseen): the
// watcher then leaves the network's checkouts as they are, as the
// expirer does, rather than end a quote whose payment it cannot see.
func (c *Chain) Unseen(ctx context.Context) (bool, error) {
	s, ok, err := chainStatus(ctx, c.f.store, c.Node.Name())
	return err == nil && unseen(s, ok, c.f.clock.Now()), err
}

// FeeEstimateUSD is the node's estimate, but refuses new checkouts
// (temporarily_unavailable) while the network's node cannot be read or no
// replica has followed it lately: a customer must not be told to pay on
// a chain payd is not watching.
func (c *Chain) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if err := c.f.Healthy(ctx); err != nil {
		return 0, err
	}
	cents, err := c.Node.FeeEstimateUSD(ctx, a)
	if payd.ErrorCode(err) == payd.ErrUpstreamUnavailable {
		return 0, payd.Errorf(payd.ErrTemporarilyUnavailable, "%s cannot be used right now: its node does not answer",
			c.Node.Name())
	}
	return cents, err
}

// Healthy returns temporarily_unavailable unless the network's status,
// as the following replica stored it, says its node was read lately and
// without failing.
func (f *Follower) Healthy(ctx context.Context) error {
	s, ok, err := chainStatus(ctx, f.store, f.node.Name())
	if err != nil {
		return err
	}
	if why := unreadable(s, ok, f.clock.Now()); why != "" {
		return payd.Errorf(payd.ErrTemporarilyUnavailable, "%s cannot be used right now: %s", f.node.Name(), why)
	}
	return nil
}

// chainStatus reads network n's status; ok is false when it has none yet.
func chainStatus(ctx context.Context, st payd.ChainStore, n money.Network) (s payd.ChainStatus, ok bool, err error) {
	all, err := st.ChainStatuses(ctx)
	for _, s := range all {
		if s.Network == n {
			return s, true, err
		}
	}
	return payd.ChainStatus{}, false, err
}

// unreadable says why payd cannot read a followed network's node now,
// from its status (ok false when it has none): "" when it can. New
// checkouts on the network are refused meanwhile (Healthy).
func unreadable(s payd.ChainStatus, ok bool, now time.Time) string {
	switch {
	case !ok:
		return "its node was never read"
	case s.Error != "":
		return "its node cannot be read"
	case now.Sub(s.CheckedAt) > staleAfter:
		return "its node was last read " + s.CheckedAt.Format(time.RFC3339)
	}
	return ""
}

// unseen reports whether payd cannot see a followed network's chain now:
// its node is unreadable, or the follower is behind the node's tip. Its
// quotes are held meanwhile (Expirer, Chain.Unseen).
func unseen(s payd.ChainStatus, ok bool, now time.Time) bool {
	return unreadable(s, ok, now) != "" || s.Lag() > 0
}
