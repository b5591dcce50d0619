package bitcoin_test

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/chain/bitcoin"
	"payd/chain/bitcoin/btcdtest"
	"payd/clock"
	"payd/money"
)

// The BIP84 test vector's account keys (bitcoin/bips bip-0084), as hd's
// tests use them, and the regtest address of the zpub's first key.
const (
	bip84Zpub   = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84Vpub   = "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
	bip84Bcrt0  = "bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx"
	centsPerBTC = 5_000_000 // $50,000
)

// watched is a payd.Watched of the WatchKeys of some addresses.
type watched map[string]bool

func (w watched) Has(key string) bool { return w[key] }

// watch returns the Watched set of addrs on n.
func watch(t *testing.T, n *bitcoin.Node, addrs ...string) watched {
	t.Helper()
	w := watched{}
	for _, a := range addrs {
		k, ok := n.WatchKey(a)
		if !ok {
			t.Fatalf("WatchKey(%s) refused", a)
		}
		w[k] = true
	}
	return w
}

// setup starts btcd and a Node on it with a fake clock for the fee cache.
func setup(t *testing.T) (*btcdtest.Node, *bitcoin.Node, *clock.Fake) {
	t.Helper()
	h := btcdtest.Start(t)
	clk := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	n, err := bitcoin.New(context.Background(), h.URL(), bitcoin.Options{
		Clock: clk,
		Price: func(context.Context, money.Asset) (int64, error) { return centsPerBTC, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, n, clk
}

// deposits derives count deposit addresses of the BIP84 zpub on n.
func deposits(t *testing.T, n *bitcoin.Node, count int) []string {
	t.Helper()
	var out []string
	for i := range count {
		d, err := n.Deposit(bip84Zpub, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Address)
	}
	return out
}

func TestRegtestRules(t *testing.T) {
	t.Parallel()
	h, n, _ := setup(t)
	if n.Chain() != "regtest" || n.Name() != money.Bitcoin || !slices.Equal(n.Assets(), []money.Asset{money.BTC}) {
		t.Fatalf("Chain %q, Name %q, Assets %v", n.Chain(), n.Name(), n.Assets())
	}
	d, err := n.Deposit(bip84Zpub, 0)
	if err != nil || d.Address != bip84Bcrt0 || d.Reference != "" {
		t.Fatalf("Deposit(zpub, 0) = %+v, %v; want %s", d, err, bip84Bcrt0)
	}
	if d, err := n.Deposit(bip84Vpub, 0); err != nil || !strings.HasPrefix(d.Address, "bcrt1q") {
		t.Errorf("Deposit(vpub, 0) = %+v, %v; want a bcrt1 address", d, err)
	}
	if _, err := n.Deposit("xpub-nonsense", 0); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("Deposit of a bad key: %v; want invalid_request", err)
	}
	if _, err := n.Deposit(bip84Zpub, 1<<31); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("Deposit at a hardened index: %v; want invalid_request", err)
	}
	for _, ok := range []string{bip84Bcrt0, strings.ToUpper(bip84Bcrt0), h.Address(),
		"mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc"} {
		if err := n.ValidAddress(ok); err != nil {
			t.Errorf("ValidAddress(%s): %v", ok, err)
		}
		if _, watchable := n.WatchKey(ok); !watchable {
			t.Errorf("WatchKey(%s) refused", ok)
		}
	}
	for _, bad := range []string{"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgy", ""} {
		if err := n.ValidAddress(bad); payd.ErrorCode(err) != payd.ErrInvalidRequest {
			t.Errorf("ValidAddress(%q) = %v; want invalid_request", bad, err)
		}
		if _, watchable := n.WatchKey(bad); watchable {
			t.Errorf("WatchKey(%q) accepted", bad)
		}
	}
	if err := n.ValidTxHash(strings.Repeat("ab", 32)); err != nil {
		t.Error(err)
	}
	if err := n.ValidTxHash("0x" + strings.Repeat("ab", 32)); payd.ErrorCode(err) != payd.ErrInvalidTxHash {
		t.Errorf("ValidTxHash(0x…) = %v; want invalid_tx_hash", err)
	}
	if u := n.ExplorerURL("ab"); u != "" {
		t.Errorf("regtest ExplorerURL = %q; want none", u)
	}
	uri := n.PaymentURI(payd.PaymentRequest{Deposit: d, Amount: money.NewCoinAmount(money.BTC, 123_000)})
	if uri != "bitcoin:"+bip84Bcrt0+"?amount=0.00123" {
		t.Errorf("PaymentURI = %s", uri)
	}
	e, err := bitcoin.New(context.Background(), h.URL(), bitcoin.Options{Explorer: "https://explorer.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if u := e.ExplorerURL("ab"); u != "https://explorer.example/tx/ab" {
		t.Errorf("ExplorerURL = %q", u)
	}
}

func TestRegtestFee(t *testing.T) {
	t.Parallel()
	h, n, clk := setup(t)
	ctx := context.Background()
	// btcd serves estimatefee, not estimatesmartfee, and has no estimate on
	// a chain without fee-paying history: the floor, 1 sat/vB × 141 vB at
	// $50,000 is 7.05 cents, rounded up.
	for range 2 {
		if c, err := n.FeeEstimateUSD(ctx, money.BTC); err != nil || c != 8 {
			t.Fatalf("FeeEstimateUSD = %d, %v; want 8", c, err)
		}
	}
	if _, err := n.FeeEstimateUSD(ctx, money.USDC); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("FeeEstimateUSD(USDC) = %v; want invalid_request", err)
	}

	// Once btcd has seen fee-paying transactions mined it estimates from
	// them: a minute later the estimate follows (141.8… sat/vB here, from
	// payments paying 20,000 sat for 141 vB).
	for range 3 {
		h.SendOutputs([]btcdtest.Output{{To: h.Address(), Sats: 10_000}}, btcdtest.SendOptions{Fee: 20_000})
	}
	h.Mine(1)
	if c, err := n.FeeEstimateUSD(ctx, money.BTC); err != nil || c != 8 {
		t.Errorf("FeeEstimateUSD within a minute = %d, %v; want the cached 8", c, err)
	}
	// A clock set back an hour does not keep the cache fresh for an hour:
	// the estimate follows at once.
	clk.Set(clk.Now().Add(-time.Hour))
	var btcPerKB json.Number
	h.Call("estimatefee", &btcPerKB, 3)
	want := expectedCents(t, btcPerKB)
	got, err := n.FeeEstimateUSD(ctx, money.BTC)
	if err != nil || got != want || got <= 8 {
		t.Errorf("FeeEstimateUSD at btcd's estimate of %s BTC/kB after the clock went back = %d, %v; want %d", btcPerKB, got, err, want)
	}
	clk.Advance(2 * time.Minute)
	got, err = n.FeeEstimateUSD(ctx, money.BTC)
	if err != nil || got != want {
		t.Errorf("FeeEstimateUSD at btcd's estimate of %s BTC/kB = %d, %v; want %d", btcPerKB, got, err, want)
	}

	h.Stop()
	if c, err := n.FeeEstimateUSD(ctx, money.BTC); err != nil || c != want {
		t.Errorf("FeeEstimateUSD from the cache = %d, %v", c, err)
	}
	clk.Advance(2 * time.Minute)
	if _, err := n.FeeEstimateUSD(ctx, money.BTC); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("FeeEstimateUSD with the node down, cache stale = %v; want upstream_unavailable", err)
	}
	h.Restart()
	noPrice, err := bitcoin.New(ctx, h.URL(), bitcoin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noPrice.FeeEstimateUSD(ctx, money.BTC); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("FeeEstimateUSD without a price = %v; want upstream_unavailable", err)
	}
}

// expectedCents works out FeeEstimateUSD's answer at a node's rate in
// BTC/kB, independently of the package: whole sat/vB rounded up, times 141
// vB, at $50,000, rounded up to a cent.
func expectedCents(t *testing.T, btcPerKB json.Number) int64 {
	t.Helper()
	r, ok := new(big.Rat).SetString(string(btcPerKB))
	if !ok {
		t.Fatalf("estimatefee answered %q", btcPerKB)
	}
	ceil := func(r *big.Rat) *big.Int {
		q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
		if m.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	sat := ceil(r.Mul(r, big.NewRat(100_000, 1)))
	cents := new(big.Rat).SetFrac(new(big.Int).Mul(sat, big.NewInt(141*centsPerBTC)), big.NewInt(100_000_000))
	return ceil(cents).Int64()
}

// TestRegtestFollow walks a payment through the mempool, a replacement by
// fee, a block and a reorg, as a follower sees them.
func TestRegtestFollow(t *testing.T) {
	t.Parallel()
	h, n, _ := setup(t)
	ctx := context.Background()
	deps := deposits(t, n, 2)
	w := watch(t, n, deps...)
	// The follower has read the chain up to its tip.
	height, start := h.Tip()
	if b, err := n.BlockAt(ctx, height, w); err != nil || b.Hash != start || len(b.Transfers) != 0 {
		t.Fatalf("BlockAt(%d) = %+v, %v", height, b, err)
	}

	// A payment to both deposits, and one to nobody watched.
	tx1 := h.SendOutputs([]btcdtest.Output{{To: deps[0], Sats: 12_345}, {To: deps[1], Sats: 777}}, btcdtest.SendOptions{})
	other := h.Send(h.Address(), 50_000)
	p := pending(t, n, w, height, tx1, other)
	wantTransfers(t, "mempool", p.Transfers, tr(tx1, 0, deps[0], 12_345), tr(tx1, 1, deps[1], 777))
	wantAlive(t, p, tx1, other)

	// Replaced by fee: the old txid is gone, the new one waits.
	tx2 := h.Replace(tx1, btcdtest.Output{To: deps[0], Sats: 20_000})
	p = pending(t, n, w, height, tx1, tx2)
	wantTransfers(t, "after the replacement", p.Transfers, tr(tx2, 0, deps[0], 20_000))
	wantAlive(t, p, tx2)

	// Mined: alive until the follower reads the block, then in it.
	mined := h.Mine(1)[0]
	wantAlive(t, pending(t, n, w, height, tx2), tx2)
	tip, err := n.Tip(ctx)
	if err != nil || tip.Hash != mined {
		t.Fatalf("Tip = %+v, %v; want %s", tip, err, mined)
	}
	b, err := n.BlockAt(ctx, tip.Height, w)
	if err != nil {
		t.Fatal(err)
	}
	if b.BlockRef != tip || b.Parent != start {
		t.Errorf("BlockAt(%d) = %+v, parent %s; want %+v, parent %s", tip.Height, b.BlockRef, b.Parent, tip, start)
	}
	wantTransfers(t, "block", b.Transfers, tr(tx2, 0, deps[0], 20_000))
	p = pending(t, n, w, tip.Height, tx2)
	wantTransfers(t, "mempool after the block", p.Transfers)
	wantAlive(t, p) // in the block the follower read: its transfer comes from there
	if size := bitcoin.PoolSize(n); size != 0 {
		t.Errorf("Pending remembers %d transactions of an empty mempool", size)
	}

	// Reorganised away: the tip goes back, the payment waits again, and the
	// block mined in its place has another hash.
	h.Invalidate(mined)
	back, err := n.Tip(ctx)
	if err != nil || back.Height != tip.Height-1 || back.Hash != start {
		t.Fatalf("Tip after invalidateblock = %+v, %v; want %d %s", back, err, tip.Height-1, start)
	}
	if _, err := n.BlockAt(ctx, tip.Height, w); payd.ErrorCode(err) != payd.ErrNotFound {
		t.Errorf("BlockAt above the tip = %v; want not_found", err)
	}
	p = pending(t, n, w, back.Height, tx2) // the follower unwound the orphan
	if size := bitcoin.PoolSize(n); size != len(h.Mempool()) {
		t.Errorf("Pending remembers %d transactions of a mempool of %d", size, len(h.Mempool()))
	}
	wantTransfers(t, "mempool after the reorg", p.Transfers, tr(tx2, 0, deps[0], 20_000))
	wantAlive(t, p, tx2)
	again := h.Mine(1)[0]
	b, err = n.BlockAt(ctx, tip.Height, w)
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != again || b.Hash == mined || b.Parent != start {
		t.Errorf("BlockAt(%d) after the reorg = %s, parent %s; want %s (not %s), parent %s", tip.Height, b.Hash, b.Parent, again, mined, start)
	}
	wantTransfers(t, "block after the reorg", b.Transfers, tr(tx2, 0, deps[0], 20_000))
}

func TestRegtestDowntime(t *testing.T) {
	t.Parallel()
	h, n, _ := setup(t)
	ctx := context.Background()
	before, err := n.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.Stop()
	var w payd.Watched = watched{}
	start := clock.Real{}.Now()
	_, err1 := n.Tip(ctx)
	_, err2 := n.BlockAt(ctx, 1, w)
	_, err3 := n.Pending(ctx, w, nil, before.Height)
	_, err4 := bitcoin.New(ctx, h.URL(), bitcoin.Options{})
	if d := (clock.Real{}).Now().Sub(start); d > 5*time.Second {
		t.Errorf("calls to a stopped node took %v", d)
	}
	for i, err := range []error{err1, err2, err3, err4} {
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Errorf("call %d to a stopped node: %v; want upstream_unavailable", i, err)
		} else if strings.Contains(err.Error(), "u:p") {
			t.Errorf("error %q shows the credentials", err)
		}
	}
	h.Restart()
	after, err := n.Tip(ctx)
	if err != nil || after != before {
		t.Errorf("Tip after a restart = %+v, %v; want %+v", after, err, before)
	}
	h.Mine(1)
	if b, err := n.BlockAt(ctx, before.Height+1, w); err != nil || b.Parent != before.Hash {
		t.Errorf("BlockAt after a restart = %+v, %v", b, err)
	}
}

// pending calls n.Pending as a follower that has read up to processed,
// and fails the test on an error.
func pending(t *testing.T, n *bitcoin.Node, w payd.Watched, processed int64, unconfirmed ...string) payd.Pending {
	t.Helper()
	p, err := n.Pending(context.Background(), w, unconfirmed, processed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tr is a transfer as the node reports it.
func tr(txid string, index int, to string, sats int64) payd.Transfer {
	return payd.Transfer{TxHash: txid, Index: index, To: to, Amount: money.NewCoinAmount(money.BTC, sats)}
}

// wantTransfers compares transfers in any order.
func wantTransfers(t *testing.T, what string, got []payd.Transfer, want ...payd.Transfer) {
	t.Helper()
	key := func(t payd.Transfer) string {
		return t.TxHash + "/" + string(rune('0'+t.Index)) + " " + t.To + " " + t.Amount.Units.String() + " " + string(t.Amount.Asset) + " " + t.From
	}
	var g, w []string
	for _, x := range got {
		g = append(g, key(x))
	}
	for _, x := range want {
		w = append(w, key(x))
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s: transfers\n%s\nwant\n%s", what, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

// wantAlive checks that exactly the txids alive are alive.
func wantAlive(t *testing.T, p payd.Pending, alive ...string) {
	t.Helper()
	var got []string
	for id, ok := range p.Alive {
		if ok {
			got = append(got, id)
		}
	}
	slices.Sort(got)
	slices.Sort(alive)
	if !slices.Equal(got, alive) {
		t.Errorf("Alive = %v; want %v", got, alive)
	}
}

// TestRegtestCoinbaseNotCounted mines a block whose reward pays a watched
// address: BlockAt does not count it.
func TestRegtestCoinbaseNotCounted(t *testing.T) {
	t.Parallel()
	h, n, _ := setup(t)
	w := watch(t, n, h.Address())
	mined := h.Mine(1)[0]
	height, _ := h.Tip()
	b, err := n.BlockAt(context.Background(), height, w)
	if err != nil || b.Hash != mined {
		t.Fatalf("BlockAt(%d) = %+v, %v", height, b.BlockRef, err)
	}
	if len(b.Transfers) != 0 {
		t.Errorf("the block reward counted: %+v", b.Transfers)
	}
}

// TestRegtestPendingAfterRestart asks a fresh Node, as after a restart,
// about a payment replaced by fee before it read any block, for a
// follower caught up with the tip: the replaced transaction is not alive,
// its replacement is.
func TestRegtestPendingAfterRestart(t *testing.T) {
	t.Parallel()
	h, n, _ := setup(t)
	deps := deposits(t, n, 1)
	w := watch(t, n, deps...)
	tx1 := h.Send(deps[0], 12_345)
	tx2 := h.Replace(tx1, btcdtest.Output{To: deps[0], Sats: 20_000})
	fresh, err := bitcoin.New(context.Background(), h.URL(), bitcoin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tip, _ := h.Tip()
	p := pending(t, fresh, w, tip, tx1, tx2)
	wantAlive(t, p, tx2)
	wantTransfers(t, "after a restart", p.Transfers, tr(tx2, 0, deps[0], 20_000))
}
