package storetest

import (
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// deps are deposits at the addresses, without references.
func deps(addrs ...string) []payd.Deposit {
	out := make([]payd.Deposit, len(addrs))
	for i, a := range addrs {
		out[i].Address = a
	}
	return out
}

func testChain(t *testing.T, b *bundle) {
	t.Run("BlocksTransfersReorg", func(t *testing.T) {
		ctx, st := b.setup(t)
		n := money.Ethereum
		_, err := st.ChainHead(ctx, n)
		wantCode(t, err, payd.ErrNotFound)
		wei, _ := new(big.Int).SetString("123456789012345678901234", 10)
		waiting := payd.Transfer{TxHash: "0xaa", Index: 3, From: "0xfrom", To: "0xdep1",
			Amount: money.CoinAmount{Asset: money.ETH, Units: wei}}
		must(t, st.AddPendingTransfers(ctx, n, []payd.Transfer{waiting}, t0))
		must(t, st.AddPendingTransfers(ctx, n, []payd.Transfer{waiting}, t0.Add(time.Second)))
		txs, err := st.UnconfirmedTxs(ctx, n)
		must(t, err)
		if !slices.Equal(txs, []string{"0xaa"}) {
			t.Fatalf("UnconfirmedTxs = %v", txs)
		}
		must(t, st.AddChainBlock(ctx, n, payd.Block{BlockRef: payd.BlockRef{Height: 10, Hash: "0xb10"}, Parent: "0xb9"}, t0))
		token := payd.Transfer{TxHash: "0xbb", Index: 0, From: "0xfrom", To: "0xdep2", Amount: money.NewCoinAmount(money.USDC, 5_000_000)}
		must(t, st.AddChainBlock(ctx, n, payd.Block{BlockRef: payd.BlockRef{Height: 11, Hash: "0xb11"}, Parent: "0xb10",
			Transfers: []payd.Transfer{waiting, token}}, t0))
		head, err := st.ChainHead(ctx, n)
		must(t, err)
		if head.Height != 11 || head.Hash != "0xb11" || head.Parent != "0xb10" {
			t.Fatalf("ChainHead = %+v", head)
		}
		got, err := st.ChainTransfers(ctx, n, deps("0xdep1", "0xdep2", "0xnone"))
		must(t, err)
		if len(got) != 2 || got[0].Height != 11 || got[0].Amount.Units.Cmp(wei) != 0 || got[0].Index != 3 ||
			got[0].From != "0xfrom" || got[1].Amount.Asset != money.USDC || got[1].Height != 11 {
			t.Fatalf("ChainTransfers = %+v", got)
		}
		if txs, _ := st.UnconfirmedTxs(ctx, n); len(txs) != 0 {
			t.Fatalf("UnconfirmedTxs after mining = %v", txs)
		}
		// A reorg orphans block 11: its transfers wait again.
		wantCode(t, st.UnwindChainBlock(ctx, n, payd.BlockRef{Height: 11, Hash: "0xother"}), payd.ErrNotFound)
		wantCode(t, st.AddChainBlock(ctx, n, payd.Block{BlockRef: payd.BlockRef{Height: 12, Hash: "0xb12"}, Parent: "0xelse"}, t0),
			payd.ErrConflict)
		must(t, st.UnwindChainBlock(ctx, n, payd.BlockRef{Height: 11, Hash: "0xb11"}))
		head, err = st.ChainHead(ctx, n)
		must(t, err)
		if head.Height != 10 {
			t.Fatalf("ChainHead after the unwind = %+v", head)
		}
		got, _ = st.ChainTransfers(ctx, n, deps("0xdep1", "0xdep2"))
		if len(got) != 2 || got[0].Height != 0 || got[1].Height != 0 {
			t.Fatalf("ChainTransfers after the unwind = %+v", got)
		}
		txs, _ = st.UnconfirmedTxs(ctx, n)
		if !slices.Equal(txs, []string{"0xaa", "0xbb"}) {
			t.Fatalf("UnconfirmedTxs after the unwind = %v", txs)
		}
		// One is mined again on the new branch; the other is gone.
		must(t, st.AddChainBlock(ctx, n, payd.Block{BlockRef: payd.BlockRef{Height: 11, Hash: "0xc11"}, Parent: "0xb10",
			Transfers: []payd.Transfer{token}}, t0))
		must(t, st.DropUnconfirmed(ctx, n, []string{"0xaa", "0xbb"}))
		got, _ = st.ChainTransfers(ctx, n, deps("0xdep1", "0xdep2"))
		if len(got) != 1 || got[0].TxHash != "0xbb" || got[0].Height != 11 {
			t.Fatalf("ChainTransfers on the new branch = %+v", got)
		}
		blk, err := st.ChainBlock(ctx, n, 11)
		must(t, err)
		if blk.Hash != "0xc11" {
			t.Fatalf("ChainBlock(11) = %+v", blk)
		}
		must(t, st.PruneChainBlocks(ctx, n, 11))
		_, err = st.ChainBlock(ctx, n, 10)
		wantCode(t, err, payd.ErrNotFound)
		if _, err := st.ChainHead(ctx, money.Bitcoin); err == nil {
			t.Fatal("a block of ethereum is bitcoin's head")
		}
	})
	t.Run("TransfersByReference", func(t *testing.T) {
		// On solana one wallet address takes every checkout: the
		// deposits asked for are found by their references.
		ctx, st := b.setup(t)
		n := money.Solana
		pay := func(tx, ref string) payd.Transfer {
			return payd.Transfer{TxHash: tx, Index: 1, From: "customer", To: solanaAddress, Reference: ref,
				Amount: money.NewCoinAmount(money.USDC, 5_000_000)}
		}
		must(t, st.AddPendingTransfers(ctx, n, []payd.Transfer{pay("s1", "ref1"), pay("s2", "ref2"), pay("s3", "ref3")}, t0))
		got, err := st.ChainTransfers(ctx, n, []payd.Deposit{{Address: solanaAddress, Reference: "ref1"},
			{Address: solanaAddress, Reference: "ref3"}, {Address: solanaAddress, Reference: "none"}})
		must(t, err)
		var txs []string
		for _, tr := range got {
			txs = append(txs, tr.TxHash)
		}
		if !slices.Equal(txs, []string{"s1", "s3"}) || got[0].Reference != "ref1" || got[0].To != solanaAddress {
			t.Fatalf("ChainTransfers by reference = %+v", got)
		}
	})
	t.Run("WatchedDeposits", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
		old := mustCheckout(t, ctx, st, p, money.Bitcoin, nil)
		late := mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.CreatedAt = t0.Add(time.Hour) })
		mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.WatchUntil = t0.Add(time.Minute) })
		mustCheckout(t, ctx, st, p, money.Ethereum, nil)
		sol := mustCheckout(t, ctx, st, p, money.Solana, nil)
		byAddress := func(a, b payd.Deposit) int { return strings.Compare(a.Address, b.Address) }
		all, err := st.WatchedDeposits(ctx, money.Bitcoin, t0.Add(2*time.Minute), time.Time{})
		must(t, err)
		slices.SortFunc(all, byAddress)
		want := []payd.Deposit{old.Crypto.Deposit, late.Crypto.Deposit}
		slices.SortFunc(want, byAddress)
		if !slices.Equal(all, want) {
			t.Fatalf("WatchedDeposits = %v, want %v", all, want)
		}
		recent, err := st.WatchedDeposits(ctx, money.Bitcoin, t0.Add(2*time.Minute), t0.Add(time.Minute))
		must(t, err)
		if !slices.Equal(recent, []payd.Deposit{late.Crypto.Deposit}) {
			t.Fatalf("WatchedDeposits since = %v", recent)
		}
		// On solana the reference tells the deposits of one wallet apart.
		sols, err := st.WatchedDeposits(ctx, money.Solana, t0.Add(2*time.Minute), time.Time{})
		must(t, err)
		if len(sols) != 1 || sols[0] != sol.Crypto.Deposit || sols[0].Reference == "" {
			t.Fatalf("WatchedDeposits on solana = %v, want %v", sols, sol.Crypto.Deposit)
		}
	})
	t.Run("Status", func(t *testing.T) {
		ctx, st := b.setup(t)
		failing := t0.Add(time.Minute)
		s := payd.ChainStatus{Network: money.Bitcoin, Chain: "regtest", Tip: payd.BlockRef{Height: 120, Hash: "t"},
			Head: payd.BlockRef{Height: 118, Hash: "h"}, Error: "node unreachable", CheckedAt: t0, FailingSince: &failing}
		must(t, st.SaveChainStatus(ctx, s))
		s.Error, s.FailingSince, s.Head = "", nil, s.Tip
		must(t, st.SaveChainStatus(ctx, s))
		must(t, st.SaveChainStatus(ctx, payd.ChainStatus{Network: money.Ethereum, Chain: "chain 1337", CheckedAt: t0}))
		got, err := st.ChainStatuses(ctx)
		must(t, err)
		if len(got) != 2 || got[0].Network != money.Bitcoin || got[0].Head.Height != 120 || got[0].Error != "" ||
			got[0].FailingSince != nil || !got[0].CheckedAt.Equal(t0) || got[0].Lag() != 0 || got[1].Chain != "chain 1337" {
			t.Fatalf("ChainStatuses = %+v", got)
		}
	})
}
