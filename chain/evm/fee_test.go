package evm

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

func TestFeeCents(t *testing.T) {
	gwei := func(n int64) *big.Int { return big.NewInt(n * 1e9) }
	for _, c := range []struct {
		wei        *big.Int
		gas, price int64
		want       int64
	}{
		{gwei(5), 21_000, 320_000, 34},  // 105,000 gwei at $3,200: 33.6 cents, up
		{gwei(5), 65_000, 320_000, 104}, // 104.0 exactly
		{gwei(1), 21_000, 10_000, 1},    // 0.21 cents at $100: the minimum
		{big.NewInt(0), 21_000, 1, 1},   // free chains still show a cent
		{gwei(100), 65_000, 320_000, 2080},
	} {
		got, ok := feeCents(c.wei, c.gas, c.price)
		if !ok || got != c.want {
			t.Errorf("feeCents(%s wei, %d gas, %d) = %d, want %d", c.wei, c.gas, c.price, got, c.want)
		}
	}
	huge := new(big.Int).Lsh(big.NewInt(1), 255)
	if _, ok := feeCents(huge, 65_000, 320_000); ok {
		t.Error("feeCents took a 2^255 wei gas price")
	}
}

// TestFeeCache reads the gas price once a minute, and falls back on
// eth_gasPrice when the node has no eth_feeHistory.
func TestFeeCache(t *testing.T) {
	f := serve(t, "0x1", func(method string, _ []json.RawMessage) (any, *rpcError) {
		switch method {
		case "eth_feeHistory":
			return map[string]any{"baseFeePerGas": []string{"0x1", "0x2", "0x12a05f200"}, // 5 gwei next
				"reward": [][]string{{"0x0"}, {"0x3b9aca00"}, {"0x77359400"}}}, nil // 0, 1, 2 gwei: median 1
		}
		return nil, &rpcError{-32601, "method not found"}
	})
	clk := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	n := newNode(t, money.Ethereum, f.URL, Options{Clock: clk})
	ctx := context.Background()
	want := int64(41) // 6 gwei × 21,000 at $3,200 = 40.32 cents, up
	for range 3 {
		got, err := n.FeeEstimateUSD(ctx, money.ETH)
		if err != nil || got != want {
			t.Fatalf("FeeEstimateUSD = %d, %v; want %d", got, err, want)
		}
		clk.Advance(20 * time.Second)
	}
	if got := f.count("eth_feeHistory"); got != 1 {
		t.Errorf("%d eth_feeHistory calls in 40 s, want 1", got)
	}
	clk.Advance(time.Minute)
	n.FeeEstimateUSD(ctx, money.USDC)
	if got := f.count("eth_feeHistory"); got != 2 {
		t.Errorf("%d eth_feeHistory calls after a minute, want 2", got)
	}

	legacy := serve(t, "0x1", func(method string, _ []json.RawMessage) (any, *rpcError) {
		if method == "eth_gasPrice" {
			return "0x4a817c800", nil // 20 gwei
		}
		return nil, &rpcError{-32601, "the method eth_feeHistory does not exist"}
	})
	n = newNode(t, money.Ethereum, legacy.URL, Options{})
	if got, err := n.FeeEstimateUSD(ctx, money.USDT); err != nil || got != 416 { // 20 gwei × 65,000 at $3,200
		t.Errorf("with eth_gasPrice: %d, %v; want 416", got, err)
	}

	noPrice := newNode(t, money.Ethereum, legacy.URL, Options{
		Price: func(context.Context, money.Asset) (int64, error) { return 0, errors.New("no rate yet") }})
	if _, err := noPrice.FeeEstimateUSD(ctx, money.ETH); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("without a price: %v, want upstream_unavailable", err)
	}
}

// TestGasPriceCeiling answers a gas price no chain charges (10^30 wei, a
// node gone wrong): the estimate uses the 2,000 gwei ceiling.
func TestGasPriceCeiling(t *testing.T) {
	f := serve(t, "0x1", func(method string, _ []json.RawMessage) (any, *rpcError) {
		if method == "eth_gasPrice" {
			return "0xc9f2c9cd04674edea40000000", nil // 10^30 wei
		}
		return nil, &rpcError{-32601, "method not found"}
	})
	n := newNode(t, money.Ethereum, f.URL, Options{})
	// 2,000 gwei × 21,000 gas = 0.042 ETH, at $3,200: $134.40.
	if got, err := n.FeeEstimateUSD(context.Background(), money.ETH); err != nil || got != 13_440 {
		t.Errorf("FeeEstimateUSD = %d, %v; want 13440 cents", got, err)
	}
}

// TestPolygonFeeInPOL prices polygon's gas in POL when the rates have a
// POL price, and falls back on the one-cent minimum when they do not.
func TestPolygonFeeInPOL(t *testing.T) {
	f := serve(t, "0x89", func(method string, _ []json.RawMessage) (any, *rpcError) {
		if method == "eth_gasPrice" {
			return "0xba43b74000", nil // 800 gwei: a polygon fee spike
		}
		return nil, &rpcError{-32601, "method not found"}
	})
	ctx := context.Background()
	var asked []money.Asset
	pol := func(_ context.Context, a money.Asset) (int64, error) {
		asked = append(asked, a)
		return 50, nil // $0.50 a POL
	}
	n := newNode(t, money.Polygon, f.URL, Options{Price: pol})
	// 800 gwei × 65,000 gas = 0.052 POL, at $0.50: 2.6 cents, up.
	if got, err := n.FeeEstimateUSD(ctx, money.USDC); err != nil || got != 3 {
		t.Errorf("FeeEstimateUSD = %d, %v; want 3", got, err)
	}
	if len(asked) != 1 || asked[0] != money.POL {
		t.Errorf("priced %v, want POL", asked)
	}
	for name, price := range map[string]func(context.Context, money.Asset) (int64, error){
		"error": func(context.Context, money.Asset) (int64, error) { return 0, errors.New("no POL price") },
		"zero":  func(context.Context, money.Asset) (int64, error) { return 0, nil },
	} {
		n := newNode(t, money.Polygon, f.URL, Options{Price: price})
		if got, err := n.FeeEstimateUSD(ctx, money.USDC); err != nil || got != 1 {
			t.Errorf("without a POL price (%s): %d, %v; want the 1-cent minimum", name, got, err)
		}
	}
}
