package payd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"payd/money"
)

// PaymentStatus is a payment's state (spec 3).
type PaymentStatus string

// The payment statuses.
const (
	PaymentPending     PaymentStatus = "pending"
	PaymentSucceeded   PaymentStatus = "succeeded"
	PaymentUnderpaid   PaymentStatus = "underpaid"
	PaymentNeedsReview PaymentStatus = "needs_review"
	PaymentFailed      PaymentStatus = "failed"
	PaymentExpired     PaymentStatus = "expired"
)

// PaymentStatuses lists every status in the order the spec gives them.
var PaymentStatuses = []PaymentStatus{PaymentPending, PaymentSucceeded, PaymentUnderpaid,
	PaymentNeedsReview, PaymentFailed, PaymentExpired}

// Rail is how a customer pays: with coins or by card.
type Rail string

// The rails.
const (
	RailCrypto Rail = "crypto"
	RailCard   Rail = "card"
)

// Payment is one thing a customer pays for (spec 2.2). Optional strings are
// "" when unset and go on the wire as null.
type Payment struct {
	ID         string
	BusinessID string
	// Code is the public code, the last path segment of the hosted url.
	Code           string
	Status         PaymentStatus
	Amount         int64
	Currency       money.Currency
	FeePayer       money.FeePayer
	CustomerFee    int64
	AmountReceived int64
	FeeRateBps     int
	Reporting      Reporting
	// Method and Settlement are nil until the customer picks a way to pay
	// and funds arrive.
	Method      *Method
	Settlement  *Settlement
	CustomerID  string
	LinkID      string
	Reference   string
	Metadata    map[string]string
	SuccessURL  string
	CancelURL   string
	ExpiresAt   *time.Time
	CanceledAt  *time.Time
	ConfirmedAt *time.Time
	CheckoutID  string
	Description string
	Country     string
	// FailureCode and FailureMessage say why a payment failed.
	FailureCode    string
	FailureMessage string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Events is the ordered history (spec 2.2.3), oldest first.
	Events []PaymentEvent
}

// Reporting is the US-dollar view of a payment (spec 2.2.1), in US cents.
type Reporting struct {
	AmountUSD int64
	// FeeUSD is nil until the payment succeeds.
	FeeUSD            *int64
	TransactionFeeUSD int64
	CustomerFeeUSD    int64
	NetUSD            int64
}

// Method is what the customer sent (spec 2.2.2). Amounts are coin amounts
// at the asset's display decimals.
type Method struct {
	Rail           Rail
	Asset          money.Asset
	Network        money.Network
	Amount         string
	ExpectedAmount string
	OverpaidAmount string // "" when not overpaid
	FromAddress    string
	TxHash         string
	ExplorerURL    string
	// Card is what the card provider reported, on the card rail.
	Card *MethodCard
}

// MethodCard is what a card payment's provider reported (spec 2.2.2
// leaves card methods to us): the provider, the card's brand, last four
// digits and issuing country, the provider's reference, and the status
// of the attempt.
type MethodCard struct {
	Provider  string
	Status    CardStatus
	Brand     string
	Last4     string
	Country   string
	Reference string
}

// Settlement is what reached the business's wallet (spec 2.2.2).
type Settlement struct {
	Destination string
	Asset       money.Asset
	Network     money.Network
	Amount      string
	WalletID    string
	Address     string
	TxHash      string
	ExplorerURL string
}

// Payment event types (spec 2.2.3).
const (
	EventCreated            = "created"
	EventMethodSelected     = "method_selected"
	EventDetected           = "detected"
	EventConfirmation       = "confirmation"
	EventSucceeded          = "succeeded"
	EventUnderpaid          = "underpaid"
	EventExpired            = "expired"
	EventRemainderRequested = "remainder_requested"
	EventCanceled           = "canceled"
	// EventFailed records a payment that failed other than by a cancel:
	// a link's payment whose card checkout's last attempt was declined
	// (data: failure_code).
	EventFailed   = "failed"
	EventAccepted = "accepted"
	// EventDropped records a transfer detected earlier that the network
	// no longer reports (replaced or double-spent before it confirmed):
	// the payment waits again (docs/checkouts.md).
	EventDropped = "dropped"
)

// PaymentEvent is one entry of a payment's history. Data is the entry's
// object already encoded as JSON, or nil for null.
type PaymentEvent struct {
	Type      string
	Data      []byte
	CreatedAt time.Time
	// Unannounced marks an entry that sends no webhook event of its own:
	// a transfer detected after its checkout stopped taking funds, told
	// once it confirms. It lives only in memory, in the change that adds
	// the entry, which is all PaymentEventTypes reads; it is not stored.
	Unannounced bool
}

// PaymentStore keeps payments with their events and metadata. Every method
// but PaymentByCode and PublicPayment is scoped by business.
type PaymentStore interface {
	// CreatePayment stores a new payment with its events and metadata;
	// conflict if its id or code is taken.
	CreatePayment(ctx context.Context, p *Payment) error
	// PaymentByID returns the business's payment with its events; not_found otherwise.
	PaymentByID(ctx context.Context, businessID, id string) (*Payment, error)
	// PaymentByCode returns the payment with the public code; not_found otherwise.
	PaymentByCode(ctx context.Context, code string) (*Payment, error)
	// PublicPayment returns the payment with the id whatever its business,
	// for the public checkout routes that name a payment by id; not_found
	// otherwise.
	PublicPayment(ctx context.Context, id string) (*Payment, error)
	// PaymentByReference returns the oldest of the business's payments with
	// this reference that is live at now (see Payment.Live); not_found
	// otherwise. Inside a transaction it also holds the reference until
	// commit, so two transactions creating payments with one reference
	// cannot both find none (spec 4.8 rule 11).
	PaymentByReference(ctx context.Context, businessID, reference string, now time.Time) (*Payment, error)
	// UpdatePayment writes every mutable field of p (all but the amount,
	// currency, fee payer, code, link, reference, metadata, redirect
	// addresses, description, country and created_at) and updated_at, and
	// appends the events of p.Events beyond those already stored;
	// not_found otherwise. conflict when another change appended events
	// since p was read, so that no change is lost.
	UpdatePayment(ctx context.Context, p *Payment) error
}

// Limits on what a business sends when it creates a payment (spec 8.1
// leaves them open; docs/payments.md records them).
const (
	MaxMetadataKeys     = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
	MaxDescriptionLen   = 1000
	MaxReferenceLen     = 200
	// MaxPaymentLifetime bounds expires_at: a payment open for longer is
	// almost surely a mistake in the unit of a timestamp.
	MaxPaymentLifetime = 90 * 24 * time.Hour
	// MinPaymentLifetime is the least time a new payment may stay open, so
	// that a customer can at least open the page.
	MinPaymentLifetime = time.Minute
)

// ReservedMetadataPrefixes are the metadata key prefixes payd keeps for
// itself (compared without regard to case): payd_ for what payd may record
// on a payment, service_ for the spec's Service- names.
var ReservedMetadataPrefixes = []string{"payd_", "service_"}

// PaymentParams is what a business asks for when it creates a payment.
// Optional strings are "" when not sent.
type PaymentParams struct {
	Amount      int64
	Currency    money.Currency
	Description string
	Reference   string
	Metadata    map[string]string
	CustomerID  string
	LinkID      string
	SuccessURL  string
	CancelURL   string
	ExpiresAt   *time.Time
	FeePayer    money.FeePayer
	Country     string
}

// NewPayment validates in and returns a pending payment of the business
// with its created event. The price must lie in the allowed range at the
// rates in force, x (spec 2.11 rule 2), and reporting is computed at them;
// x may be nil for a USD price, which needs no rate (NeedsRates).
// Redirect addresses follow the rules of a link's (https unless allowHTTP,
// in development). No rail is chosen yet, so the fee rate is 0 and no fee
// is shown until the payment succeeds.
func NewPayment(businessID string, in PaymentParams, x *ExchangeRates, allowHTTP bool, now time.Time) (*Payment, error) {
	if err := in.validate(x, allowHTTP, now); err != nil {
		return nil, err
	}
	split, err := money.SplitFee(in.Amount, in.Currency, x.USDPerUnit(in.Currency), 0, in.FeePayer)
	if err != nil {
		return nil, err
	}
	p := &Payment{
		ID: NewID(PrefixPayment), BusinessID: businessID, Code: NewPaymentCode(), Status: PaymentPending,
		Amount: in.Amount, Currency: in.Currency, FeePayer: in.FeePayer,
		Reporting:  Reporting{AmountUSD: split.AmountUSD, NetUSD: split.AmountUSD},
		CustomerID: in.CustomerID, LinkID: in.LinkID, Reference: in.Reference, Metadata: in.Metadata,
		SuccessURL: in.SuccessURL, CancelURL: in.CancelURL, ExpiresAt: in.ExpiresAt,
		Description: in.Description, Country: in.Country, CreatedAt: now,
	}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	p.addEvent(EventCreated, nil, now)
	return p, nil
}

// NewPaymentCode returns a fresh public code: 20 base62 characters (about
// 119 bits), so that codes can be neither guessed nor enumerated.
func NewPaymentCode() string { return RandomString(20) }

// validate checks every field of in, in the order a form shows them.
func (in *PaymentParams) validate(x *ExchangeRates, allowHTTP bool, now time.Time) error {
	if !in.Currency.Valid() {
		return FieldError("currency", "currency must be one of USD, EUR, GBP, CAD, AUD")
	}
	if err := CheckPriceRange("amount", in.Amount, in.Currency, x); err != nil {
		return err
	}
	checks := []error{
		CheckText("description", in.Description, MaxDescriptionLen, true),
		checkReference(in.Reference),
		CheckMetadata(in.Metadata),
		checkRedirect("success_url", in.SuccessURL, allowHTTP),
		checkRedirect("cancel_url", in.CancelURL, allowHTTP),
		checkExpiry(in.ExpiresAt, now),
		checkFeePayer(in.FeePayer),
		checkCountry(in.Country),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRedirect allows no address or one CheckRedirectURL accepts.
func checkRedirect(field, s string, allowHTTP bool) error {
	if s == "" {
		return nil
	}
	return CheckRedirectURL(field, s, allowHTTP)
}

// checkExpiry allows no expiry, or one between MinPaymentLifetime and
// MaxPaymentLifetime from now.
func checkExpiry(at *time.Time, now time.Time) error {
	if at == nil {
		return nil
	}
	if at.Before(now.Add(MinPaymentLifetime)) {
		return FieldError("expires_at", "expires_at must be at least one minute in the future")
	}
	if at.After(now.Add(MaxPaymentLifetime)) {
		return FieldError("expires_at", "expires_at must be at most 90 days in the future")
	}
	return nil
}

// checkCountry allows no country or two capital letters (ISO 3166-1
// alpha-2 shape; the list itself is not checked, so that a new code never
// needs a release).
func checkCountry(c string) error {
	if c == "" {
		return nil
	}
	if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
		return FieldError("country", "country must be a two-letter code in capitals, such as DE")
	}
	return nil
}

// addEvent appends an entry to the history and stamps the change.
func (p *Payment) addEvent(typ string, data []byte, now time.Time) {
	p.Events = append(p.Events, PaymentEvent{Type: typ, Data: data, CreatedAt: now})
	p.UpdatedAt = now
}

// ReceivedFunds reports whether money reached the payment: anything
// counted in amount_received, or a status only funds lead to.
func (p *Payment) ReceivedFunds() bool {
	switch p.Status {
	case PaymentSucceeded, PaymentUnderpaid, PaymentNeedsReview:
		return true
	}
	return p.AmountReceived > 0
}

// InFlight reports whether a transfer to a pending payment was seen but not
// yet confirmed (its method names a transaction while nothing is
// counted), or its card was charged and the coin is on its way.
func (p *Payment) InFlight() bool {
	if p.Status != PaymentPending || p.Method == nil || p.AmountReceived != 0 {
		return false
	}
	return p.Method.TxHash != "" || p.Method.Card != nil && p.Method.Card.Status.Charged()
}

// Live reports whether the payment still holds its reference (spec 4.8
// rule 11): it has not failed (which includes canceled) or expired, and a
// pending one is not past its expires_at.
func (p *Payment) Live(now time.Time) bool {
	switch p.Status {
	case PaymentFailed, PaymentExpired:
		return false
	case PaymentPending:
		return p.ExpiresAt == nil || now.Before(*p.ExpiresAt)
	}
	return true
}

// ReuseFor decides what a new request with p's reference gets (spec 4.8
// rule 11, 7.3): p itself when it is live, has received nothing and asks
// for the same amount and currency; reference_in_use when it is live but
// differs or has received funds. ok is false when p no longer holds the
// reference and a new payment may be made.
func (p *Payment) ReuseFor(amount int64, c money.Currency, now time.Time) (ok bool, err error) {
	if !p.Live(now) {
		return false, nil
	}
	if p.ReceivedFunds() {
		return false, &Error{Code: ErrReferenceInUse, Field: "reference",
			Message: fmt.Sprintf("reference is used by payment %s, which has already received funds", p.ID)}
	}
	if p.Amount != amount || p.Currency != c {
		return false, &Error{Code: ErrReferenceInUse, Field: "reference",
			Message: fmt.Sprintf("reference is used by payment %s for %s %s", p.ID, c.Format(p.Amount), p.Currency)}
	}
	return true, nil
}

// FailureCanceled is the failure_code of a payment the business canceled.
const FailureCanceled = "canceled"

// Cancel ends a pending payment at the business's request (spec 3): its
// status becomes failed with failure_code canceled, canceled_at is set and
// a canceled event is appended. Canceling a canceled payment changes
// nothing. payment_not_cancelable when funds arrived, the payment came from
// a link, or it has already ended; payment_in_flight while a transfer is on
// its way.
func (p *Payment) Cancel(now time.Time) (changed bool, err error) {
	switch {
	case p.CanceledAt != nil:
		return false, nil
	case p.LinkID != "":
		return false, Errorf(ErrPaymentNotCancelable, "payments made through a link cannot be canceled")
	case p.ReceivedFunds():
		return false, Errorf(ErrPaymentNotCancelable, "funds have reached this payment; it can no longer be canceled")
	case p.InFlight():
		return false, Errorf(ErrPaymentInFlight, "a transfer to this payment is on its way; wait until it confirms or fails")
	case p.Status != PaymentPending:
		return false, Errorf(ErrPaymentNotCancelable, "this payment has already %s", p.Status)
	}
	p.Status, p.CanceledAt = PaymentFailed, &now
	p.FailureCode, p.FailureMessage = FailureCanceled, "The business canceled the payment."
	p.addEvent(EventCanceled, nil, now)
	return true, nil
}

// Accept makes an underpaid or needs_review payment succeed as it stands
// (spec 3): the business takes what arrived as payment in full. The fee is
// then shown, computed like any success's on reporting.amount at
// fee_rate_bps. An accepted event (data: the status it left) and a
// succeeded event are appended. payment_not_acceptable for other statuses.
func (p *Payment) Accept(now time.Time) error {
	if p.Status != PaymentUnderpaid && p.Status != PaymentNeedsReview {
		return Errorf(ErrPaymentNotAcceptable, "only underpaid and needs_review payments can be accepted; this one is %s", p.Status)
	}
	data, _ := json.Marshal(map[string]PaymentStatus{"previous_status": p.Status})
	p.Status = PaymentSucceeded
	p.FailureCode, p.FailureMessage = "", ""
	p.settleFee()
	p.addEvent(EventAccepted, data, now)
	p.addEvent(EventSucceeded, nil, now)
	return nil
}

// settleFee fills reporting's fee once the payment succeeds (spec 2.11
// rule 5): the whole fee on the US value, the business's share of it as
// transaction_fee, and net = amount + customer_fee − fee.
func (p *Payment) settleFee() {
	fee := money.Fee(p.Reporting.AmountUSD, p.FeeRateBps)
	r := &p.Reporting
	r.FeeUSD = &fee
	r.TransactionFeeUSD = fee - r.CustomerFeeUSD
	r.NetUSD = r.AmountUSD + r.CustomerFeeUSD - fee
}

// PaymentStatsDelta is what changing a payment from old to p adds to the
// stats of its customer and link (old is nil for a new payment). Callers
// apply it in the transaction that stores the change, so the totals can
// never drift from the payments.
func PaymentStatsDelta(old, p *Payment) StatsDelta {
	d := statsOf(p)
	if old == nil {
		d.Payments = 1
		at := p.CreatedAt
		d.LastPaymentAt = &at
		return d
	}
	o := statsOf(old)
	d.Succeeded -= o.Succeeded
	d.VolumeUSD -= o.VolumeUSD
	d.Crypto -= o.Crypto
	d.Card -= o.Card
	return d
}

// statsOf is what one payment in its current state counts for.
func statsOf(p *Payment) StatsDelta {
	if p == nil || p.Status != PaymentSucceeded {
		return StatsDelta{}
	}
	d := StatsDelta{Succeeded: 1, VolumeUSD: p.Reporting.AmountUSD}
	if p.Method != nil && p.Method.Rail == RailCard {
		d.Card = 1
	} else if p.Method != nil && p.Method.Rail == RailCrypto {
		d.Crypto = 1
	}
	return d
}

// Expire ends a pending payment past its expires_at that has no checkout
// taking funds (for one that has, Checkout.Expire decides). It reports
// whether anything changed.
func (p *Payment) Expire(now time.Time) bool {
	if p.Status != PaymentPending || p.ExpiresAt == nil || now.Before(*p.ExpiresAt) || p.InFlight() {
		return false
	}
	p.Status = PaymentExpired
	p.addEvent(EventExpired, nil, now)
	return true
}

// review moves p to needs_review for reason and reports whether it did: a
// payment that succeeded or is in review already stays as it is.
func (p *Payment) review(reason, txHash string, now time.Time) bool {
	if p.Status == PaymentSucceeded || p.Status == PaymentNeedsReview {
		return false
	}
	p.Status = PaymentNeedsReview
	p.FailureCode, p.FailureMessage = "", ""
	data, _ := json.Marshal(map[string]string{"reason": reason, "tx_hash": txHash})
	p.addEvent(EventNeedsReview, data, now)
	return true
}
