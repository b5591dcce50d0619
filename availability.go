package payd

import (
	"slices"

	"payd/money"
)

// Availability is what this payd can take payments with, as cmd/payd wired
// it: the networks that have an adapter (every network of the devnet with
// --dev; without it, only those pointed at a real node) and whether a card
// provider is configured. It is the one owner of what is offered: a
// business's checkout settings say what it would accept, and Restrict cuts
// them down to what can actually be paid, for public links and payments,
// their pages and POST /checkouts alike.
type Availability struct {
	// Networks are the networks a checkout can be opened on.
	Networks []money.Network
	// Assets are the coins each of them takes, when its adapter takes
	// fewer than the network moves (a real node's chain without a token
	// contract); a network without an entry takes all of its coins.
	Assets map[money.Network][]money.Asset
	// Card says a card provider is configured.
	Card bool
}

// TakesNetwork reports whether a checkout can be opened on n.
func (a Availability) TakesNetwork(n money.Network) bool { return slices.Contains(a.Networks, n) }

// Takes reports whether a checkout can be opened for coin asset on n.
func (a Availability) Takes(asset money.Asset, n money.Network) bool {
	if !a.TakesNetwork(n) {
		return false
	}
	only, ok := a.Assets[n]
	return !ok || slices.Contains(only, asset)
}

// TakesRail reports whether the rail can be paid on at all.
func (a Availability) TakesRail(r Rail) bool {
	switch r {
	case RailCrypto:
		return len(a.Networks) > 0
	case RailCard:
		return a.Card
	}
	return false
}

// None reports that nothing at all can be paid: no network and no card.
func (a Availability) None() bool { return !a.TakesRail(RailCrypto) && !a.TakesRail(RailCard) }

// Defaults are the checkout settings of a business that never saved any:
// DefaultCheckoutSettings, with the card rail only when a card provider is
// configured. Every coin stays accepted, as the business's choice, so that
// a network the operator adds later is offered without the business
// having to ask for it.
func (a Availability) Defaults(businessID string) *CheckoutSettings {
	cs := DefaultCheckoutSettings(businessID)
	if !a.Card {
		cs.AcceptedRails = []Rail{RailCrypto}
	}
	return cs
}

// CheckRails refuses, as rail_unavailable, a rail the business asks to
// accept that this payd cannot take: card without a card provider.
func (a Availability) CheckRails(rails []Rail) error {
	if slices.Contains(rails, RailCard) && !a.Card {
		return &Error{Code: ErrRailUnavailable, Field: "accepted_rails",
			Message: "card payments are not available on this payd: no card provider is configured"}
	}
	return nil
}

// Restrict returns a copy of cs with only what can be paid here: the rails
// this payd takes and the coins on networks with an adapter. Its offers
// may be empty; then nothing is offered and the business does not accept
// payments now.
func (a Availability) Restrict(cs *CheckoutSettings) *CheckoutSettings {
	out := *cs
	out.AcceptedRails = slices.DeleteFunc(slices.Clone(cs.AcceptedRails), func(r Rail) bool { return !a.TakesRail(r) })
	out.AcceptedAssets = map[money.Network][]money.Asset{}
	for n, assets := range cs.AcceptedAssets {
		assets = slices.DeleteFunc(slices.Clone(assets), func(x money.Asset) bool { return !a.Takes(x, n) })
		if len(assets) > 0 {
			out.AcceptedAssets[n] = assets
		}
	}
	return &out
}

// CheckCrypto refuses a coin on a network the settings, restricted to what
// this payd takes, do not offer: rail_unavailable when crypto is not taken
// at all, asset_unavailable for the coin on that network (spec 7.4).
func (a Availability) CheckCrypto(cs *CheckoutSettings, asset money.Asset, n money.Network) error {
	switch {
	case !cs.AcceptsRail(RailCrypto):
		return Errorf(ErrRailUnavailable, "this business does not take crypto payments")
	case !money.Supports(asset, n) || !cs.Accepts(asset, n):
		return Errorf(ErrAssetUnavailable, "this business does not take %s on %s", asset, n)
	case !a.TakesNetwork(n):
		return Errorf(ErrAssetUnavailable, "%s cannot be paid on this payd: no %s node is configured", n, n)
	case !a.Takes(asset, n):
		return Errorf(ErrAssetUnavailable, "%s cannot be paid on %s on this payd: the %s node's chain has no %s contract configured",
			asset, n, n, asset)
	}
	return nil
}
