package payd

import (
	"slices"
	"testing"

	"payd/money"
)

// TestAvailability checks the one owner of what is offered: card only with
// a provider, coins only on networks with an adapter, the business's own
// choices kept.
func TestAvailability(t *testing.T) {
	none := Availability{}
	if !none.None() || none.TakesRail(RailCrypto) || none.TakesRail(RailCard) {
		t.Fatalf("no network and no card takes something: %+v", none)
	}
	if got := none.Defaults("biz_1").AcceptedRails; !slices.Equal(got, []Rail{RailCrypto}) {
		t.Errorf("defaults without a card provider accept %v", got)
	}
	if err := none.CheckRails([]Rail{RailCrypto, RailCard}); err == nil || err.(*Error).Code != ErrRailUnavailable {
		t.Errorf("card without a provider: %v", err)
	}
	btc := Availability{Networks: []money.Network{money.Bitcoin}}
	cs := DefaultCheckoutSettings("biz_1")
	r := btc.Restrict(cs)
	if !slices.Equal(r.AcceptedRails, []Rail{RailCrypto}) || len(r.Offers()) != 1 || r.Offers()[0] != (Offer{money.BTC, money.Bitcoin}) {
		t.Errorf("restricted to bitcoin: %v %v", r.AcceptedRails, r.Offers())
	}
	if len(cs.AcceptedRails) != 2 || len(cs.Offers()) != 9 {
		t.Errorf("Restrict changed the business's settings: %v %v", cs.AcceptedRails, cs.Offers())
	}
	for _, tc := range []struct {
		a    money.Asset
		n    money.Network
		code string
	}{{money.BTC, money.Bitcoin, ""}, {money.USDC, money.Polygon, ErrAssetUnavailable}, {money.BTC, money.Ethereum, ErrAssetUnavailable}} {
		err := btc.CheckCrypto(cs, tc.a, tc.n)
		if tc.code == "" && err != nil || tc.code != "" && (err == nil || err.(*Error).Code != tc.code) {
			t.Errorf("CheckCrypto(%s on %s) = %v, want %q", tc.a, tc.n, err, tc.code)
		}
	}
	if all := (Availability{Networks: money.Networks, Card: true}); !all.Defaults("b").AcceptsRail(RailCard) {
		t.Error("with a card provider the defaults accept card")
	}
}

// A real node's chain without a token contract takes only the coins it
// has: the others are neither offered nor opened.
func TestAvailabilityAssetsOfANode(t *testing.T) {
	a := Availability{Networks: []money.Network{money.Ethereum, money.Bitcoin},
		Assets: map[money.Network][]money.Asset{money.Ethereum: {money.ETH}}}
	if !a.Takes(money.ETH, money.Ethereum) || a.Takes(money.USDC, money.Ethereum) || !a.Takes(money.BTC, money.Bitcoin) ||
		a.Takes(money.USDC, money.Polygon) {
		t.Fatal("Takes answers for another set of coins")
	}
	cs := a.Restrict(DefaultCheckoutSettings("biz_1"))
	if got := cs.AcceptedAssets[money.Ethereum]; len(got) != 1 || got[0] != money.ETH {
		t.Fatalf("ethereum offers %v", got)
	}
	if _, ok := cs.AcceptedAssets[money.Polygon]; ok {
		t.Fatal("polygon offered without a node")
	}
	err := a.CheckCrypto(DefaultCheckoutSettings("biz_1"), money.USDT, money.Ethereum)
	if ErrorCode(err) != ErrAssetUnavailable {
		t.Fatalf("USDT on ethereum without a contract: %v", err)
	}
}
