package payd

import (
	"encoding/json"
	"fmt"
	"time"

	"payd/money"
)

// OpenParams is what opening a crypto checkout needs besides the payment:
// the coin, the rates and settings in force, and the deposit the caller
// derived from the business's wallet.
type OpenParams struct {
	Asset   money.Asset
	Network money.Network
	// Rates are the snapshot in force; nil when the price needs no market
	// rate (NeedsRates).
	Rates        *ExchangeRates
	QuoteMinutes int
	Deposit      Deposit
	AddressIndex uint32
	WalletID     string
	// NetworkFeeUSD is the network's fee estimate in US cents.
	NetworkFeeUSD int64
	// Required is the network's confirmation count.
	Required int
	Email    string
	// Remainder opens the checkout for the rest of an underpaid payment.
	Remainder bool
}

// OpenCryptoCheckout quotes what is still due on p in coin in.Asset on
// in.Network and returns the checkout, locked for the quote window (spec
// 2.11 rule 8). It records on p the method chosen (method_selected) or,
// for a remainder, the remainder_requested event, and makes the checkout
// p's current one. nothing_due when p has received its total; the caller
// sets Crypto.PaymentURI, which needs the network.
func OpenCryptoCheckout(p *Payment, in OpenParams, now time.Time) (*Checkout, error) {
	// A first checkout asks for the price (its rail's fee comes on top in
	// the split); a remainder for what is left of the total the payment's
	// terms set, price and customer fee.
	due := p.Amount
	if in.Remainder {
		due = p.Amount + p.CustomerFee - p.AmountReceived
	}
	if due <= 0 {
		return nil, Errorf(ErrNothingDue, "payment %s has received its whole amount", p.ID)
	}
	q, split, err := quote(due, p, in)
	if err != nil {
		return nil, err
	}
	c := &Checkout{
		ID: NewID(PrefixCheckout), BusinessID: p.BusinessID, PaymentID: p.ID, LinkID: p.LinkID,
		Status: CheckoutOpen, Rail: RailCrypto, Amount: due, Currency: p.Currency, Crypto: q,
		Required: in.Required, Remainder: in.Remainder,
		PriorReceived: p.AmountReceived, SuccessURL: p.SuccessURL, Email: in.Email,
		ExpiresAt: now.Add(time.Duration(in.QuoteMinutes) * time.Minute), FeeRateBps: CryptoFeeBps,
		WatchUntil: LiveWatchUntil, CreatedAt: now, UpdatedAt: now,
	}
	c.price(due, split)
	if fee, err := money.FromUSDCents(in.NetworkFeeUSD, in.Rates.USDPerUnit(p.Currency)); err == nil && in.NetworkFeeUSD > 0 {
		c.Breakdown.NetworkFee = &fee
	}
	if !in.Remainder {
		p.takeTerms(c, split)
	}
	p.chooseCheckout(c, now)
	return c, nil
}

// price sets a checkout's breakdown and US view for what it collects,
// price minor units, and its rail's fee split (spec 2.7, 2.2.1): the fee
// passed on is its processing_fee and in its total.
func (c *Checkout) price(price int64, sp money.FeeSplit) {
	c.Breakdown = Breakdown{Price: price, Total: sp.Total}
	if sp.CustomerFee > 0 {
		c.Breakdown.ProcessingFee = &sp.CustomerFee
	}
	c.Reporting = Reporting{AmountUSD: sp.AmountUSD, CustomerFeeUSD: sp.CustomerFeeUSD,
		NetUSD: sp.AmountUSD + sp.CustomerFeeUSD - sp.FeeUSD}
}

// takeTerms makes a first checkout's rail the payment's terms: its fee
// rate and the fee passed on to the customer (customer_fee, and its US
// view). Both rails' first checkouts set them, so a crypto checkout after
// a card one carries no card fee; a remainder keeps the terms it collects
// the rest of. The fee itself is shown once the payment succeeds.
func (p *Payment) takeTerms(c *Checkout, sp money.FeeSplit) {
	p.FeeRateBps = c.FeeRateBps
	p.CustomerFee, p.Reporting.CustomerFeeUSD = sp.CustomerFee, sp.CustomerFeeUSD
	p.Reporting.NetUSD = sp.AmountUSD + sp.CustomerFeeUSD
}

// LiveWatchUntil is the WatchUntil of a checkout that is still taking
// funds; one that ended is watched for LateWindow more.
var LiveWatchUntil = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// quote prices due minor units of p's currency in the coin at the rates.
func quote(due int64, p *Payment, in OpenParams) (*CryptoQuote, money.FeeSplit, error) {
	x := in.Rates
	split, err := money.SplitFee(due, p.Currency, x.USDPerUnit(p.Currency), CryptoFeeBps, p.FeePayer)
	if err != nil {
		return nil, split, err
	}
	coin, err := money.CoinFromUSDCents(split.AmountUSD+split.CustomerFeeUSD, in.Asset, x.CoinCents(in.Asset))
	if err != nil || coin.IsZero() {
		return nil, split, Errorf(ErrAssetUnavailable, "%s cannot be priced right now", in.Asset)
	}
	rate, err := money.CoinRate(in.Asset, x.CoinCents(in.Asset), p.Currency, x.USDPerUnit(p.Currency))
	if err != nil {
		return nil, split, Errorf(ErrAssetUnavailable, "%s cannot be priced right now", in.Asset)
	}
	prior := money.CoinAmount{Asset: in.Asset}
	if in.Remainder && p.Method != nil && p.Method.Asset == in.Asset {
		if prior, err = money.ParseCoinAmount(in.Asset, p.Method.Amount); err != nil {
			return nil, split, fmt.Errorf("payment %s: method amount: %w", p.ID, err)
		}
	}
	q := &CryptoQuote{Asset: in.Asset, Network: in.Network, Amount: coin, PriorAmount: prior,
		Deposit: in.Deposit, AddressIndex: in.AddressIndex, Rate: rate, CoinPriceUSD: x.CoinCents(in.Asset),
		WalletID: in.WalletID}
	if x != nil && NeedsRates(p.Currency, in.Asset) {
		q.ExchangeRatesID = x.ID
	}
	return q, split, nil
}

// chooseCheckout makes c the payment's current checkout and records the choice.
func (p *Payment) chooseCheckout(c *Checkout, now time.Time) {
	q := c.Crypto
	p.CheckoutID = c.ID
	p.Method = &Method{Rail: RailCrypto, Asset: q.Asset, Network: q.Network,
		Amount: q.PriorAmount.String(), ExpectedAmount: q.PriorAmount.Add(q.Amount).String()}
	if c.Remainder {
		data, _ := json.Marshal(map[string]any{"checkout_id": c.ID, "amount": c.Amount, "currency": c.Currency})
		p.addEvent(EventRemainderRequested, data, now)
		return
	}
	data, _ := json.Marshal(map[string]any{"rail": RailCrypto, "asset": q.Asset, "network": q.Network})
	p.addEvent(EventMethodSelected, data, now)
}

// CheckOpenable refuses a new checkout for p (spec 7.4): payment_paid once
// funds reached it, payment_canceled when the business canceled it,
// payment_expired past its expires_at or once expired.
func (p *Payment) CheckOpenable(now time.Time) error {
	switch {
	case p.CanceledAt != nil:
		return Errorf(ErrPaymentCanceled, "the business canceled this payment")
	case p.ReceivedFunds() || p.Status == PaymentSucceeded:
		return Errorf(ErrPaymentPaid, "this payment has already received funds; no new attempt can start")
	case p.Status == PaymentExpired || p.ExpiresAt != nil && !now.Before(*p.ExpiresAt):
		return Errorf(ErrPaymentExpired, "this payment expired")
	case p.Status != PaymentPending:
		return Errorf(ErrPaymentCanceled, "this payment has ended (%s)", p.Status)
	}
	return nil
}

// Replace ends an open checkout because the customer chose another coin:
// canceled by replacement, replaced_by next. checkout_not_supersedable
// once anything was sent to it or when it collects a remainder. A card
// checkout whose page may still succeed answers route_in_progress, and one
// whose card was charged checkout_not_supersedable. A checkout that
// already ended needs no replacing: Replace reports false.
func (c *Checkout) Replace(next string, now time.Time) (bool, error) {
	switch {
	case c.Status == CheckoutOpen && c.Card.InProgress():
		return false, Errorf(ErrRouteInProgress, "the payment on the card page may still succeed; this checkout cannot be replaced now")
	case c.Card != nil && c.Card.Status.Charged() && c.Active():
		return false, Errorf(ErrCheckoutNotSupersedable, "the card was charged and the coin is on its way; this checkout cannot be replaced")
	case c.Remainder && c.Active():
		return false, Errorf(ErrCheckoutNotSupersedable, "this checkout collects the rest of a payment and cannot be replaced")
	case len(c.Transfers) > 0 && c.Active():
		return false, Errorf(ErrCheckoutNotSupersedable, "funds may be on the way to this checkout; it cannot be replaced")
	case c.Status != CheckoutOpen:
		return false, nil
	}
	c.Status, c.CanceledBy, c.ReplacedBy = CheckoutCanceled, CanceledByReplacement, next
	c.stop(now)
	return true, nil
}

// Active reports whether the checkout still takes funds for its payment.
func (c *Checkout) Active() bool {
	switch c.Status {
	case CheckoutOpen, CheckoutProcessing, CheckoutUnderpaid:
		return true
	}
	return false
}

// stop ends the checkout: its deposit stays watched for LateWindow.
func (c *Checkout) stop(now time.Time) {
	c.WatchUntil = now.Add(LateWindow)
	c.UpdatedAt = now
}

// FailureCheckoutCanceled is the failure_code of a link's payment whose
// customer canceled the checkout.
const FailureCheckoutCanceled = "checkout_canceled"

// Cancel ends the checkout at the customer's request. A link's payment
// exists only for this checkout, so it fails with it; a payment the
// business created stays open for another attempt. Canceling a checkout
// the customer already canceled changes nothing; checkout_canceled when
// the business or a replacement ended it. checkout_not_cancelable once
// something was sent; checkout_expired and checkout_failed for ended ones;
// route_in_progress while a card page may still succeed.
func (c *Checkout) Cancel(p *Payment, now time.Time) (bool, error) {
	switch {
	case c.Status == CheckoutCanceled && c.CanceledBy == CanceledByCustomer:
		return false, nil
	case c.Status == CheckoutCanceled:
		return false, Errorf(ErrCheckoutCanceled, "this checkout was already ended (%s)", c.CanceledBy)
	case c.Status == CheckoutExpired:
		return false, Errorf(ErrCheckoutExpired, "this checkout's quote has expired")
	case c.Status == CheckoutFailed:
		return false, Errorf(ErrCheckoutFailed, "this checkout failed")
	case c.Status == CheckoutOpen && c.Card.InProgress():
		return false, Errorf(ErrRouteInProgress, "the payment on the card page may still succeed; it cannot be canceled now")
	case c.Status != CheckoutOpen || len(c.Transfers) > 0:
		return false, Errorf(ErrCheckoutNotCancelable, "funds may be on the way to this checkout; it cannot be canceled")
	}
	c.Status, c.CanceledBy = CheckoutCanceled, CanceledByCustomer
	c.stop(now)
	if p.LinkID != "" && p.Status == PaymentPending {
		p.Status = PaymentFailed
		p.FailureCode, p.FailureMessage = FailureCheckoutCanceled, "The customer canceled the checkout."
		p.addEvent(EventCanceled, nil, now)
	}
	return true, nil
}

// CancelForPayment ends the payment's open checkout when the business
// cancels the payment (Payment.Cancel has checked nothing is on its way).
// payment_in_flight while the customer may be paying on a card provider's
// page: a charge after the cancel would arrive for a failed payment.
func (c *Checkout) CancelForPayment(now time.Time) (bool, error) {
	if c.Status != CheckoutOpen {
		return false, nil
	}
	if c.Card.InProgress() {
		return false, Errorf(ErrPaymentInFlight, "the customer may be paying by card right now; wait until the card page is finished with")
	}
	c.Status, c.CanceledBy = CheckoutCanceled, CanceledByBusiness
	c.stop(now)
	return true, nil
}

// Close ends a checkout still taking funds because the business accepted
// its payment as it stands. It reports whether anything changed.
func (c *Checkout) Close(now time.Time) bool {
	if !c.Active() {
		return false
	}
	c.Status = CheckoutCompleted
	c.stop(now)
	return true
}

// Claim records the customer's word that txHash paid this checkout after
// it ended (checked against the network by the caller: invalid_tx_hash),
// and puts the payment in needs_review for the business to decide.
// checkout_not_claimable unless the checkout expired or was canceled (and
// its payment has not succeeded); already_claimed for a second claim.
func (c *Checkout) Claim(p *Payment, txHash string, now time.Time) error {
	switch {
	case c.Status != CheckoutExpired && c.Status != CheckoutCanceled || p.Status == PaymentSucceeded:
		return Errorf(ErrCheckoutNotClaimable, "only an expired or canceled checkout takes a claim")
	case c.ClaimTxHash != "":
		return Errorf(ErrAlreadyClaimed, "a claim for this checkout is already under review")
	}
	c.ClaimTxHash, c.ReviewReason, c.UpdatedAt = txHash, ReviewClaim, now
	p.review(ReviewClaim, txHash, now)
	return nil
}

// EventNeedsReview is the payment history entry of a move to needs_review;
// its data holds the reason and the transaction concerned.
const EventNeedsReview = "needs_review"

// EventFundsReceived is the payment history entry of funds that reached
// the deposit of a payment that succeeded or is in review already, and pay
// nothing: sent late or in another coin (Checkout.unpaid). Its data holds
// the amount, asset, network, transaction and reason.
const EventFundsReceived = "funds_received"
