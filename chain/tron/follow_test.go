package tron_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/chain/tron"
	"payd/chain/tron/trontest"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

// rates price the tests' checkouts: USDT at $1.
var rates = &payd.ExchangeRates{Coins: map[money.Asset]int64{money.USDT: 100},
	Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1")}}

// openCheckout stores a business with b's wallet, a payment of 25.00 USD
// and its USDT checkout on tron paying to address.
func openCheckout(t *testing.T, db *store.DB, b bundle, now time.Time, address string) *payd.Payment {
	t.Helper()
	ctx := context.Background()
	biz, err := payd.NewBusiness("Shop", "shop@example.com", false, now)
	must(t, err)
	must(t, db.CreateBusiness(ctx, biz))
	w, err := payd.NewWallet(biz.ID, map[money.Network]string{money.Tron: b.key},
		map[money.Network]string{money.Tron: "id-" + b.key}, payd.WalletAttached, now)
	must(t, err)
	must(t, db.CreateWallet(ctx, w))
	p, err := payd.NewPayment(biz.ID, payd.PaymentParams{Amount: 2500, Currency: money.USD,
		FeePayer: money.FeePayerBusiness}, rates, false, now)
	must(t, err)
	c, err := payd.OpenCryptoCheckout(p, payd.OpenParams{Asset: money.USDT, Network: money.Tron, Rates: rates,
		QuoteMinutes: 15, Deposit: payd.Deposit{Address: address}, WalletID: w.ID, Required: 19}, now)
	must(t, err)
	must(t, db.CreatePayment(ctx, p))
	must(t, db.CreateCheckout(ctx, c))
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFollowerThroughReorg runs the real follower, on a real store, over
// trontest: a transfer into a deposit is stored from its block and
// counts confirmations; a reorg that mines it again elsewhere unwinds it
// and stores it again from its new block under the same key; one the new
// branch never mines goes back to unconfirmed and is dropped once the
// node has not known it for DropAfter. A rate limit and a hang are
// upstream_unavailable, and the follower recovers after its backoff.
func TestFollowerThroughReorg(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		s := trontest.Start(t, trontest.Options{})
		n := mustNode(t, s.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: s.Token()}, Price: trxPrice,
			Clock: clk, HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
		b := setup(t)
		b.node, b.chain = n, s
		openCheckout(t, db, b, clk.Now(), b.deposits[0])
		f := watch.NewFollower(db, n, clk, storetest.Logger(t), watch.FollowOptions{Lease: time.Hour, DropAfter: time.Second})
		deposit := []payd.Deposit{{Address: b.deposits[0]}}
		// run follows, then reads what the network reports of the deposit.
		run := func() []payd.Transfer {
			t.Helper()
			must(t, f.RunOnce(ctx))
			got, err := f.Network().Transfers(ctx, deposit)
			must(t, err)
			return got
		}
		must(t, f.RunOnce(ctx)) // starts at the tip
		tx := s.Transfer(b.deposits[0], 25_000_000)
		s.Transfer(b.deposits[1], 1) // not watched: no checkout
		s.Mine(1)
		got := run()
		if len(got) != 1 || got[0].TxHash != tx || got[0].Index != 0 || got[0].Confirmations != 1 ||
			got[0].Amount.Units.Int64() != 25_000_000 || got[0].Amount.Asset != money.USDT {
			t.Fatalf("after its block: %+v", got)
		}
		s.Mine(2)
		if got := run(); len(got) != 1 || got[0].Confirmations != 3 {
			t.Fatalf("two blocks later: %+v", got)
		}

		// A reorg of 3 blocks: the new branch mines it again.
		orphaned := s.BlockID(s.Tip())
		s.Fork(3)
		s.Mine(3)
		if s.BlockID(s.Tip()) == orphaned {
			t.Fatal("the fork kept the tip")
		}
		got = run()
		if len(got) != 1 || got[0].TxHash != tx || got[0].Index != 0 || got[0].Confirmations != 3 {
			t.Fatalf("after the reorg: %+v", got)
		}
		head, err := db.ChainHead(ctx, money.Tron)
		must(t, err)
		if head.Hash != s.BlockID(s.Tip()) {
			t.Fatalf("the stored head %s is not the node's tip %s", head.Hash, s.BlockID(s.Tip()))
		}

		// A reorg whose branch never mines it: unconfirmed, then dropped.
		s.Fork(3)
		s.Drop(tx)
		s.Mine(4)
		if got := run(); len(got) != 1 || got[0].Confirmations != 0 {
			t.Fatalf("orphaned and not mined again: %+v", got)
		}
		clk.Advance(2 * time.Second)
		if got := run(); len(got) != 0 {
			t.Fatalf("a transfer the node forgot is kept: %+v", got)
		}

		// Rate limited, then hanging: upstream_unavailable, then the
		// follower reads again after its backoff and catches up.
		for _, fail := range []func(){func() { s.Fail429(1, "3") }, func() { s.Hang(1) }} {
			fail()
			late := s.Transfer(b.deposits[0], 5_000_000)
			s.Mine(1)
			if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
				t.Fatalf("RunOnce of a failing node = %v", err)
			}
			calls := s.Calls(trontest.GetBlock)
			must(t, f.RunOnce(ctx))
			if s.Calls(trontest.GetBlock) != calls {
				t.Fatal("the follower read a failing node again before its backoff")
			}
			clk.Advance(time.Minute)
			got := run()
			if !slices.ContainsFunc(got, func(tr payd.Transfer) bool { return tr.TxHash == late && tr.Confirmations == 1 }) {
				t.Fatalf("the transfer mined while the node failed: %+v", got)
			}
			statuses, err := db.ChainStatuses(ctx)
			must(t, err)
			if len(statuses) != 1 || statuses[0].Error != "" || statuses[0].Chain != "nile" {
				t.Fatalf("status once back: %+v", statuses)
			}
		}
	})
}

// TestFollowerBehindLoadBalancer runs the real follower over two backends
// behind one URL, as TronGrid's: a backend behind the one that named the
// tip is a block not there yet (no error in the status, checkouts still
// open, the block read at the next run), infos of a competing block are
// never stored, and a node that keeps naming a tip it has no block for
// fails once staleAfter passed. Without a TRX price the network still
// quotes its fee, the one-cent minimum.
func TestFollowerBehindLoadBalancer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		a, other := trontest.Start(t, trontest.Options{}), trontest.Start(t, trontest.Options{})
		r := &router{tip: a, blocks: a, infos: a}
		noPrice := func(context.Context, money.Asset) (int64, error) {
			return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no TRX price in the exchange rates")
		}
		n := mustNode(t, trontest.Balance(t, r.route), tron.Options{Tokens: map[money.Asset]string{money.USDT: a.Token()},
			Price: noPrice, Clock: clk})
		b := setup(t)
		openCheckout(t, db, b, clk.Now(), b.deposits[0])
		f := watch.NewFollower(db, n, clk, storetest.Logger(t), watch.FollowOptions{Lease: time.Hour})
		deposit := []payd.Deposit{{Address: b.deposits[0]}}
		healthy := func(what string) {
			t.Helper()
			statuses, err := db.ChainStatuses(ctx)
			must(t, err)
			if len(statuses) != 1 || statuses[0].Error != "" {
				t.Fatalf("%s: status %+v", what, statuses)
			}
			if fee, err := f.Network().FeeEstimateUSD(ctx, money.USDT); err != nil || fee != 1 {
				t.Fatalf("%s: FeeEstimateUSD = %d, %v, want the one-cent minimum without a TRX price", what, fee, err)
			}
		}
		transfers := func() []payd.Transfer {
			t.Helper()
			got, err := f.Network().Transfers(ctx, deposit)
			must(t, err)
			return got
		}
		must(t, f.RunOnce(ctx)) // starts at the tip, block 1, which both backends share
		healthy("at the start")

		// The tip from a, the blocks from other, which lags a block.
		other.Diverge("other")
		paid := a.Transfer(b.deposits[0], 25_000_000)
		a.Mine(1)
		r.set(a, other, other)
		for range 2 {
			must(t, f.RunOnce(ctx))
			healthy("with a backend behind")
		}
		if got := transfers(); len(got) != 0 {
			t.Fatalf("transfers before the block was read: %+v", got)
		}

		// other mines its own block 2, paying the deposit too: its infos
		// must not be stored under a's block.
		never := other.Transfer(b.deposits[0], 99_000_000)
		other.Mine(1)
		r.set(a, a, other)
		if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable ||
			!strings.Contains(err.Error(), "changed while it was read") {
			t.Fatalf("RunOnce with the infos of a competing block = %v", err)
		}
		if got := transfers(); len(got) != 0 {
			t.Fatalf("the competing block's transfers were stored: %+v", got)
		}

		// One backend again: a's block 2 counts, other's payment never.
		clk.Advance(time.Minute)
		r.set(a, a, a)
		must(t, f.RunOnce(ctx))
		got := transfers()
		if len(got) != 1 || got[0].TxHash != paid || got[0].Confirmations != 1 {
			t.Fatalf("after the block was read whole: %+v (the competing payment is %s)", got, never)
		}
		healthy("once caught up")

		// A node that keeps naming a tip it has no block for fails.
		a.Mine(1)
		r.set(a, other, other)
		must(t, f.RunOnce(ctx))
		clk.Advance(50 * time.Second)
		if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "no block") {
			t.Fatalf("RunOnce after 50 s of a tip without its block = %v", err)
		}
		clk.Advance(time.Minute)
		r.set(a, a, a)
		must(t, f.RunOnce(ctx))
		if got := transfers(); len(got) != 1 || got[0].Confirmations != 2 {
			t.Fatalf("after recovering: %+v", got)
		}
		healthy("after recovering")
	})
}
