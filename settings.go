package payd

import (
	"context"
	"slices"
	"time"

	"payd/money"
)

// CheckoutSettings is how a business's checkouts behave. A business that
// never changed them has DefaultCheckoutSettings.
type CheckoutSettings struct {
	BusinessID string
	// QuoteMinutes is how long a quote stays locked (spec 2.11 rule 8).
	QuoteMinutes int
	// CollectEmail makes checkout ask the customer for an email.
	CollectEmail bool
	// FeePayer is the default fee_payer of new payments.
	FeePayer money.FeePayer
	// AcceptedRails are the rails checkout offers.
	AcceptedRails []Rail
	// AcceptedAssets maps each accepted network to the coins accepted on it.
	AcceptedAssets map[money.Network][]money.Asset
	UpdatedAt      time.Time
}

// CheckoutSettingsStore keeps checkout settings.
type CheckoutSettingsStore interface {
	// CheckoutSettings returns the business's settings; not_found when it
	// never saved any (the caller then uses DefaultCheckoutSettings).
	CheckoutSettings(ctx context.Context, businessID string) (*CheckoutSettings, error)
	// SaveCheckoutSettings creates or replaces the business's settings.
	SaveCheckoutSettings(ctx context.Context, s *CheckoutSettings) error
}

// Bounds of CheckoutSettings.QuoteMinutes. A quote shorter than a minute
// cannot be paid from a phone; one longer than an hour leaves the business
// carrying an hour of a volatile coin's price moves.
const (
	MinQuoteMinutes     = 1
	MaxQuoteMinutes     = 60
	DefaultQuoteMinutes = 15
)

// DefaultCheckoutSettings are the settings of a business that never saved
// any: a 15-minute quote (spec 2.11 rule 8), no email asked, the business
// pays fees, both rails, and every coin on every network it moves on.
func DefaultCheckoutSettings(businessID string) *CheckoutSettings {
	assets := map[money.Network][]money.Asset{}
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			assets[n] = append(assets[n], a)
		}
	}
	return &CheckoutSettings{
		BusinessID: businessID, QuoteMinutes: DefaultQuoteMinutes, FeePayer: money.FeePayerBusiness,
		AcceptedRails: []Rail{RailCrypto, RailCard}, AcceptedAssets: assets,
	}
}

// Validate checks the settings and puts them in canonical order (rails as
// in RailCrypto, RailCard; each network's coins in money.Assets order;
// networks with no coin dropped), so that equal settings are stored and
// shown identically. At least one rail and one coin are required: card
// payments also settle in a coin, so with no coin nothing could be paid.
func (s *CheckoutSettings) Validate() error {
	if s.QuoteMinutes < MinQuoteMinutes || s.QuoteMinutes > MaxQuoteMinutes {
		return FieldError("quote_minutes", "quote_minutes must be from %d to %d", MinQuoteMinutes, MaxQuoteMinutes)
	}
	if err := checkFeePayer(s.FeePayer); err != nil {
		return err
	}
	rails, err := canonicalRails(s.AcceptedRails)
	if err != nil {
		return err
	}
	assets, err := canonicalAssets(s.AcceptedAssets)
	if err != nil {
		return err
	}
	s.AcceptedRails, s.AcceptedAssets = rails, assets
	return nil
}

// canonicalRails checks rails and returns them in canonical order.
func canonicalRails(rails []Rail) ([]Rail, error) {
	var out []Rail
	for _, r := range []Rail{RailCrypto, RailCard} {
		if slices.Contains(rails, r) {
			out = append(out, r)
		}
	}
	for _, r := range rails {
		if r != RailCrypto && r != RailCard {
			return nil, FieldError("accepted_rails", "rail %q is neither crypto nor card", r)
		}
	}
	if len(out) != len(rails) {
		return nil, FieldError("accepted_rails", "accepted_rails names a rail more than once")
	}
	if len(out) == 0 {
		return nil, FieldError("accepted_rails", "accept at least one rail")
	}
	return out, nil
}

// canonicalAssets checks that every coin moves on its network and is named
// once, and returns the map in canonical order.
func canonicalAssets(m map[money.Network][]money.Asset) (map[money.Network][]money.Asset, error) {
	out := map[money.Network][]money.Asset{}
	for n, assets := range m {
		field := "accepted_assets." + string(n)
		if !n.Valid() {
			return nil, FieldError(field, "network %q is not one of bitcoin, ethereum, polygon, solana, tron", n)
		}
		for i, a := range assets {
			if !money.Supports(a, n) {
				return nil, FieldError(field, "%q is not a coin payd accepts on %s", a, n)
			}
			if slices.Contains(assets[:i], a) {
				return nil, FieldError(field, "%s is named more than once", a)
			}
		}
		if len(assets) > 0 {
			out[n] = slices.DeleteFunc(slices.Clone(money.Assets), func(a money.Asset) bool { return !slices.Contains(assets, a) })
		}
	}
	if len(out) == 0 {
		return nil, FieldError("accepted_assets", "accept at least one coin on one network")
	}
	return out, nil
}

// AcceptsRail reports whether checkout offers the rail.
func (s *CheckoutSettings) AcceptsRail(r Rail) bool { return slices.Contains(s.AcceptedRails, r) }

// Offer is one coin on one network that checkout offers.
type Offer struct {
	Asset   money.Asset
	Network money.Network
}

// Accepts reports whether the business takes coin a on network n.
func (s *CheckoutSettings) Accepts(a money.Asset, n money.Network) bool {
	return slices.Contains(s.AcceptedAssets[n], a)
}

// Offers lists the accepted coins and networks in a stable order: coins in
// money.Assets order, each on its networks in the spec's order (2.11 rule 9).
func (s *CheckoutSettings) Offers() []Offer {
	var out []Offer
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			if slices.Contains(s.AcceptedAssets[n], a) {
				out = append(out, Offer{a, n})
			}
		}
	}
	return out
}

// Fee rates and card limits of checkout (spec 2.11 rule 5, 7.4). Card
// limits are US-dollar values, offered in the price's currency at the
// rates in force.
const (
	CryptoFeeBps    = 0
	CardFeeBps      = 300
	CardMinUSDCents = 500
	CardMaxUSDCents = 1_000_000
)

// checkFeePayer requires a known fee payer (payments and settings alike).
func checkFeePayer(p money.FeePayer) error {
	if !p.Valid() {
		return FieldError("fee_payer", "fee_payer must be business or customer")
	}
	return nil
}
