package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"testing"

	"payd"
	"payd/money"
)

func testHoldings(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		w := mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Bitcoin, money.Ethereum, money.Polygon))
		wantHoldings(t, st, biz.ID, w.ID, "")
		must(t, st.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.BTC, 150_000_000)))
		must(t, st.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.BTC, 1)))
		// 123,456.789… ETH in wei is far beyond int64 and stays exact.
		wei, _ := new(big.Int).SetString("123456789012345678901234", 10)
		must(t, st.AddHoldings(ctx, w.ID, money.Ethereum, money.CoinAmount{Asset: money.ETH, Units: wei}))
		must(t, st.AddHoldings(ctx, w.ID, money.Ethereum, money.NewCoinAmount(money.USDC, 2_500_000)))
		must(t, st.AddHoldings(ctx, w.ID, money.Polygon, money.NewCoinAmount(money.USDC, 1)))
		must(t, st.AddHoldings(ctx, w.ID, money.Ethereum, money.NewCoinAmount(money.ETH, -1)))
		want := "USDC/polygon 0.000001, USDC/ethereum 2.50, BTC/bitcoin 1.50000001, ETH/ethereum 123456.789012345678901233"
		wantHoldings(t, st, biz.ID, w.ID, want)

		err := st.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.BTC, -150_000_002))
		wantCode(t, err, payd.ErrInsufficientFunds)
		wantCode(t, st.AddHoldings(ctx, w.ID, money.Tron, money.NewCoinAmount(money.USDT, 1)), payd.ErrNotFound)
		wantCode(t, st.AddHoldings(ctx, payd.NewID(payd.PrefixWallet), money.Bitcoin, money.NewCoinAmount(money.BTC, 1)), payd.ErrNotFound)
		wantCode(t, st.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.ETH, 1)), payd.ErrInvalidRequest)
		wantCode(t, st.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.BTC, 0)), payd.ErrInvalidRequest)
		wantCode(t, st.AddHoldings(ctx, w.ID, money.Bitcoin, money.CoinAmount{Asset: money.BTC}), payd.ErrInvalidRequest)
		err = st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.AddHoldings(ctx, w.ID, money.Bitcoin, money.NewCoinAmount(money.BTC, 7)); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Tx = %v", err)
		}
		wantHoldings(t, st, biz.ID, w.ID, want)

		ow := mustWallet(t, ctx, st, other.ID, walletKeys("b", money.Bitcoin))
		wantHoldings(t, st, other.ID, w.ID, "")
		wantHoldings(t, st, biz.ID, ow.ID, "")
	}
}

// testHoldingsConcurrent adds to one holding from many transactions at
// once: no addition is lost, whichever database serialises them.
func testHoldingsConcurrent(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	w := mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Ethereum))
	const n = 40
	// 2^62 wei each: the total passes int64 after two of them.
	unit := new(big.Int).Lsh(big.NewInt(1), 62)
	_, errs := parallel(n, func(i int) (struct{}, error) {
		return struct{}{}, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			return q.AddHoldings(ctx, w.ID, money.Ethereum, money.CoinAmount{Asset: money.ETH, Units: unit})
		})
	})
	noErrors(t, errs)
	total := money.CoinAmount{Asset: money.ETH, Units: new(big.Int).Mul(unit, big.NewInt(n))}
	wantHoldings(t, st, biz.ID, w.ID, "ETH/ethereum "+total.String())
}

// wantHoldings checks the wallet's holdings, written "ASSET/network
// amount" in SortHoldings order and joined by ", ".
func wantHoldings(t *testing.T, st payd.Store, bizID, walletID, want string) {
	t.Helper()
	hs, err := st.WalletHoldings(t.Context(), bizID, walletID)
	must(t, err)
	got := ""
	for i, h := range hs {
		if i > 0 {
			got += ", "
		}
		got += fmt.Sprintf("%s/%s %s", h.Amount.Asset, h.Network, h.Amount)
	}
	if got != want {
		t.Fatalf("holdings = %q, want %q", got, want)
	}
}
