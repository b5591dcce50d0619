package api

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"payd"
	"payd/money"
)

// publicBusiness is what a customer sees of the business (spec 2.6).
type publicBusiness struct {
	Name         string  `json:"name"`
	Website      *string `json:"website"`
	SupportEmail *string `json:"support_email"`
	// AccentColor is the checkout pages' accent ("#rrggbb"), null for
	// payd's own.
	AccentColor *string `json:"accent_color"`
	// LogoURL is the business's logo, served by payd; nil when none.
	LogoURL *string `json:"logo_url"`
}

// minorAmount is an amount in minor units of a price currency.
type minorAmount struct {
	Amount   int64          `json:"amount"`
	Currency money.Currency `json:"currency"`
}

// breakdown is how a total is made up (spec 2.7). processing_fee is set
// only when the customer carries the fee; network_fee is the network
// adapter's estimate of what the customer's wallet pays on top (crypto
// only), null when the network cannot say right now.
type breakdown struct {
	Currency      money.Currency `json:"currency"`
	Price         int64          `json:"price"`
	ProcessingFee *int64         `json:"processing_fee"`
	NetworkFee    *int64         `json:"network_fee"`
	Total         int64          `json:"total"`
}

// cryptoOption is one coin on one network a customer may pay with (spec 2.6).
type cryptoOption struct {
	Asset     money.Asset   `json:"asset"`
	Network   money.Network `json:"network"`
	Amount    string        `json:"amount"`
	Rate      minorAmount   `json:"rate"`
	Breakdown breakdown     `json:"breakdown"`
}

// cardOption is paying by card (spec 2.6).
type cardOption struct {
	Rail      payd.Rail   `json:"rail"`
	Available bool        `json:"available"`
	Min       minorAmount `json:"min"`
	Max       minorAmount `json:"max"`
	Total     minorAmount `json:"total"`
	Breakdown breakdown   `json:"breakdown"`
}

// checkoutOffer is what the hosted page of a link or a payment offers,
// shared by both views.
type checkoutOffer struct {
	Business          publicBusiness `json:"business"`
	AcceptingPayments bool           `json:"accepting_payments"`
	CollectEmail      bool           `json:"collect_email"`
	AcceptedRails     []payd.Rail    `json:"accepted_rails"`
	Crypto            []cryptoOption `json:"crypto"`
	Card              []cardOption   `json:"card"`
	QuoteMinutes      int            `json:"quote_minutes"`
	QuoteExpiresAt    Time           `json:"quote_expires_at"`
}

// publicLink is a link as its hosted page sees it (spec 2.6): no ids, no
// internal settings, no fee but one passed on.
type publicLink struct {
	Kind        string         `json:"kind"`
	Code        string         `json:"code"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Amount      int64          `json:"amount"`
	Currency    money.Currency `json:"currency"`
	checkoutOffer
	Request *struct{} `json:"request"`
}

// publicPayment is an API-created payment as its hosted page sees it. Its
// id is there because the page opens checkouts with payment_id.
type publicPayment struct {
	Kind           string             `json:"kind"`
	ID             string             `json:"id"`
	Code           string             `json:"code"`
	Status         payd.PaymentStatus `json:"status"`
	Amount         int64              `json:"amount"`
	Currency       money.Currency     `json:"currency"`
	AmountReceived int64              `json:"amount_received"`
	Description    string             `json:"description"`
	SuccessURL     *string            `json:"success_url"`
	CancelURL      *string            `json:"cancel_url"`
	ExpiresAt      *Time              `json:"expires_at"`
	CanceledAt     *Time              `json:"canceled_at"`
	CheckoutID     *string            `json:"checkout_id"`
	checkoutOffer
}

// getPublicLink serves GET /public/links/{code} (spec 4.5): archived,
// disabled and unknown codes, and codes of payments, are all not_found.
func (s *Server) getPublicLink(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, err := s.store.LinkByCode(ctx, r.PathValue("code"))
	if err == nil && l.Status != payd.LinkActive {
		err = payd.Errorf(payd.ErrNotFound, "link not found")
	}
	if err != nil {
		return err
	}
	offer, err := s.offer(ctx, l.BusinessID, l.Amount, l.Currency, nil, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{publicLink{Kind: "public_link", Code: l.Code, Name: l.Name,
		Description: l.Description, Amount: l.Amount, Currency: l.Currency, checkoutOffer: offer}})
	return nil
}

// getPublicPayment serves GET /public/payments/{code}: payment_not_found
// for an unknown code and for payments made through a link, which are
// paid on the link's page.
func (s *Server) getPublicPayment(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p, err := s.store.PaymentByCode(ctx, r.PathValue("code"))
	if payd.IsNotFound(err) || err == nil && p.LinkID != "" {
		return payd.Errorf(payd.ErrPaymentNotFound, "no payment has this code")
	} else if err != nil {
		return err
	}
	open := p.Status == payd.PaymentPending && p.Live(s.clock.Now())
	offer, err := s.offer(ctx, p.BusinessID, p.Amount, p.Currency, &p.FeePayer, open)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{publicPayment{Kind: "public_payment", ID: p.ID, Code: p.Code,
		Status: p.Status, Amount: p.Amount, Currency: p.Currency, AmountReceived: p.AmountReceived,
		Description: p.Description, SuccessURL: nilIfEmpty(p.SuccessURL), CancelURL: nilIfEmpty(p.CancelURL),
		ExpiresAt: timePtr(p.ExpiresAt), CanceledAt: timePtr(p.CanceledAt), CheckoutID: nilIfEmpty(p.CheckoutID),
		checkoutOffer: offer}})
	return nil
}

// offer builds what a page offers for a price of the business. payer is
// the payment's fee payer, or nil for a link (the settings' default). The
// options are listed only while payments are accepted: open, the business
// not suspended, and some rail and coin accepted that this payd can take
// (payd.Availability: a network with an adapter, a card provider).
func (s *Server) offer(ctx context.Context, bizID string, price int64, c money.Currency, payer *money.FeePayer, open bool) (checkoutOffer, error) {
	biz, err := s.store.BusinessByID(ctx, bizID)
	if err != nil {
		return checkoutOffer{}, err
	}
	cs, err := s.checkoutSettings(ctx, s.store, bizID)
	if err != nil {
		return checkoutOffer{}, err
	}
	cs = s.avail().Restrict(cs)
	if cs.AcceptsRail(payd.RailCard) && !s.cardDeliverable(cs) {
		// No coin the business accepts can be delivered by the provider:
		// a card checkout would answer asset_unavailable, so none is offered.
		cs.AcceptedRails = slices.DeleteFunc(slices.Clone(cs.AcceptedRails), func(r payd.Rail) bool { return r == payd.RailCard })
	}
	if payer == nil {
		payer = &cs.FeePayer
	}
	now := s.clock.Now()
	out := checkoutOffer{
		Business: publicBusiness{Name: cmp.Or(cs.DisplayName, biz.Name), Website: nilIfEmpty(biz.Website),
			SupportEmail: nilIfEmpty(biz.SupportEmail), AccentColor: nilIfEmpty(cs.AccentColor)},
		CollectEmail: cs.CollectEmail, AcceptedRails: cs.AcceptedRails, Crypto: []cryptoOption{}, Card: []cardOption{},
		QuoteMinutes: cs.QuoteMinutes, QuoteExpiresAt: Time(now.Add(time.Duration(cs.QuoteMinutes) * time.Minute)),
	}
	if out.Business.LogoURL, err = s.logoURL(ctx, s.store, bizID); err != nil {
		return checkoutOffer{}, err
	}
	out.AcceptingPayments = open && biz.SuspendedAt == nil && len(cs.AcceptedRails) > 0 &&
		(cs.AcceptsRail(payd.RailCrypto) && len(cs.Offers()) > 0 || cs.AcceptsRail(payd.RailCard))
	if !out.AcceptingPayments {
		return out, nil
	}
	// Without a snapshot a USD price still offers what converts at fixed
	// rates (stablecoins, card); the coins that need a rate are left out.
	x, err := s.ratesFor(ctx, c, "")
	if err != nil {
		return checkoutOffer{}, err
	}
	if cs.AcceptsRail(payd.RailCrypto) {
		if out.Crypto, err = cryptoOptions(price, c, *payer, cs, x, s.networkFee(ctx)); err != nil {
			return checkoutOffer{}, err
		}
	}
	if cs.AcceptsRail(payd.RailCard) {
		card, err := cardOptionFor(price, c, *payer, x.USDPerUnit(c), s.opts.Card.Limits(c, ""))
		if err != nil {
			return checkoutOffer{}, err
		}
		out.Card = append(out.Card, card)
	}
	return out, nil
}

// cryptoOptions quotes every accepted coin and network at the current rate
// (spec 2.11 rule 8). A coin the rates do not price is left out rather
// than failing the whole page.
func cryptoOptions(price int64, c money.Currency, payer money.FeePayer, cs *payd.CheckoutSettings, x *payd.ExchangeRates,
	networkFee func(money.Asset, money.Network) (usdCents int64, ok bool)) ([]cryptoOption, error) {
	split, err := money.SplitFee(price, c, x.USDPerUnit(c), payd.CryptoFeeBps, payer)
	if err != nil {
		return nil, err
	}
	out := []cryptoOption{}
	for _, o := range cs.Offers() {
		coin, err := money.CoinFromUSDCents(split.AmountUSD+split.CustomerFeeUSD, o.Asset, x.CoinCents(o.Asset))
		if err != nil {
			continue
		}
		rate, err := money.CoinRate(o.Asset, x.CoinCents(o.Asset), c, x.USDPerUnit(c))
		if err != nil {
			continue
		}
		bd := breakdownOf(price, c, split, payer)
		if cents, ok := networkFee(o.Asset, o.Network); ok && cents > 0 {
			if fee, err := money.FromUSDCents(cents, x.USDPerUnit(c)); err == nil {
				bd.NetworkFee = &fee
			}
		}
		out = append(out, cryptoOption{Asset: o.Asset, Network: o.Network, Amount: coin.String(),
			Rate: minorAmount{rate, c}, Breakdown: bd})
	}
	return out, nil
}

// networkFee returns the network adapters' fee estimates, in US cents, as
// a checkout opened now would quote them (OpenCryptoCheckout converts them
// the same way); false where a network has no adapter or cannot estimate
// now, which leaves the offer's network_fee null rather than failing the
// page.
func (s *Server) networkFee(ctx context.Context) func(money.Asset, money.Network) (int64, bool) {
	return func(a money.Asset, n money.Network) (int64, bool) {
		net := s.opts.Networks[n]
		if net == nil {
			return 0, false
		}
		cents, err := net.FeeEstimateUSD(ctx, a)
		return cents, err == nil
	}
}

// cardDeliverable reports whether the card provider delivers some coin of
// the (restricted) settings' offers; whether the wallet receives it is
// checked when the checkout opens.
func (s *Server) cardDeliverable(cs *payd.CheckoutSettings) bool {
	return s.opts.Card != nil && slices.ContainsFunc(cs.Offers(), func(o payd.Offer) bool {
		return s.opts.Card.Delivers(o.Asset, o.Network)
	})
}

// cardOptionFor prices paying by card (payd.CardTermsFor): the 300 bps
// fee, passed on when the customer carries it, and whether the total lies
// within the card limits (the spec's 5.00 to 10,000.00 US dollars, narrowed
// by the provider's for the currency; the customer's region is not known
// before the checkout, which checks it again) in the price's currency.
func cardOptionFor(price int64, c money.Currency, payer money.FeePayer, usdRate money.Rate, lim payd.CardLimits) (cardOption, error) {
	t, err := payd.CardTermsFor(price, c, usdRate, payer, lim)
	if err != nil {
		return cardOption{}, err
	}
	return cardOption{Rail: payd.RailCard, Available: t.Within(), Min: minorAmount{t.Min, c}, Max: minorAmount{t.Max, c},
		Total: minorAmount{t.Split.Total, c}, Breakdown: breakdownOf(price, c, t.Split, payer)}, nil
}

// breakdownOf shows a fee only when the customer carries it.
func breakdownOf(price int64, c money.Currency, split money.FeeSplit, payer money.FeePayer) breakdown {
	b := breakdown{Currency: c, Price: price, Total: split.Total}
	if payer == money.FeePayerCustomer && split.FeeUSD > 0 {
		fee := split.CustomerFee
		b.ProcessingFee = &fee
	}
	return b
}
