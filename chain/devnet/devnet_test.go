package devnet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// testPhrase is BIP39's published test phrase; docs/wallets.md lists its
// addresses.
const testPhrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// bundle is a devnet on a real SQLite file.
type bundle struct {
	t      testing.TB
	ctx    context.Context
	db     *store.DB
	clock  *clock.Fake
	d      *Devnet
	wallet hd.Wallet
}

// setup opens a fresh database and a devnet on it.
func setup(t testing.TB) *bundle {
	t.Helper()
	w, err := hd.WalletFromMnemonic(testPhrase, "")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC))
	b := &bundle{t: t, ctx: context.Background(), db: storetest.Open(t, "sqlite", clk), clock: clk, wallet: w}
	b.d = b.reopen()
	return b
}

// reopen builds a new devnet from the database, as a restart does.
func (b *bundle) reopen() *Devnet {
	b.t.Helper()
	d, err := New(b.ctx, b.db, b.clock, "http://payd.test/api/v1/")
	if err != nil {
		b.t.Fatal(err)
	}
	return d
}

// deposit returns the deposit of checkout index on n.
func (b *bundle) deposit(n money.Network, index uint32) payd.Deposit {
	b.t.Helper()
	key := map[money.Network]hd.AccountKey{money.Bitcoin: b.wallet.Bitcoin, money.Ethereum: b.wallet.Ethereum,
		money.Polygon: b.wallet.Polygon, money.Solana: b.wallet.Solana, money.Tron: b.wallet.Tron}[n]
	dep, err := b.d.Network(n).Deposit(key.String(), index)
	if err != nil {
		b.t.Fatal(err)
	}
	return dep
}

// pay sends amount of a to dep and returns the hash.
func (b *bundle) pay(n money.Network, a money.Asset, dep payd.Deposit, amount string) string {
	b.t.Helper()
	h, err := b.d.Transfer(b.ctx, TransferRequest{Network: string(n), Asset: string(a), To: dep.Address,
		Amount: amount, Reference: dep.Reference})
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// mine mines count blocks on n and returns the height.
func (b *bundle) mine(n money.Network, count int) int {
	b.t.Helper()
	h, err := b.d.Mine(b.ctx, string(n), count)
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// transfers reads the transfers into deps.
func (b *bundle) transfers(n money.Network, deps ...payd.Deposit) []payd.Transfer {
	b.t.Helper()
	got, err := b.d.Network(n).Transfers(b.ctx, deps)
	if err != nil {
		b.t.Fatal(err)
	}
	return got
}

// confirmations lists the confirmations of ts in order.
func confirmations(ts []payd.Transfer) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.Confirmations
	}
	return out
}

// coin parses an amount.
func coin(t testing.TB, a money.Asset, s string) money.CoinAmount {
	t.Helper()
	c, err := money.ParseCoinAmount(a, s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantInts(t *testing.T, what string, got []int, want ...int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}

// TestEveryNetwork sends each coin on each network it moves on, checks
// the generated hash and sender with the network's own rules, and follows
// the confirmations through mined blocks.
func TestEveryNetwork(t *testing.T) {
	b := setup(t)
	index := uint32(0)
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			index++ // a fresh deposit for each coin, as each checkout gets
			dep := b.deposit(n, index)
			h := b.pay(n, a, dep, "1.5")
			if err := hd.ValidTxHash(n, h); err != nil {
				t.Errorf("%s on %s: hash %q: %v", a, n, h, err)
			}
			got := b.transfers(n, dep)
			if len(got) != 1 || got[0].TxHash != h || got[0].Confirmations != 0 || got[0].To != dep.Address ||
				got[0].Reference != dep.Reference || got[0].Amount.Cmp(coin(t, a, "1.5")) != 0 {
				t.Fatalf("%s on %s: Transfers = %+v", a, n, got)
			}
			if err := hd.ValidAddress(n, got[0].From); err != nil {
				t.Errorf("%s on %s: made-up sender %q: %v", a, n, got[0].From, err)
			}
			height := b.mine(n, 3)
			wantInts(t, string(n)+" confirmations", confirmations(b.transfers(n, dep)), 3)
			b.mine(n, 1)
			wantInts(t, string(n)+" confirmations", confirmations(b.transfers(n, dep)), 4)
			if b.d.Height(n) != height+1 {
				t.Fatalf("%s: height %d after mining to %d and one more", n, b.d.Height(n), height)
			}
		}
	}
}

// TestReorg orphans blocks: their transactions go back to the mempool in
// block order, ahead of newer ones, and the next block confirms them all.
func TestReorg(t *testing.T) {
	b := setup(t)
	n := money.Bitcoin
	deps := []payd.Deposit{b.deposit(n, 0), b.deposit(n, 1), b.deposit(n, 2)}
	b.pay(n, money.BTC, deps[0], "0.1")
	b.mine(n, 2) // height 2, deps[0] in block 1
	b.pay(n, money.BTC, deps[1], "0.2")
	b.mine(n, 1) // height 3, deps[1] in block 3
	b.pay(n, money.BTC, deps[2], "0.3")
	wantInts(t, "before", confirmations(b.transfers(n, deps...)), 3, 1, 0)

	h, err := b.d.Reorg(b.ctx, string(n), 2) // orphans blocks 2 and 3
	if err != nil || h != 1 {
		t.Fatalf("Reorg = %d, %v; want height 1", h, err)
	}
	wantInts(t, "after reorg", confirmations(b.transfers(n, deps...)), 1, 0, 0)
	l := b.d.ledgers[n]
	if len(l.mempool) != 2 || l.mempool[0].to != deps[1].Address || l.mempool[1].to != deps[2].Address {
		t.Fatalf("mempool after reorg holds %d, in the wrong order", len(l.mempool))
	}
	b.mine(n, 1)
	wantInts(t, "after mining", confirmations(b.transfers(n, deps...)), 2, 1, 1)

	_, err = b.d.Reorg(b.ctx, string(n), 3)
	wantField(t, err, "depth")
	if h, err := b.d.Reorg(b.ctx, string(n), 2); err != nil || h != 0 {
		t.Fatalf("Reorg to genesis = %d, %v", h, err)
	}
	wantInts(t, "at genesis", confirmations(b.transfers(n, deps...)), 0, 0, 0)
	_, err = b.d.Reorg(b.ctx, string(n), 1)
	wantField(t, err, "depth")
}

// TestReplay rebuilds the devnet from the database after every kind of
// op and finds the same chains: hashes, senders, heights, confirmations.
func TestReplay(t *testing.T) {
	b := setup(t)
	sol := b.deposit(money.Solana, 0)
	evm := b.deposit(money.Polygon, 3)
	b.pay(money.Solana, money.USDC, sol, "12.50")
	b.mine(money.Solana, 5)
	b.pay(money.Polygon, money.USDC, evm, "3")
	b.mine(money.Polygon, 2)
	b.pay(money.Polygon, money.USDC, evm, "4")
	if _, err := b.d.Reorg(b.ctx, "polygon", 1); err != nil {
		t.Fatal(err)
	}
	before := [][]payd.Transfer{b.transfers(money.Solana, sol), b.transfers(money.Polygon, evm)}

	b.d = b.reopen()
	after := [][]payd.Transfer{b.transfers(money.Solana, sol), b.transfers(money.Polygon, evm)}
	for i := range before {
		if len(before[i]) != len(after[i]) {
			t.Fatalf("replay: %d transfers, want %d", len(after[i]), len(before[i]))
		}
		for j := range before[i] {
			x, y := before[i][j], after[i][j]
			if x.TxHash != y.TxHash || x.From != y.From || x.Confirmations != y.Confirmations || x.Amount.Cmp(y.Amount) != 0 {
				t.Fatalf("replay: %+v, want %+v", y, x)
			}
		}
	}
	if b.d.Height(money.Solana) != 5 || b.d.Height(money.Polygon) != 1 {
		t.Fatalf("replayed heights: solana %d, polygon %d", b.d.Height(money.Solana), b.d.Height(money.Polygon))
	}
}

// TestReplayRefusesDamage stops New at a log entry it cannot apply.
func TestReplayRefusesDamage(t *testing.T) {
	for _, bad := range []string{
		`{"v":1,"op":"reorg","network":"bitcoin","at":0,"depth":1}`, // deeper than the chain
		`{"v":2,"op":"mine","network":"bitcoin","at":0,"count":1}`,
		`not json`,
	} {
		b := setup(t)
		if err := b.db.AppendDevnetOp(b.ctx, []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, err := New(b.ctx, b.db, b.clock, ""); err == nil || !strings.Contains(err.Error(), "op 1") {
			t.Errorf("New on %s: %v", bad, err)
		}
	}
}

// failingLog is a database that refuses every write.
type failingLog struct{ Log }

func (failingLog) AppendDevnetOp(context.Context, []byte) error { return errors.New("disk full") }

// TestNothingUnlogged: an op the log refuses changes nothing.
func TestNothingUnlogged(t *testing.T) {
	b := setup(t)
	d, err := New(b.ctx, failingLog{b.db}, b.clock, "")
	if err != nil {
		t.Fatal(err)
	}
	dep := b.deposit(money.Tron, 0)
	_, err = d.Transfer(b.ctx, TransferRequest{Network: "tron", Asset: "USDT", To: dep.Address, Amount: "1"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Transfer = %v", err)
	}
	if _, err := d.Mine(b.ctx, "tron", 1); err == nil {
		t.Fatal("Mine succeeded on a failing log")
	}
	got, _ := d.Network(money.Tron).Transfers(b.ctx, []payd.Deposit{dep})
	if len(got) != 0 || d.Height(money.Tron) != 0 {
		t.Fatalf("state changed without the log: %v, height %d", got, d.Height(money.Tron))
	}
}

// wantField fails unless err is invalid_request naming field.
func wantField(t *testing.T, err error, field string) {
	t.Helper()
	var e *payd.Error
	if !errors.As(err, &e) || e.Code != payd.ErrInvalidRequest || e.Field != field {
		t.Fatalf("error = %v, want invalid_request on %s", err, field)
	}
}

// TestConcurrent sends, mines and reads at once (run with -race): every
// acknowledged transfer is there, and a replay agrees.
func TestConcurrent(t *testing.T) {
	b := setup(t)
	dep := b.deposit(money.Ethereum, 0)
	done := make(chan error)
	for range 4 {
		go func() {
			var err error
			for range 10 {
				if _, err = b.d.Transfer(b.ctx, TransferRequest{Network: "ethereum", Asset: "ETH", To: dep.Address, Amount: "1"}); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	go func() {
		var err error
		for range 10 {
			if _, err = b.d.Mine(b.ctx, "ethereum", 1); err != nil {
				break
			}
		}
		done <- err
	}()
	stop, read := make(chan struct{}), make(chan error)
	go func() { // a watcher: wake on a change, read, until told to stop
		for {
			ch := b.d.Changed(money.Ethereum)
			if _, err := b.d.Network(money.Ethereum).Transfers(b.ctx, []payd.Deposit{dep}); err != nil {
				read <- err
				return
			}
			select {
			case <-ch:
			case <-stop:
				read <- nil
				return
			}
		}
	}()
	for range 5 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	want := confirmations(b.transfers(money.Ethereum, dep))
	b.d = b.reopen()
	wantInts(t, "replayed confirmations", confirmations(b.transfers(money.Ethereum, dep)), want...)
	if len(want) != 40 {
		t.Fatalf("%d transfers, want 40", len(want))
	}
}
