package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"payd"
	"payd/chain/bitcoin"
	"payd/chain/devnet"
	"payd/chain/evm"
	"payd/chain/solana"
	"payd/chain/tron"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/watch"
)

// pricer is where the adapters' fee estimates get coin prices: the latest
// exchange-rate snapshot.
type pricer interface {
	Latest(ctx context.Context) (*payd.ExchangeRates, error)
}

// openNodes connects to the node of each --chain, retrying with backoff
// for up to nodeWait each.
func openNodes(ctx context.Context, cfg *Config, getenv func(string) string, rates pricer, clk clock.Clock,
	log *slog.Logger) (map[money.Network]payd.Node, error) {
	specs, err := cfg.chains(getenv)
	if err != nil {
		return nil, err
	}
	tokens, err := cfg.tokens()
	if err != nil {
		return nil, err
	}
	explorers, err := cfg.explorers()
	if err != nil {
		return nil, err
	}
	price := func(ctx context.Context, a money.Asset) (int64, error) {
		x, err := rates.Latest(ctx)
		if err != nil {
			return 0, err
		}
		if c := x.CoinCents(a); c > 0 {
			return c, nil
		}
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no %s price in the exchange rates", a)
	}
	out := map[money.Network]payd.Node{}
	for _, s := range specs {
		open := func(ctx context.Context) (payd.Node, error) {
			switch s.network {
			case money.Bitcoin:
				return bitcoin.New(ctx, s.url, bitcoin.Options{Explorer: explorers[s.network], Clock: clk,
					Price: price})
			case money.Tron:
				return tron.New(ctx, s.url, tron.Options{Tokens: tokens[s.network], Explorer: explorers[s.network],
					Price: price, Clock: clk})
			case money.Solana:
				return solana.New(ctx, s.url, solana.Options{Tokens: tokens[s.network], Explorer: explorers[s.network],
					Price: price, Clock: clk, Log: log})
			default:
				return evm.New(ctx, s.network, s.url, evm.Options{Tokens: tokens[s.network],
					Explorer: explorers[s.network], Price: price, Clock: clk})
			}
		}
		node, err := retryOpen(ctx, clk, cfg.NodeWait, open)
		switch {
		case err == nil:
			log.Info("network follows a real node", slog.String("network", string(s.network)),
				slog.String("node", nodeAddress(s.url)), slog.String("chain", node.Chain()),
				slog.Any("assets", node.Assets()))
			out[s.network] = node
		case payd.ErrorCode(err) == payd.ErrUpstreamUnavailable:
			log.Error("the node does not answer: its network offers nothing until it does, the others go on",
				slog.String("network", string(s.network)), slog.String("node", nodeAddress(s.url)), slog.Any("error", err))
			out[s.network] = newLazyNode(s.network, open, log)
		default:
			return nil, fmt.Errorf("--chain %s: the node at %s: %w", s.network, nodeAddress(s.url), err)
		}
	}
	return out, nil
}

// lazyNode is a --chain node that did not answer when payd serve started.
// Until it does, its network takes no coin (Assets is empty, so nothing
// offers it) and everything that needs the chain answers
// temporarily_unavailable; the follower's reads of the tip connect it,
// with the follower's backoff, and from then on it is the real adapter.
type lazyNode struct {
	network money.Network
	open    func(context.Context) (payd.Node, error)
	log     *slog.Logger

	mu   sync.Mutex
	node payd.Node
}

var _ payd.Node = (*lazyNode)(nil)

// newLazyNode wraps a node of network that has not answered yet. A
// Scanner's network (solana) gets a lazyScanner, so the follower keeps
// scanning it once it answers rather than reading it block by block.
func newLazyNode(network money.Network, open func(context.Context) (payd.Node, error), log *slog.Logger) payd.Node {
	l := &lazyNode{network: network, open: open, log: log}
	if network == money.Solana {
		return &lazyScanner{lazyNode: l, finalDepth: solana.FinalConfirmations}
	}
	return l
}

// lazyScanner is a lazyNode of a Scanner's network: the follower scans it
// through Scan, which connects as Tip does.
type lazyScanner struct {
	*lazyNode
	finalDepth int
}

var _ payd.Scanner = (*lazyScanner)(nil)

// DepositKey is the adapter's once it answered; false before (the
// follower reads the tip, which connects, before it keys deposits).
func (l *lazyScanner) DepositKey(d payd.Deposit) (string, bool) {
	if sc, ok := l.connected().(payd.Scanner); ok {
		return sc.DepositKey(d)
	}
	return "", false
}

// FinalDepth is the network's, known before the node answers: the
// watcher counts stored transfers by it whether or not the node answers.
func (l *lazyScanner) FinalDepth() int { return l.finalDepth }

// Scan connects to the node if it has not answered yet, then is the
// adapter's Scan: until the node answers, a run fails as Tip does, and the
// follower backs off.
func (l *lazyScanner) Scan(ctx context.Context, head, tip payd.BlockRef, w payd.WatchedSet, unconfirmed []string) (
	[]payd.Block, payd.Pending, error) {
	n, err := l.connect(ctx)
	if err != nil {
		return nil, payd.Pending{}, err
	}
	sc, ok := n.(payd.Scanner)
	if !ok {
		return nil, payd.Pending{}, fmt.Errorf("the %s adapter is not a Scanner", l.network)
	}
	return sc.Scan(ctx, head, tip, w, unconfirmed)
}

// connected returns the adapter once the node answered, nil before.
func (l *lazyNode) connected() payd.Node {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.node
}

// connect returns the adapter, connecting first if it must. The dial runs
// outside the lock, so the API's calls never wait for a node that hangs;
// only the network's follower connects.
func (l *lazyNode) connect(ctx context.Context) (payd.Node, error) {
	if n := l.connected(); n != nil {
		return n, nil
	}
	node, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.node == nil {
		l.log.Info("the node answers now: its network is offered", slog.String("network", string(l.network)),
			slog.String("chain", node.Chain()), slog.Any("assets", node.Assets()))
		l.node = node
	}
	return l.node, nil
}

// unreached is the answer of everything that needs the chain before the
// node answered.
func (l *lazyNode) unreached() error {
	return payd.Errorf(payd.ErrTemporarilyUnavailable, "%s cannot be used right now: its node has not answered yet",
		l.network)
}

func (l *lazyNode) Name() money.Network { return l.network }

func (l *lazyNode) Chain() string {
	if n := l.connected(); n != nil {
		return n.Chain()
	}
	return ""
}

func (l *lazyNode) Assets() []money.Asset {
	if n := l.connected(); n != nil {
		return n.Assets()
	}
	return nil
}

func (l *lazyNode) Deposit(accountKey string, index uint32) (payd.Deposit, error) {
	if n := l.connected(); n != nil {
		return n.Deposit(accountKey, index)
	}
	return payd.Deposit{}, l.unreached()
}

func (l *lazyNode) ValidAddress(s string) error {
	if n := l.connected(); n != nil {
		return n.ValidAddress(s)
	}
	return l.unreached()
}

func (l *lazyNode) ValidTxHash(s string) error {
	if n := l.connected(); n != nil {
		return n.ValidTxHash(s)
	}
	return l.unreached()
}

func (l *lazyNode) PaymentURI(req payd.PaymentRequest) string {
	if n := l.connected(); n != nil {
		return n.PaymentURI(req)
	}
	return ""
}

func (l *lazyNode) ExplorerURL(txHash string) string {
	if n := l.connected(); n != nil {
		return n.ExplorerURL(txHash)
	}
	return ""
}

func (l *lazyNode) FeeEstimateUSD(ctx context.Context, a money.Asset) (int64, error) {
	if n := l.connected(); n != nil {
		return n.FeeEstimateUSD(ctx, a)
	}
	return 0, l.unreached()
}

func (l *lazyNode) Tip(ctx context.Context) (payd.BlockRef, error) {
	n, err := l.connect(ctx)
	if err != nil {
		return payd.BlockRef{}, err
	}
	return n.Tip(ctx)
}

func (l *lazyNode) BlockAt(ctx context.Context, height int64, w payd.Watched) (payd.Block, error) {
	n, err := l.connect(ctx)
	if err != nil {
		return payd.Block{}, err
	}
	return n.BlockAt(ctx, height, w)
}

func (l *lazyNode) Pending(ctx context.Context, w payd.Watched, unconfirmed []string, processed int64) (payd.Pending, error) {
	n, err := l.connect(ctx)
	if err != nil {
		return payd.Pending{}, err
	}
	return n.Pending(ctx, w, unconfirmed, processed)
}

func (l *lazyNode) WatchKey(address string) (string, bool) {
	if n := l.connected(); n != nil {
		return n.WatchKey(address)
	}
	return "", false
}

// retryOpen calls open until it succeeds or wait passed, waiting a second,
// then two, four… between tries.
func retryOpen(ctx context.Context, clk clock.Clock, wait time.Duration,
	open func(context.Context) (payd.Node, error)) (payd.Node, error) {
	deadline := clk.Now().Add(wait)
	for pause := time.Second; ; pause *= 2 {
		// Each try ends by the deadline too, so a host that never answers
		// cannot hold serve past wait.
		tctx, cancel := context.WithTimeout(ctx, max(deadline.Sub(clk.Now()), time.Second))
		node, err := open(tctx)
		cancel()
		if err == nil || payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || clk.Now().Add(pause).After(deadline) {
			return node, err
		}
		t := clk.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C():
		}
	}
}

// networks are the chain adapters checkouts can use: the followed real
// nodes, and with --dev every other network on the devnet.
func networks(dn *devnet.Devnet, followers map[money.Network]*watch.Follower) map[money.Network]payd.Network {
	out := map[money.Network]payd.Network{}
	for _, n := range money.Networks {
		switch {
		case followers[n] != nil:
			out[n] = followers[n].Network()
		case dn != nil:
			out[n] = dn.Network(n)
		}
	}
	return out
}

// newFollowers makes a follower per real node.
func newFollowers(db *store.DB, nodes map[money.Network]payd.Node, clk clock.Clock, log *slog.Logger,
	cfg *Config) map[money.Network]*watch.Follower {
	out := map[money.Network]*watch.Follower{}
	for n, node := range nodes {
		out[n] = watch.NewFollower(db, node, clk, log, watch.FollowOptions{Interval: followInterval(n, cfg.FollowInterval),
			DropAfter: cfg.DropAfter})
	}
	return out
}

// defaultFollowInterval is how often a node's tip is read unless
// --follow-interval says otherwise: every second, and on tron every
// block (tron.BlockInterval, 3 s), since TronGrid allows a key 100,000
// requests a day and a read a second would spend 86,400 of them on the
// tip alone.
const defaultFollowInterval = time.Second

// followInterval is how often network n's tip is read: set, from
// --follow-interval, when given, else the network's default.
func followInterval(n money.Network, set time.Duration) time.Duration {
	switch {
	case set > 0:
		return set
	case n == money.Tron:
		return tron.BlockInterval
	}
	return defaultFollowInterval
}
