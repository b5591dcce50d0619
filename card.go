package payd

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"payd/money"
)

// The card rail (spec 1, 2.2.2, 7.4; docs/card.md): the customer pays by
// card on a provider's hosted page, the provider delivers the coin the
// business chose to a fresh deposit of its wallet, and the watcher follows
// that delivery on the network as it follows a crypto payment. A card
// checkout is therefore a crypto checkout's deposit and quote (Crypto: the
// coin to be delivered, after the fee) plus the provider's attempts (Card).

// CardStatus is where the current attempt (route) of a card checkout
// stands, as its provider last reported it.
type CardStatus string

// The card statuses, in the order an attempt moves through them.
const (
	// CardAwaiting: the provider's session is open; the customer is on
	// (or on the way to) its hosted card page.
	CardAwaiting CardStatus = "awaiting_payment"
	// CardChallenge: the provider asked the customer for a challenge step
	// (3-D Secure); the payment may still succeed.
	CardChallenge CardStatus = "challenge"
	// CardProcessing: the card was charged (or is being); the coin will follow.
	CardProcessing CardStatus = "processing"
	// CardDelivered: the provider sent the coin; its transaction is named,
	// and payd waits for it on the network like any transfer.
	CardDelivered CardStatus = "delivered"
	// CardDeclined: this attempt failed; another route may be tried while
	// one is left.
	CardDeclined CardStatus = "declined"
)

// rank orders the statuses so that a report older than what is known
// (webhooks and polls arrive in any order) changes nothing.
func (s CardStatus) rank() int {
	switch s {
	case CardAwaiting:
		return 1
	case CardChallenge:
		return 2
	case CardProcessing:
		return 3
	case CardDelivered, CardDeclined:
		return 4
	}
	return 0
}

// Final reports whether the route is over: delivered or declined.
func (s CardStatus) Final() bool { return s == CardDelivered || s == CardDeclined }

// Valid reports whether s is a card status.
func (s CardStatus) Valid() bool { return s.rank() > 0 }

// MayStillSucceed reports whether the customer's payment on the route's
// page may still go through: the route cannot be replaced meanwhile
// (route_in_progress).
func (s CardStatus) MayStillSucceed() bool { return s == CardAwaiting || s == CardChallenge }

// InProgress reports whether the current route's provider page may still
// take the customer's payment: its session is open and the provider has
// not charged or declined yet. A route whose session was never opened
// (the provider refused, or the customer never went) holds nothing up.
func (k *Card) InProgress() bool { return k != nil && k.Session != "" && k.Status.MayStillSucceed() }

// CardHold is how long past its quote's end a card checkout whose provider
// page may still take the payment is held open: the customer may be
// paying, and a charge must find its checkout, not an expired one.
const CardHold = time.Hour

// Charged reports whether the card was charged: the coin is on its way.
func (s CardStatus) Charged() bool { return s == CardProcessing || s == CardDelivered }

// CardMaxRoutes is how many attempts (routes) one card checkout may make:
// after a decline the customer may try again, on a new provider session,
// until they are used up (no_route).
const CardMaxRoutes = 3

// Card is a card checkout's attempts (spec 2.5 card; docs/card.md).
type Card struct {
	// Provider names the card provider (CardProvider.Name).
	Provider string
	// Route counts the attempts, from 1; the current one is the last.
	Route int
	// Session is the provider's id for the current route's session, and
	// RedirectURL its hosted card page.
	Session     string
	RedirectURL string
	Status      CardStatus
	// Country is the customer's region the limits were checked for.
	Country string
	// What the provider reported of the card and the charge.
	Brand, Last4, CardCountry, Reference string
	// DeclineCode and DeclineMessage say why the current route was declined.
	DeclineCode, DeclineMessage string
	// TxHash is the delivery transaction the provider named.
	TxHash string
	// Gross is the coin the customer's total is worth at the quote's rate
	// (the method's expected amount); the checkout's Crypto.Amount is what
	// reaches the wallet after the fee.
	Gross money.CoinAmount
}

// RoutesLeft is how many more attempts the checkout may start.
func (c *Card) RoutesLeft() int { return max(0, CardMaxRoutes-c.Route) }

// CardReport is one status change of a provider session, from its signed
// webhook or from polling it; applying the same report twice changes
// nothing the second time.
type CardReport struct {
	// Session is the provider's session id.
	Session string
	Status  CardStatus
	// Brand (visa, mastercard, …), Last4, CardCountry (the card's issuing
	// country) and Reference (the provider's own reference for the charge)
	// are set when the provider says them.
	Brand, Last4, CardCountry, Reference string
	// DeclineCode is one of the CardDecline codes; DeclineMessage the
	// provider's words for the customer.
	DeclineCode, DeclineMessage string
	// TxHash is the delivery transaction, with CardDelivered.
	TxHash string
}

// The decline codes of a route (decline_code; the failure_code of a
// checkout whose last route was declined).
const (
	CardDeclinedGeneric   = "card_declined"
	CardInsufficientFunds = "insufficient_funds"
	CardChallengeFailed   = "challenge_failed"
	CardSessionExpired    = "session_expired"
)

// EventCardUpdated is the payment history entry of a card route's status
// change (its data: status, route, provider and what the provider said).
const EventCardUpdated = "card_updated"

// CardSessionRequest is what a provider needs to open a hosted card page
// for one route of a checkout.
type CardSessionRequest struct {
	CheckoutID string
	Route      int
	// Amount and Currency are what the customer is charged: the
	// checkout's total (the price, plus the fee when passed on).
	Amount   int64
	Currency money.Currency
	// Deliver is the coin the provider sends to Address on the network:
	// the total's value less the card fee.
	Deliver money.CoinAmount
	Network money.Network
	Address string
	// Reference is the Solana Pay reference the delivery must carry on
	// solana, where deposits share an address; "" elsewhere.
	Reference string
	Email     string
	// Country is the customer's region ("" when unknown).
	Country string
	// ReturnURL is where the provider sends the customer back: the
	// checkout page, which follows the status live.
	ReturnURL string
	// CustomerIP is the customer's address, which some providers require.
	CustomerIP string
	// ExpiresAt is the quote's end: a session is no use after it.
	ExpiresAt time.Time
}

// CardSession is an opened provider session.
type CardSession struct {
	ID          string
	RedirectURL string
}

// CardLimits are the card totals a provider takes, in US cents.
type CardLimits struct {
	MinUSD, MaxUSD int64
}

// CardProvider is the seam to a card on-ramp (docs/card.md): payd opens a
// session on the provider's hosted page for each route, learns of its
// status changes by signed webhook and by polling (whichever comes first;
// both are applied idempotently), and the provider delivers the coin to
// the checkout's deposit. card/sandbox is payd's own stand-in; card/stripe
// speaks to Stripe's crypto onramp.
type CardProvider interface {
	// Name is the provider's name as checkouts record it ("sandbox").
	Name() string
	// Delivers reports whether the provider can deliver asset on n.
	Delivers(asset money.Asset, n money.Network) bool
	// Limits are the totals the provider takes for a price in c from a
	// customer in country ("" when unknown), in US cents; payd applies
	// them within the spec's 5.00 to 10,000.00 US dollars.
	Limits(c money.Currency, country string) CardLimits
	// NeedsEmail reports whether the provider needs the customer's email
	// (email_required without one).
	NeedsEmail() bool
	// Start opens a session for one route. upstream_unavailable when the
	// provider cannot be reached.
	Start(ctx context.Context, req CardSessionRequest) (CardSession, error)
	// Status polls a session's state now.
	Status(ctx context.Context, session string) (CardReport, error)
	// Webhook checks a provider webhook's signature and reads its reports;
	// an error with code invalid_signature for a bad or stale signature.
	// A well-signed body about nothing payd follows gives no reports.
	Webhook(header http.Header, body []byte) ([]CardReport, error)
}

// CardDeclined reports whether a report declines the route.
func (r CardReport) declined() bool { return r.Status == CardDeclined }

// applies reports whether the report moves the current route forward: a
// report for another session, of the same or an older status, or after
// the route ended changes nothing.
func (k *Card) applies(r CardReport) bool {
	if r.Session != k.Session || !r.Status.Valid() {
		return false
	}
	return !k.Status.Final() && r.Status.rank() > k.Status.rank()
}

// ApplyCardReport applies a provider's report about the checkout's
// current route to the checkout and its payment (docs/card.md): a report
// for another (older) route's session, or one older than what is known,
// changes nothing. It records a card_updated entry in the payment's
// history for every status change, the card's details on the payment's
// method, and the checkout's status: processing once charged, failed when
// declined with no route left (a link's payment fails with it). The coin
// itself is counted by the watcher, from the network. It reports whether
// anything changed.
func (c *Checkout) ApplyCardReport(p *Payment, r CardReport, now time.Time) bool {
	k := c.Card
	if c.Rail != RailCard || k == nil || !k.applies(r) {
		return false
	}
	k.Status = r.Status
	for dst, v := range map[*string]string{&k.Brand: r.Brand, &k.Last4: r.Last4, &k.CardCountry: r.CardCountry,
		&k.Reference: r.Reference, &k.TxHash: r.TxHash} {
		if v != "" {
			*dst = v
		}
	}
	if r.declined() {
		k.DeclineCode, k.DeclineMessage = orDefault(r.DeclineCode, CardDeclinedGeneric), r.DeclineMessage
	}
	c.UpdatedAt = now
	if c.current(p) && p.Method != nil {
		p.Method.Card = k.method()
	}
	data, _ := json.Marshal(cardEventData(k))
	p.addEvent(EventCardUpdated, data, now)
	switch {
	case r.Status.Charged() && c.Status == CheckoutOpen:
		c.Status = CheckoutProcessing
		if c.SentAt == nil {
			c.SentAt = &now
		}
	case r.declined() && c.Status == CheckoutProcessing && len(c.Transfers) == 0:
		// Declined after the charge was reported (reversed): nothing is on
		// its way; the checkout waits again, or fails with no route left.
		c.Status, c.SentAt = CheckoutOpen, nil
	}
	if r.declined() && c.Status == CheckoutOpen && k.RoutesLeft() == 0 {
		c.fail(p, k.DeclineCode, now)
	}
	return true
}

// method is what the payment's method shows of the current route.
func (k *Card) method() *MethodCard {
	return &MethodCard{Provider: k.Provider, Status: k.Status, Brand: k.Brand, Last4: k.Last4,
		Country: k.CardCountry, Reference: k.Reference}
}

// cardEventData is the data of a card_updated history entry.
func cardEventData(k *Card) map[string]any {
	d := map[string]any{"status": k.Status, "route": k.Route, "provider": k.Provider}
	for name, v := range map[string]string{"brand": k.Brand, "last4": k.Last4, "country": k.CardCountry,
		"provider_reference": k.Reference, "tx_hash": k.TxHash} {
		if v != "" {
			d[name] = v
		}
	}
	if k.Status == CardDeclined {
		d["decline_code"], d["decline_message"] = k.DeclineCode, k.DeclineMessage
	}
	return d
}

// fail ends a checkout that cannot go on (checkout_failed); a link's
// payment, which exists only for it, fails with it.
func (c *Checkout) fail(p *Payment, code string, now time.Time) {
	c.Status, c.FailureCode = CheckoutFailed, code
	c.stop(now)
	if p.LinkID != "" && p.Status == PaymentPending && c.current(p) {
		p.Status = PaymentFailed
		p.FailureCode, p.FailureMessage = code, "The card payment was declined and no other attempt is left."
		data, _ := json.Marshal(map[string]string{"failure_code": code})
		p.addEvent(EventFailed, data, now)
	}
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CheckCardAction refuses an action on a card checkout's route that does
// not fit where it stands (spec 7.4): wrong_rail for a crypto checkout,
// payment_paid once the payment has its funds, stale_route when the page
// shows another route than the current one, then checkout_failed,
// checkout_expired or checkout_canceled for a checkout that ended.
func (c *Checkout) CheckCardAction(p *Payment, route int) error {
	if err := c.checkRoute(p, route); err != nil {
		return err
	}
	return c.checkEnded()
}

// checkRoute refuses what no card action may touch: a crypto checkout
// (wrong_rail), a payment with its funds (payment_paid), a page showing
// another route (stale_route).
func (c *Checkout) checkRoute(p *Payment, route int) error {
	switch {
	case c.Rail != RailCard || c.Card == nil:
		return Errorf(ErrWrongRail, "this is a crypto checkout; card actions do not apply")
	case p.Status == PaymentSucceeded || p.ReceivedFunds():
		return Errorf(ErrPaymentPaid, "this payment has already received funds; no new attempt can start")
	case route != c.Card.Route:
		return Errorf(ErrStaleRoute, "this card payment page is out of date; reload the checkout")
	}
	return nil
}

// checkEnded refuses a checkout that ended.
func (c *Checkout) checkEnded() error {
	switch c.Status {
	case CheckoutFailed:
		return Errorf(ErrCheckoutFailed, "this checkout failed; start a new one")
	case CheckoutExpired:
		return Errorf(ErrCheckoutExpired, "this checkout expired; start a new one")
	case CheckoutCanceled:
		return Errorf(ErrCheckoutCanceled, "this checkout was canceled")
	}
	return nil
}

// CheckAwaiting refuses to follow a route that is not waiting for a card
// payment (checkout_not_awaiting): the checkout is no longer open, or the
// card was already charged or declined.
func (c *Checkout) CheckAwaiting() error {
	if c.Status != CheckoutOpen || !c.Card.Status.MayStillSucceed() {
		return Errorf(ErrCheckoutNotAwaiting, "this checkout is not waiting for a card payment")
	}
	return nil
}

// CheckRetry refuses a new route for the page showing route (spec 7.4):
// wrong_rail, payment_paid and stale_route as CheckCardAction; no_route
// once the last route was declined (the checkout then failed); the ended
// checkout's error; route_in_progress while the current page may still
// succeed; checkout_not_retryable once the card was charged.
func (c *Checkout) CheckRetry(p *Payment, route int) error {
	if err := c.checkRoute(p, route); err != nil {
		return err
	}
	k := c.Card
	if k.Status == CardDeclined && k.RoutesLeft() == 0 {
		return Errorf(ErrNoRoute, "no further card attempt is available; start a new checkout")
	}
	if err := c.checkEnded(); err != nil {
		return err
	}
	switch {
	case k.InProgress():
		return Errorf(ErrRouteInProgress, "the payment on the current card page may still succeed; wait for it, or finish it")
	case k.Status != CardDeclined || c.Status != CheckoutOpen:
		return Errorf(ErrCheckoutNotRetryable, "this card checkout cannot start another attempt now")
	}
	return nil
}

// NextRoute starts the next attempt (the caller checked CheckRetry). Its
// provider session is opened when the customer goes to pay
// (AttachSession), never inside the transaction that stores the route.
func (c *Checkout) NextRoute(p *Payment, now time.Time) {
	k := c.Card
	k.Route++
	k.Session, k.RedirectURL, k.Status = "", "", CardAwaiting
	k.DeclineCode, k.DeclineMessage = "", ""
	k.Brand, k.Last4, k.CardCountry, k.Reference, k.TxHash = "", "", "", "", ""
	c.UpdatedAt = now
	if c.current(p) && p.Method != nil {
		p.Method.Card = k.method()
	}
	data, _ := json.Marshal(cardEventData(k))
	p.addEvent(EventCardUpdated, data, now)
}

// AttachSession records the provider session opened for route and
// reports whether it did: only while route is current, waiting for the
// customer and without a session (a second session opened by a racing
// request is not used; the customer goes to the first).
func (c *Checkout) AttachSession(route int, s CardSession, now time.Time) bool {
	k := c.Card
	if k == nil || k.Route != route || k.Status != CardAwaiting || k.Session != "" || c.Status != CheckoutOpen {
		return false
	}
	k.Session, k.RedirectURL, c.UpdatedAt = s.ID, s.RedirectURL, now
	return true
}

// CardTerms are a card total's limits and fee split for a price.
type CardTerms struct {
	Split money.FeeSplit
	// Min and Max are the limits in minor units of the price currency.
	Min, Max int64
}

// Within reports whether the total lies inside the limits.
func (t CardTerms) Within() bool { return t.Split.Total >= t.Min && t.Split.Total <= t.Max }

// CardTermsFor prices paying price in c by card (spec 2.11 rules 5 and 6):
// the 300 bps fee on the US value, passed on when payer is the customer,
// and the limits: the spec's 5.00 to 10,000.00 US dollars narrowed by the
// provider's for the currency and the customer's region, converted at the
// currency's usd_rate (the minimum rounded up and the maximum down, so a
// total inside them is inside in US dollars too).
func CardTermsFor(price int64, c money.Currency, usdRate money.Rate, payer money.FeePayer, lim CardLimits) (CardTerms, error) {
	split, err := money.SplitFee(price, c, usdRate, CardFeeBps, payer)
	if err != nil {
		return CardTerms{}, err
	}
	lo, hi := max(CardMinUSDCents, lim.MinUSD), int64(CardMaxUSDCents)
	if lim.MaxUSD > 0 {
		hi = min(hi, lim.MaxUSD)
	}
	t := CardTerms{Split: split}
	if t.Min, err = money.FromUSDCentsUp(lo, usdRate); err != nil {
		return CardTerms{}, err
	}
	if t.Max, err = money.FromUSDCentsDown(hi, usdRate); err != nil {
		return CardTerms{}, err
	}
	return t, nil
}

// CardOpenParams is what opening a card checkout needs besides the
// payment: the coin the provider delivers and where, the rates, the
// provider's first session and the limits for the customer's region.
type CardOpenParams struct {
	// Asset and Network are the coin delivered into the wallet.
	Asset   money.Asset
	Network money.Network
	// Rates are the snapshot in force; nil when no market rate is needed.
	Rates        *ExchangeRates
	QuoteMinutes int
	Deposit      Deposit
	AddressIndex uint32
	WalletID     string
	Required     int
	Email        string
	// Country is the customer's region ("" when unknown).
	Country  string
	Provider string
	Limits   CardLimits
}

// CardQuote prices a card checkout for p: the terms (fee split, limits;
// amount_out_of_range outside them), the coin delivered (net of the fee)
// and its gross worth, for OpenCardCheckout.
func CardQuote(p *Payment, in CardOpenParams) (CardTerms, *CryptoQuote, money.CoinAmount, error) {
	x := in.Rates
	t, err := CardTermsFor(p.Amount, p.Currency, x.USDPerUnit(p.Currency), p.FeePayer, in.Limits)
	if err != nil {
		return t, nil, money.CoinAmount{}, err
	}
	if !t.Within() {
		return t, nil, money.CoinAmount{}, &Error{Code: ErrAmountOutOfRange, Message: fmt.Sprintf(
			"a card payment must total from %s to %s %s; this one totals %s %s",
			p.Currency.Format(t.Min), p.Currency.Format(t.Max), p.Currency, p.Currency.Format(t.Split.Total), p.Currency)}
	}
	s := t.Split
	price := x.CoinCents(in.Asset)
	net, err := money.CoinFromUSDCents(s.AmountUSD+s.CustomerFeeUSD-s.FeeUSD, in.Asset, price)
	if err != nil || net.IsZero() {
		return t, nil, money.CoinAmount{}, Errorf(ErrAssetUnavailable, "%s cannot be priced right now", in.Asset)
	}
	gross, err := money.CoinFromUSDCents(s.AmountUSD+s.CustomerFeeUSD, in.Asset, price)
	if err != nil {
		return t, nil, money.CoinAmount{}, Errorf(ErrAssetUnavailable, "%s cannot be priced right now", in.Asset)
	}
	rate, err := money.CoinRate(in.Asset, price, p.Currency, x.USDPerUnit(p.Currency))
	if err != nil {
		return t, nil, money.CoinAmount{}, Errorf(ErrAssetUnavailable, "%s cannot be priced right now", in.Asset)
	}
	q := &CryptoQuote{Asset: in.Asset, Network: in.Network, Amount: net, PriorAmount: money.CoinAmount{Asset: in.Asset, Units: new(big.Int)},
		Deposit: in.Deposit, AddressIndex: in.AddressIndex, Rate: rate, CoinPriceUSD: price, WalletID: in.WalletID}
	return t, q, gross, nil
}

// OpenCardCheckout opens a card checkout on p with the terms and quote of
// CardQuote (spec 2.5, docs/card.md); its first route's provider session
// is opened when the customer goes to pay (AttachSession):
// the payment's fee rate becomes 300 bps, the fee passed on (when it is)
// becomes its customer_fee, and method_selected is recorded with the coin
// to be delivered. It is p's current checkout from then on.
func OpenCardCheckout(p *Payment, in CardOpenParams, t CardTerms, q *CryptoQuote, gross money.CoinAmount,
	now time.Time) *Checkout {
	c := &Checkout{
		ID: NewID(PrefixCheckout), BusinessID: p.BusinessID, PaymentID: p.ID, LinkID: p.LinkID,
		Status: CheckoutOpen, Rail: RailCard, Amount: p.Amount, Currency: p.Currency, Crypto: q,
		Card:     &Card{Provider: in.Provider, Route: 1, Status: CardAwaiting, Country: in.Country, Gross: gross},
		Required: in.Required, SuccessURL: p.SuccessURL,
		Email: in.Email, ExpiresAt: now.Add(time.Duration(in.QuoteMinutes) * time.Minute), FeeRateBps: CardFeeBps,
		WatchUntil: LiveWatchUntil, CreatedAt: now, UpdatedAt: now,
	}
	c.price(p.Amount, t.Split)
	p.CheckoutID = c.ID
	p.takeTerms(c, t.Split)
	p.Method = &Method{Rail: RailCard, Asset: q.Asset, Network: q.Network, Amount: q.PriorAmount.String(),
		ExpectedAmount: gross.String(), Card: c.Card.method()}
	data, _ := json.Marshal(map[string]any{"rail": RailCard, "asset": q.Asset, "network": q.Network})
	p.addEvent(EventMethodSelected, data, now)
	return c
}
