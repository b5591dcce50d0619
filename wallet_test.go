package payd

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"payd/money"
)

func TestNewWallet(t *testing.T) {
	ok := map[money.Network]string{money.Bitcoin: "zpub-a", money.Solana: "sol-a"}
	w, err := NewWallet("biz_1", ok, keyIDs(ok), WalletAttached, testNow)
	if err != nil || !HasPrefix(w.ID, PrefixWallet) || w.BusinessID != "biz_1" || !w.CreatedAt.Equal(testNow) {
		t.Fatalf("NewWallet = %+v, %v", w, err)
	}
	ok[money.Tron] = "changed after"
	if w.CanReceive(money.Tron) {
		t.Fatal("the wallet shares the caller's map")
	}
	for _, c := range []struct {
		name   string
		keys   map[money.Network]string
		source WalletSource
		field  string
	}{
		{"no keys", nil, WalletAttached, "keys"},
		{"empty map", map[money.Network]string{}, WalletGenerated, "keys"},
		{"unknown network", map[money.Network]string{"dogecoin": "x"}, WalletAttached, "keys.dogecoin"},
		{"empty key", map[money.Network]string{money.Tron: ""}, WalletAttached, "keys.tron"},
		{"spaces", map[money.Network]string{money.Tron: " xpub"}, WalletAttached, "keys.tron"},
		{"too long", map[money.Network]string{money.Bitcoin: strings.Repeat("z", MaxAccountKeyLength+1)}, WalletAttached, "keys.bitcoin"},
		{"unknown source", ok, "imported", ""},
	} {
		_, err := NewWallet("biz_1", c.keys, keyIDs(c.keys), c.source, testNow)
		if ErrorCode(err) != ErrInvalidRequest || err.(*Error).Field != c.field {
			t.Errorf("%s: %v, want invalid_request naming %q", c.name, err, c.field)
		}
	}
}

// TestNewWalletNeedsIdentities refuses a key without the identity it is
// told apart by: without one, a re-serialised key would pass for another.
func TestNewWalletNeedsIdentities(t *testing.T) {
	keys := map[money.Network]string{money.Bitcoin: "zpub-a", money.Solana: "sol-a"}
	ids := keyIDs(keys)
	delete(ids, money.Solana)
	if _, err := NewWallet("biz_1", keys, ids, WalletAttached, testNow); ErrorCode(err) != ErrInvalidRequest {
		t.Fatalf("a key without identity: %v", err)
	}
	w, err := NewWallet("biz_1", keys, keyIDs(keys), WalletAttached, testNow)
	if err != nil || w.KeyIDs[money.Solana] != "id-sol-a" || len(w.KeyIDs) != 2 {
		t.Fatalf("KeyIDs = %v, %v", w, err)
	}
}

// keyIDs makes up an identity per key.
func keyIDs(keys map[money.Network]string) map[money.Network]string {
	ids := map[money.Network]string{}
	for n, k := range keys {
		ids[n] = "id-" + k
	}
	return ids
}

func TestWalletReceives(t *testing.T) {
	w := &Wallet{Keys: map[money.Network]string{money.Ethereum: "xpub-e", money.Polygon: "xpub-e", money.Tron: "xpub-t"}}
	if got := w.Networks(); !slices.Equal(got, []money.Network{money.Ethereum, money.Polygon, money.Tron}) {
		t.Fatalf("Networks = %v", got)
	}
	for n, want := range map[money.Network][]money.Asset{
		money.Ethereum: {money.USDC, money.USDT, money.ETH},
		money.Polygon:  {money.USDC},
		money.Tron:     {money.USDT},
		money.Bitcoin:  nil,
		money.Solana:   nil,
	} {
		if got := w.Assets(n); !slices.Equal(got, want) {
			t.Errorf("Assets(%s) = %v, want %v", n, got, want)
		}
	}
	for _, c := range []struct {
		w    *Wallet
		a    money.Asset
		n    money.Network
		want bool
	}{
		{w, money.USDT, money.Tron, true},
		{w, money.ETH, money.Ethereum, true},
		{w, money.ETH, money.Polygon, false}, // ETH does not move on polygon
		{w, money.BTC, money.Bitcoin, false}, // no bitcoin key
		{w, "DOGE", money.Ethereum, false},
		{nil, money.USDC, money.Ethereum, false},
	} {
		if got := c.w.Receives(c.a, c.n); got != c.want {
			t.Errorf("Receives(%s, %s) = %v", c.a, c.n, got)
		}
		err := c.w.CheckReceives(c.a, c.n)
		if (err == nil) != c.want || (err != nil && ErrorCode(err) != ErrNotAccepting) {
			t.Errorf("CheckReceives(%s, %s) = %v", c.a, c.n, err)
		}
	}
	var none *Wallet
	if none.CanReceive(money.Bitcoin) || len(none.Networks()) != 0 || none.Assets(money.Bitcoin) != nil {
		t.Fatal("a nil wallet receives something")
	}
}

func TestWalletBalances(t *testing.T) {
	w := &Wallet{Keys: map[money.Network]string{money.Bitcoin: "zpub", money.Polygon: "xpub"}}
	wei, _ := new(big.Int).SetString("10000000000000000001", 10)
	held := []Holding{
		{Network: money.Bitcoin, Amount: money.NewCoinAmount(money.BTC, 5)},
		// Held on a network the wallet no longer receives on: still shown.
		{Network: money.Ethereum, Amount: money.CoinAmount{Asset: money.ETH, Units: wei}},
		{Network: money.Polygon, Amount: money.NewCoinAmount(money.USDC, 1_000_000)},
	}
	got := describe(w.Balances(held))
	want := "USDC/polygon 1.00, BTC/bitcoin 0.00000005, ETH/ethereum 10.000000000000000001"
	if got != want {
		t.Fatalf("Balances = %q, want %q", got, want)
	}
	if got := describe(w.Balances(nil)); got != "USDC/polygon 0.00, BTC/bitcoin 0.00000000" {
		t.Fatalf("Balances(nil) = %q", got)
	}
	slices.Reverse(held)
	SortHoldings(held)
	if got := describe(held); got != want {
		t.Fatalf("SortHoldings = %q", got)
	}
}

func TestCheckHoldingDelta(t *testing.T) {
	for _, c := range []struct {
		n    money.Network
		a    money.CoinAmount
		fail bool
	}{
		{money.Bitcoin, money.NewCoinAmount(money.BTC, 1), false},
		{money.Tron, money.NewCoinAmount(money.USDT, -1), false},
		{money.Tron, money.NewCoinAmount(money.USDC, 1), true},
		{money.Bitcoin, money.NewCoinAmount(money.BTC, 0), true},
		{money.Bitcoin, money.CoinAmount{Asset: money.BTC}, true},
		{"dogecoin", money.NewCoinAmount("DOGE", 1), true},
	} {
		if err := CheckHoldingDelta(c.n, c.a); (err != nil) != c.fail {
			t.Errorf("CheckHoldingDelta(%s, %s %s) = %v", c.n, c.a, c.a.Asset, err)
		}
	}
}

// describe writes holdings as "ASSET/network amount", joined by ", ".
func describe(hs []Holding) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s/%s %s", h.Amount.Asset, h.Network, h.Amount)
	}
	return strings.Join(parts, ", ")
}
