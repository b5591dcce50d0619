package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"payd"
	"payd/chain/bitcoin"
	"payd/chain/devnet"
	"payd/chain/evm"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/watch"
)

// nodeWait is how long payd serve waits at start for each --chain node to
// answer: the chain it follows decides how addresses are written, so a
// network whose node never answered cannot be offered.
const nodeWait = 30 * time.Second

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
					Price: func(ctx context.Context) (int64, error) { return price(ctx, money.BTC) }})
			default:
				return evm.New(ctx, s.network, s.url, evm.Options{Tokens: tokens[s.network],
					Explorer: explorers[s.network], Price: price, Clock: clk})
			}
		}
		node, err := retryOpen(ctx, clk, open)
		if err != nil {
			return nil, fmt.Errorf("--chain %s: the node at %s does not answer: %w", s.network, nodeAddress(s.url), err)
		}
		log.Info("network follows a real node", slog.String("network", string(s.network)),
			slog.String("node", nodeAddress(s.url)), slog.String("chain", node.Chain()),
			slog.Any("assets", node.Assets()))
		out[s.network] = node
	}
	return out, nil
}

// retryOpen calls open until it succeeds or nodeWait passed, waiting a
// second, then two, four… between tries.
func retryOpen(ctx context.Context, clk clock.Clock, open func(context.Context) (payd.Node, error)) (payd.Node, error) {
	deadline := clk.Now().Add(nodeWait)
	for wait := time.Second; ; wait *= 2 {
		node, err := open(ctx)
		if err == nil || payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || clk.Now().Add(wait).After(deadline) {
			return node, err
		}
		t := clk.NewTimer(wait)
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
		out[n] = watch.NewFollower(db, node, clk, log, watch.FollowOptions{Interval: cfg.FollowInterval,
			DropAfter: cfg.DropAfter})
	}
	return out
}
