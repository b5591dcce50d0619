package main

import (
	"context"
	"crypto/rand"
	"iter"
	"maps"
	"testing"
	"time"

	"payd"
	"payd/chain/solana"
	"payd/chain/solana/solanatest"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/store/storetest"
)

// solRates is a pricer with a SOL price.
type solRates struct{}

func (solRates) Latest(context.Context) (*payd.ExchangeRates, error) {
	return &payd.ExchangeRates{Coins: map[money.Asset]int64{money.SOL: 15_000}}, nil
}

// keySet is a payd.Watched of DepositKeys.
type keySet map[string]bool

func (k keySet) Has(s string) bool      { return k[s] }
func (k keySet) Keys() iter.Seq[string] { return maps.Keys(k) }

// TestOpenSolana opens --chain solana=URL with a --token mint on devnet.
func TestOpenSolana(t *testing.T) {
	c := solanatest.New(t)
	c.SetGenesis(solanatest.Devnet)
	mint := solanatest.Key("devnet usdc")
	c.SetMint(mint, 6)
	cfg := &Config{Chains: listFlag{"solana=" + c.URL()}, Tokens: listFlag{"solana:USDC=" + mint}, NodeWait: time.Second}
	nodes, err := openNodes(context.Background(), cfg, func(string) string { return "" }, solRates{}, clock.Real{},
		storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	n, ok := nodes[money.Solana].(*solana.Node)
	if !ok || n.Chain() != "devnet" {
		t.Fatalf("nodes = %v", nodes)
	}
	if m, ok := n.Mint(money.USDC); !ok || m != mint {
		t.Errorf("USDC mint = %q", m)
	}
}

// TestLazySolanaScans: a solana node that did not answer at start is
// still a payd.Scanner, so the follower scans it once it answers.
func TestLazySolanaScans(t *testing.T) {
	ctx := context.Background()
	c := solanatest.New(t)
	c.Throttle(1_000_000, "0")
	cfg := &Config{Chains: listFlag{"solana=" + c.URL()}, NodeWait: time.Millisecond}
	nodes, err := openNodes(ctx, cfg, func(string) string { return "" }, solRates{}, clock.Real{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := nodes[money.Solana].(payd.Scanner)
	if !ok {
		t.Fatalf("the lazy solana node %T is not a Scanner", nodes[money.Solana])
	}
	if sc.FinalDepth() != 32 || len(sc.Assets()) != 0 {
		t.Errorf("before it answers: depth %d, assets %v", sc.FinalDepth(), sc.Assets())
	}
	if _, _, err := sc.Scan(ctx, payd.BlockRef{}, payd.BlockRef{}, keySet{}, nil); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("Scan before the node answers: %v", err)
	}

	c.Throttle(0, "")
	tip, err := sc.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := hd.NewReference(rand.Reader)
	ref, _ := hd.NewReference(rand.Reader)
	key, ok := sc.DepositKey(payd.Deposit{Address: owner, Reference: ref})
	if !ok {
		t.Fatal("DepositKey refused once connected")
	}
	sig := c.Transfer(solanatest.Key("payer"), owner, solanatest.USDC, 5_000_000, ref)
	_, p, err := sc.Scan(ctx, tip, tip, keySet{key: true}, nil)
	if err != nil || len(p.Transfers) != 1 || p.Transfers[0].TxHash != sig {
		t.Fatalf("Scan once connected = %+v, %v", p, err)
	}
}
