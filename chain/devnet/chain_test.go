package devnet

import (
	"context"
	"strings"
	"testing"

	"payd"
	"payd/chain"
	"payd/money"
)

// Addresses of the BIP39 test phrase (docs/wallets.md).
const (
	btcAddr = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	evmAddr = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	solAddr = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
)

func TestTransferValidation(t *testing.T) {
	b := setup(t)
	ref := b.deposit(money.Solana, 0).Reference
	ok := TransferRequest{Network: "ethereum", Asset: "USDC", To: evmAddr, Amount: "1"}
	for _, c := range []struct {
		field string
		edit  func(r *TransferRequest)
	}{
		{"network", func(r *TransferRequest) { r.Network = "dogecoin" }},
		{"network", func(r *TransferRequest) { r.Network = "" }},
		{"asset", func(r *TransferRequest) { r.Asset = "usdc" }},
		{"asset", func(r *TransferRequest) { r.Asset = "SOL" }},
		{"to", func(r *TransferRequest) { r.To = "" }},
		{"to", func(r *TransferRequest) { r.To = btcAddr }},
		{"to", func(r *TransferRequest) { r.To = strings.Replace(evmAddr, "E", "e", 1) }}, // bad EIP-55
		{"amount", func(r *TransferRequest) { r.Amount = "0" }},
		{"amount", func(r *TransferRequest) { r.Amount = "-1" }},
		{"amount", func(r *TransferRequest) { r.Amount = "1.0000001" }}, // 7 decimals of a 6-decimal token
		{"amount", func(r *TransferRequest) { r.Amount = "1e3" }},
		{"from", func(r *TransferRequest) { r.From = solAddr }},
		{"reference", func(r *TransferRequest) { r.Reference = ref }},
		{"reference", func(r *TransferRequest) { *r = TransferRequest{"solana", "SOL", solAddr, "1", "", "not-base58!"} }},
		{"reference", func(r *TransferRequest) { *r = TransferRequest{"solana", "SOL", solAddr, "1", "", solAddr + "1"} }},
	} {
		req := ok
		c.edit(&req)
		_, err := b.d.Transfer(b.ctx, req)
		wantField(t, err, c.field)
	}
	if _, err := b.d.Mine(b.ctx, "bitcoin", 0); err == nil {
		t.Error("Mine 0 blocks succeeded")
	}
	_, err := b.d.Mine(b.ctx, "bitcoin", 1001)
	wantField(t, err, "count")
	_, err = b.d.Mine(b.ctx, "Bitcoin", 1)
	wantField(t, err, "network")
	_, err = b.d.Reorg(b.ctx, "bitcoin", 0)
	wantField(t, err, "depth")
	if b.d.Height(money.Bitcoin) != 0 || len(b.transfers(money.Ethereum, payd.Deposit{Address: evmAddr})) != 0 {
		t.Fatal("a refused request changed the devnet")
	}
}

// TestTransfersMatch checks what a deposit is paid by: its address off
// solana, in any case where the format ignores case; its reference on
// solana, wherever the coins went.
func TestTransfersMatch(t *testing.T) {
	b := setup(t)
	evm := b.deposit(money.Ethereum, 4)
	b.mustTransfer(TransferRequest{Network: "ethereum", Asset: "ETH", To: strings.ToLower(evm.Address), Amount: "0.5"})
	got := b.transfers(money.Ethereum, evm)
	if len(got) != 1 || got[0].To != evm.Address {
		t.Fatalf("lower-case payment to %s: %+v", evm.Address, got)
	}
	btc := b.deposit(money.Bitcoin, 4)
	b.mustTransfer(TransferRequest{Network: "bitcoin", Asset: "BTC", To: strings.ToUpper(btc.Address), Amount: "0.5"})
	if got := b.transfers(money.Bitcoin, btc); len(got) != 1 || got[0].To != btc.Address {
		t.Fatalf("upper-case bech32 payment to %s: %+v", btc.Address, got)
	}

	sol := b.deposit(money.Solana, 0)
	other := b.deposit(money.Solana, 1)                                                            // the same address, another reference
	b.mustTransfer(TransferRequest{Network: "solana", Asset: "SOL", To: sol.Address, Amount: "1"}) // no reference
	b.mustTransfer(TransferRequest{Network: "solana", Asset: "SOL", To: solAddr, Amount: "2", Reference: sol.Reference})
	got = b.transfers(money.Solana, sol, other, payd.Deposit{Address: sol.Address})
	if len(got) != 1 || got[0].Reference != sol.Reference || got[0].To != solAddr || got[0].Amount.Cmp(coin(t, money.SOL, "2")) != 0 {
		t.Fatalf("solana by reference: %+v", got)
	}
}

func (b *bundle) mustTransfer(r TransferRequest) string {
	b.t.Helper()
	h, err := b.d.Transfer(b.ctx, r)
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// TestTransaction looks transactions up as the explorer does.
func TestTransaction(t *testing.T) {
	b := setup(t)
	from := "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
	dep := b.deposit(money.Tron, 2)
	h := b.mustTransfer(TransferRequest{Network: "tron", Asset: "USDT", To: dep.Address, Amount: "7.25", From: from})
	b.mine(money.Tron, 2)
	tr, err := b.d.Transaction("tron", strings.ToUpper(h))
	if err != nil || tr.TxHash != h || tr.From != from || tr.To != dep.Address || tr.Confirmations != 2 ||
		tr.Amount.Cmp(coin(t, money.USDT, "7.25")) != 0 {
		t.Fatalf("Transaction = %+v, %v", tr, err)
	}
	for _, c := range [][2]string{{"bitcoin", h}, {"tron", otherHash(h)}, {"nope", h}} {
		if _, err := b.d.Transaction(c[0], c[1]); payd.ErrorCode(err) != payd.ErrNotFound {
			t.Errorf("Transaction(%s, %s) = %v, want not_found", c[0], c[1], err)
		}
	}
	want := "http://payd.test/api/v1/devnet/transactions/tron/" + h
	if got := b.d.Network(money.Tron).ExplorerURL(h); got != want {
		t.Errorf("ExplorerURL = %s, want %s", got, want)
	}
}

// otherHash returns a hash that differs from h in its first character,
// always: "00"+h[2:] was h itself whenever h began with "00", one run in
// 256.
func otherHash(h string) string {
	c := byte('0')
	if h[0] == '0' {
		c = '1'
	}
	return string(c) + h[1:]
}

// TestChanged wakes a waiter on every kind of change, on its network only.
func TestChanged(t *testing.T) {
	b := setup(t)
	dep := b.deposit(money.Bitcoin, 0)
	steps := []func(){
		func() { b.pay(money.Bitcoin, money.BTC, dep, "1") },
		func() { b.mine(money.Bitcoin, 1) },
		func() { _, _ = b.d.Reorg(b.ctx, "bitcoin", 1) },
	}
	for i, step := range steps {
		ch, other := b.d.Chain(money.Bitcoin).Changed(), b.d.Changed(money.Solana)
		select {
		case <-ch:
			t.Fatalf("step %d: woken before the change", i)
		default:
		}
		step()
		select {
		case <-ch:
		default:
			t.Fatalf("step %d: the change did not close the channel", i)
		}
		select {
		case <-other:
			t.Fatalf("step %d: solana woke for a bitcoin change", i)
		default:
		}
	}
	if b.d.Changed("dogecoin") != nil || b.d.Network("dogecoin") != nil || b.d.Chain("dogecoin") != nil {
		t.Error("an unknown network has a channel or a chain")
	}
}

// TestChainNetwork checks the payd.Network methods that do not move coins.
func TestChainNetwork(t *testing.T) {
	b := setup(t)
	for _, n := range money.Networks {
		c := b.d.Network(n)
		if c.Name() != n {
			t.Errorf("Name = %s, want %s", c.Name(), n)
		}
		dep := b.deposit(n, 0)
		if err := c.ValidAddress(dep.Address); err != nil {
			t.Errorf("%s: own deposit %s: %v", n, dep.Address, err)
		}
		if (dep.Reference != "") != (n == money.Solana) {
			t.Errorf("%s: reference %q", n, dep.Reference)
		}
		if _, err := c.Deposit(b.wallet.Bitcoin.String()+"x", 0); payd.ErrorCode(err) != payd.ErrInvalidRequest {
			t.Errorf("%s: Deposit with a bad key: %v", n, err)
		}
		if err := c.ValidTxHash("abc"); payd.ErrorCode(err) != payd.ErrInvalidTxHash {
			t.Errorf("%s: ValidTxHash(abc) = %v", n, err)
		}
		if n != money.Bitcoin {
			wantField(t, c.ValidAddress(btcAddr), "address")
		}
	}
	sol := b.d.Network(money.Solana)
	d1, _ := sol.Deposit(b.wallet.Solana.String(), 0)
	d2, _ := sol.Deposit(b.wallet.Solana.String(), 0)
	if d1.Address != solAddr || d1.Reference == d2.Reference {
		t.Errorf("solana deposits %+v, %+v: want the wallet's address and fresh references", d1, d2)
	}
	req := payd.PaymentRequest{Deposit: d1, Amount: coin(t, money.USDC, "5"), Label: "Ada"}
	if got, want := sol.PaymentURI(req), chain.PaymentURI(money.Solana, req); got != want || got == "" {
		t.Errorf("PaymentURI = %q, want %q", got, want)
	}
}

// TestFeeEstimate covers every coin on every network it moves on.
func TestFeeEstimate(t *testing.T) {
	b := setup(t)
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			cents, err := b.d.Network(n).FeeEstimateUSD(context.Background(), a)
			if err != nil || cents < 1 || cents > 500 {
				t.Errorf("%s on %s: %d, %v", a, n, cents, err)
			}
		}
	}
	_, err := b.d.Network(money.Bitcoin).FeeEstimateUSD(context.Background(), money.USDC)
	wantField(t, err, "asset")
}

// BenchmarkTransfers polls 1,000 deposits with a few paid, as a watcher
// does several times a second: about 0.3 ms a poll here.
func BenchmarkTransfers(tb *testing.B) {
	b := setup(tb)
	deps := make([]payd.Deposit, 1000)
	for i := range deps {
		deps[i] = b.deposit(money.Polygon, uint32(i))
	}
	for _, i := range []int{0, 500, 999} {
		b.pay(money.Polygon, money.USDC, deps[i], "1")
	}
	for tb.Loop() {
		if got, _ := b.d.Network(money.Polygon).Transfers(b.ctx, deps); len(got) != 3 {
			tb.Fatalf("%d transfers", len(got))
		}
	}
}
