package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// payment is the wire form of payd.Payment (spec 2.2). Every field is
// always present; unset optional ones are null.
type payment struct {
	ID             string             `json:"id"`
	Kind           string             `json:"kind"`
	Code           string             `json:"code"`
	Status         payd.PaymentStatus `json:"status"`
	Amount         int64              `json:"amount"`
	Currency       money.Currency     `json:"currency"`
	FeePayer       money.FeePayer     `json:"fee_payer"`
	CustomerFee    int64              `json:"customer_fee"`
	AmountReceived int64              `json:"amount_received"`
	Reporting      reporting          `json:"reporting"`
	FeeRateBps     int                `json:"fee_rate_bps"`
	Method         *method            `json:"method"`
	Settlement     *settlement        `json:"settlement"`
	CustomerID     *string            `json:"customer_id"`
	LinkID         *string            `json:"link_id"`
	URL            *string            `json:"url"`
	Reference      *string            `json:"reference"`
	Metadata       map[string]string  `json:"metadata"`
	SuccessURL     *string            `json:"success_url"`
	CancelURL      *string            `json:"cancel_url"`
	ExpiresAt      *Time              `json:"expires_at"`
	CanceledAt     *Time              `json:"canceled_at"`
	CheckoutID     *string            `json:"checkout_id"`
	Description    string             `json:"description"`
	Country        *string            `json:"country"`
	FailureCode    *string            `json:"failure_code"`
	FailureMessage *string            `json:"failure_message"`
	ConfirmedAt    *Time              `json:"confirmed_at"`
	CreatedAt      Time               `json:"created_at"`
	UpdatedAt      Time               `json:"updated_at"`
	Events         []paymentEvent     `json:"events"`
}

// reporting is the US-dollar view of a payment (spec 2.2.1), in US cents.
type reporting struct {
	Currency       string `json:"currency"`
	Amount         int64  `json:"amount"`
	Fee            *int64 `json:"fee"`
	TransactionFee int64  `json:"transaction_fee"`
	CustomerFee    int64  `json:"customer_fee"`
	Net            int64  `json:"net"`
}

// method is what the customer sent (spec 2.2.2); what is not known yet is null.
type method struct {
	Rail           payd.Rail `json:"rail"`
	Asset          *string   `json:"asset"`
	Network        *string   `json:"network"`
	Amount         *string   `json:"amount"`
	ExpectedAmount *string   `json:"expected_amount"`
	OverpaidAmount *string   `json:"overpaid_amount"`
	FromAddress    *string   `json:"from_address"`
	TxHash         *string   `json:"tx_hash"`
	ExplorerURL    *string   `json:"explorer_url"`
	// Card is what the card provider reported; null on crypto.
	Card *methodCard `json:"card"`
}

// settlement is what reached the wallet (spec 2.2.2).
type settlement struct {
	Destination string        `json:"destination"`
	Asset       money.Asset   `json:"asset"`
	Network     money.Network `json:"network"`
	Amount      string        `json:"amount"`
	WalletID    *string       `json:"wallet_id"`
	Address     *string       `json:"address"`
	TxHash      *string       `json:"tx_hash"`
	ExplorerURL *string       `json:"explorer_url"`
}

// paymentEvent is one entry of a payment's history (spec 2.2.3).
type paymentEvent struct {
	Type      string          `json:"type"`
	CreatedAt Time            `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// nilIfEmpty puts an unset optional string on the wire as null.
func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// toPayment converts a payment for the wire. Only a payment made with the
// API has a hosted page of its own; one made through a link is paid on the
// link's page, so its url is null.
func (s *Server) toPayment(p *payd.Payment) payment {
	out := payment{
		ID: p.ID, Kind: "payment", Code: p.Code, Status: p.Status, Amount: p.Amount, Currency: p.Currency,
		FeePayer: p.FeePayer, CustomerFee: p.CustomerFee, AmountReceived: p.AmountReceived,
		Reporting: reporting{Currency: "USD", Amount: p.Reporting.AmountUSD, Fee: p.Reporting.FeeUSD,
			TransactionFee: p.Reporting.TransactionFeeUSD, CustomerFee: p.Reporting.CustomerFeeUSD, Net: p.Reporting.NetUSD},
		FeeRateBps: p.FeeRateBps, Method: toMethod(p.Method), Settlement: toSettlement(p.Settlement),
		CustomerID: nilIfEmpty(p.CustomerID), LinkID: nilIfEmpty(p.LinkID), Reference: nilIfEmpty(p.Reference),
		Metadata: p.Metadata, SuccessURL: nilIfEmpty(p.SuccessURL), CancelURL: nilIfEmpty(p.CancelURL),
		ExpiresAt: timePtr(p.ExpiresAt), CanceledAt: timePtr(p.CanceledAt), CheckoutID: nilIfEmpty(p.CheckoutID),
		Description: p.Description, Country: nilIfEmpty(p.Country), FailureCode: nilIfEmpty(p.FailureCode),
		FailureMessage: nilIfEmpty(p.FailureMessage), ConfirmedAt: timePtr(p.ConfirmedAt),
		CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt), Events: make([]paymentEvent, len(p.Events)),
	}
	if p.LinkID == "" {
		out.URL = nilIfEmpty(s.paymentURL(p.Code))
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	for i, e := range p.Events {
		out.Events[i] = paymentEvent{Type: e.Type, CreatedAt: Time(e.CreatedAt), Data: json.RawMessage(e.Data)}
	}
	return out
}

func toMethod(m *payd.Method) *method {
	if m == nil {
		return nil
	}
	return &method{Rail: m.Rail, Asset: nilIfEmpty(string(m.Asset)), Network: nilIfEmpty(string(m.Network)), Amount: nilIfEmpty(m.Amount),
		ExpectedAmount: nilIfEmpty(m.ExpectedAmount), OverpaidAmount: nilIfEmpty(m.OverpaidAmount),
		FromAddress: nilIfEmpty(m.FromAddress), TxHash: nilIfEmpty(m.TxHash), ExplorerURL: nilIfEmpty(m.ExplorerURL),
		Card: toMethodCard(m.Card)}
}

func toSettlement(st *payd.Settlement) *settlement {
	if st == nil {
		return nil
	}
	return &settlement{Destination: st.Destination, Asset: st.Asset, Network: st.Network, Amount: st.Amount,
		WalletID: nilIfEmpty(st.WalletID), Address: nilIfEmpty(st.Address), TxHash: nilIfEmpty(st.TxHash),
		ExplorerURL: nilIfEmpty(st.ExplorerURL)}
}

// createPaymentRequest is the body of POST /payments (CONTRACT.md). null
// counts as not sent.
type createPaymentRequest struct {
	Amount        *int64            `json:"amount"`
	Currency      *string           `json:"currency"`
	Description   *string           `json:"description"`
	Reference     *string           `json:"reference"`
	Metadata      map[string]string `json:"metadata"`
	CustomerID    *string           `json:"customer_id"`
	CustomerEmail *string           `json:"customer_email"`
	CustomerName  *string           `json:"customer_name"`
	SuccessURL    *string           `json:"success_url"`
	CancelURL     *string           `json:"cancel_url"`
	ExpiresAt     *string           `json:"expires_at"`
	FeePayer      *string           `json:"fee_payer"`
	Country       *string           `json:"country"`
}

// customerRef is how a new payment names its customer: by id, or by email
// (found, or created with name).
type customerRef struct {
	id, email, name string
}

// params turns the request into payment parameters and the customer
// reference, checking what the domain cannot: presence, the exclusive
// customer fields, the email and the timestamp's syntax.
func (req *createPaymentRequest) params() (payd.PaymentParams, customerRef, error) {
	var in payd.PaymentParams
	if req.Amount == nil {
		return in, customerRef{}, payd.FieldError("amount", "amount is required: the price in minor units of currency")
	}
	if req.Currency == nil {
		return in, customerRef{}, payd.FieldError("currency", "currency is required: one of USD, EUR, GBP, CAD, AUD")
	}
	in.Amount, in.Currency = *req.Amount, money.Currency(*req.Currency)
	in.Description, in.Reference, in.Metadata = deref(req.Description), deref(req.Reference), req.Metadata
	in.SuccessURL, in.CancelURL, in.Country = deref(req.SuccessURL), deref(req.CancelURL), deref(req.Country)
	in.FeePayer = money.FeePayer(deref(req.FeePayer))
	if req.ExpiresAt != nil {
		at, err := parseTimestamp("expires_at", *req.ExpiresAt)
		if err != nil {
			return in, customerRef{}, err
		}
		in.ExpiresAt = &at
	}
	cust, err := req.customer()
	return in, cust, err
}

// customer checks the customer fields: an id or an email, not both; a name
// only beside an email; a valid email (invalid_email, spec 7.3).
func (req *createPaymentRequest) customer() (customerRef, error) {
	c := customerRef{id: deref(req.CustomerID), email: deref(req.CustomerEmail), name: deref(req.CustomerName)}
	switch {
	case c.id != "" && c.email != "":
		return c, payd.FieldError("customer_email", "send customer_id or customer_email, not both")
	case c.name != "" && c.email == "":
		return c, payd.FieldError("customer_name", "customer_name names the customer created for customer_email; send customer_email too")
	case c.id != "" && !payd.HasPrefix(c.id, payd.PrefixCustomer):
		return c, payd.FieldError("customer_id", "customer_id must be a customer id (cst_...)")
	case c.email != "":
		if err := payd.CheckCustomerEmail("customer_email", c.email); err != nil {
			return c, err
		}
	}
	return c, payd.CheckText("customer_name", strings.TrimSpace(c.name), payd.MaxCustomerName, false)
}

// deref reads an optional string, "" when absent.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// parseTimestamp reads an RFC 3339 timestamp with a time zone (Z or an
// offset), as a UTC time to the microsecond, the precision payd stores.
func parseTimestamp(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) > 40 {
		return time.Time{}, payd.FieldError(field, "%s must be an ISO 8601 timestamp with a time zone, such as 2026-11-22T10:00:00Z", field)
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// errReuse carries the payment that a request's reference already names
// out of the transaction that found it (spec 4.8 rule 11).
type errReuse struct{ p *payd.Payment }

func (e errReuse) Error() string { return "payment " + e.p.ID + " already has this reference" }

// createPayment serves POST /payments. A new payment answers 201. A
// request whose reference, amount and currency match a live payment that
// has received nothing answers 200 with that payment instead, and creates
// nothing.
func (s *Server) createPayment(w http.ResponseWriter, r *http.Request) error {
	var req createPaymentRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	biz := callOf(r.Context()).biz
	if biz.SuspendedAt != nil {
		return payd.Errorf(payd.ErrBusinessSuspended, "this business is suspended and cannot create payments")
	}
	p, cust, err := s.newPayment(r.Context(), biz, &req)
	if err != nil {
		return err
	}
	for range 3 {
		err = s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
			return s.insertPayment(ctx, q, p, cust)
		})
		var reuse errReuse
		if !errors.As(err, &reuse) {
			return err
		}
		err = s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
			return s.reusePayment(ctx, q, p)
		})
		if !errors.Is(err, errReferenceFreed) {
			return err
		}
	}
	return err
}

// errReferenceFreed says the payment holding a reference let it go between
// two transactions; creating is tried again.
var errReferenceFreed = errors.New("api: the reference was freed meanwhile")

// newPayment validates the request into an unsaved payment, filling the
// fee payer from the checkout settings when it is not sent.
func (s *Server) newPayment(ctx context.Context, biz *payd.Business, req *createPaymentRequest) (*payd.Payment, customerRef, error) {
	in, cust, err := req.params()
	if err != nil {
		return nil, cust, err
	}
	if in.FeePayer == "" {
		set, err := s.checkoutSettings(ctx, s.store, biz.ID)
		if err != nil {
			return nil, cust, err
		}
		in.FeePayer = set.FeePayer
	}
	x, err := s.ratesFor(ctx, in.Currency, "")
	if err != nil {
		return nil, cust, err
	}
	p, err := payd.NewPayment(biz.ID, in, x, s.opts.Dev, s.clock.Now())
	return p, cust, err
}

// insertPayment stores p in the transaction (payd.SavePayment), after the
// reference check and with its customer.
func (s *Server) insertPayment(ctx context.Context, q payd.Queries, p *payd.Payment, cust customerRef) (any, error) {
	if p.Reference != "" {
		cur, err := q.PaymentByReference(ctx, p.BusinessID, p.Reference, p.CreatedAt)
		if err != nil && !payd.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			if ok, err := cur.ReuseFor(p.Amount, p.Currency, p.CreatedAt); err != nil || ok {
				return nil, reuseOutcome(cur, err)
			}
		}
	}
	c, err := s.resolveCustomer(ctx, q, p.BusinessID, cust, p.CreatedAt)
	if err != nil {
		return nil, err
	}
	if c != nil {
		p.CustomerID = c.ID
	}
	if err := payd.SavePayment(ctx, q, s, nil, p, actorOf(ctx, "")); err != nil {
		return nil, err
	}
	return s.toPayment(p), nil
}

// reuseOutcome is the error that leaves insertPayment's transaction: the
// reference's refusal, or the payment to answer with instead.
func reuseOutcome(cur *payd.Payment, err error) error {
	if err != nil {
		return err
	}
	return errReuse{cur}
}

// reusePayment answers with the live payment holding p's reference, read
// again in the transaction that stores the response.
func (s *Server) reusePayment(ctx context.Context, q payd.Queries, p *payd.Payment) (any, error) {
	cur, err := q.PaymentByReference(ctx, p.BusinessID, p.Reference, p.CreatedAt)
	if payd.IsNotFound(err) {
		return nil, errReferenceFreed
	} else if err != nil {
		return nil, err
	}
	ok, err := cur.ReuseFor(p.Amount, p.Currency, p.CreatedAt)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errReferenceFreed
	}
	return s.toPayment(cur), nil
}

// resolveCustomer finds the payment's customer: by id (invalid_request on
// customer_id when the business has none such), or by email, creating one
// with the name when the business has none with it. A blocked customer is
// refused with customer_blocked, as checkout refuses them (spec 7.4).
func (s *Server) resolveCustomer(ctx context.Context, q payd.Queries, businessID string, ref customerRef, now time.Time) (*payd.Customer, error) {
	var c *payd.Customer
	var err error
	switch {
	case ref.id != "":
		// CustomersByID, not CustomerByID, which locks the row for an edit.
		var found map[string]*payd.Customer
		if found, err = q.CustomersByID(ctx, businessID, []string{ref.id}); err == nil && found[ref.id] == nil {
			return nil, payd.FieldError("customer_id", "this business has no customer %s", ref.id)
		}
		c = found[ref.id]
	case ref.email != "":
		c, err = s.customerByEmail(ctx, q, businessID, ref, now)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Blocked {
		return nil, payd.Errorf(payd.ErrCustomerBlocked, "customer %s is blocked; unblock them to take their payments", c.ID)
	}
	return c, nil
}

// customerByEmail finds the business's customer with the email or creates
// one (customer.created). A creation that loses a race to another
// request's finds theirs.
func (s *Server) customerByEmail(ctx context.Context, q payd.Queries, businessID string, ref customerRef, now time.Time) (*payd.Customer, error) {
	c, err := q.CustomerByEmail(ctx, businessID, ref.email)
	if !payd.IsNotFound(err) {
		return c, err
	}
	if c, err = payd.NewCustomer(businessID, ref.name, ref.email, "", now); err != nil {
		return nil, err
	}
	err = q.CreateCustomer(ctx, c)
	if payd.ErrorCode(err) == payd.ErrCustomerExists {
		return q.CustomerByEmail(ctx, businessID, ref.email)
	} else if err != nil {
		return nil, err
	}
	return c, s.customerChanged(ctx, q, payd.EventCustomerCreated, c, actorOf(ctx, ref.email))
}

// getPayment serves GET /payments/{id}.
func (s *Server) getPayment(w http.ResponseWriter, r *http.Request) error {
	p, err := s.store.PaymentByID(r.Context(), callOf(r.Context()).biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{s.toPayment(p)})
	return nil
}

// cancelPayment serves POST /payments/{id}/cancel (spec 3, 7.3); the
// payment's open checkout ends with it.
func (s *Server) cancelPayment(w http.ResponseWriter, r *http.Request) error {
	return s.changePayment(w, r, func(ctx context.Context, q payd.Queries, p *payd.Payment, now time.Time) error {
		changed, err := p.Cancel(now)
		if err != nil || !changed {
			return err
		}
		return s.endCheckout(ctx, q, p.CheckoutID, func(c *payd.Checkout) (bool, error) { return c.CancelForPayment(now) })
	})
}

// acceptPayment serves POST /payments/{id}/accept (spec 3, 7.3); a
// checkout still taking funds for the payment is closed.
func (s *Server) acceptPayment(w http.ResponseWriter, r *http.Request) error {
	return s.changePayment(w, r, func(ctx context.Context, q payd.Queries, p *payd.Payment, now time.Time) error {
		if err := p.Accept(now); err != nil {
			return err
		}
		return s.endCheckout(ctx, q, p.CheckoutID, func(c *payd.Checkout) (bool, error) { return c.Close(now), nil })
	})
}

// endCheckout applies end to the payment's current checkout, if it has
// one, and stores it with its event when end changed it; an error from end
// undoes the whole change.
func (s *Server) endCheckout(ctx context.Context, q payd.Queries, id string, end func(*payd.Checkout) (bool, error)) error {
	if id == "" {
		return nil
	}
	c, err := q.CheckoutByID(ctx, id)
	if err != nil {
		return err
	}
	was := c.Status
	if changed, err := end(c); err != nil || !changed {
		return err
	}
	if err := q.UpdateCheckout(ctx, c); err != nil {
		return err
	}
	return s.CheckoutChanged(ctx, q, was, c, actorOf(ctx, ""))
}

// changePayment reads the payment in a transaction, applies change, and
// stores it with its events and the stats it moves.
func (s *Server) changePayment(w http.ResponseWriter, r *http.Request, change func(context.Context, payd.Queries, *payd.Payment, time.Time) error) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	bizID, id := callOf(r.Context()).biz.ID, r.PathValue("id")
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		p, err := q.PaymentByID(ctx, bizID, id)
		if err != nil {
			return nil, err
		}
		old := *p
		if err := change(ctx, q, p, s.clock.Now()); err != nil {
			return nil, err
		}
		if len(p.Events) > len(old.Events) {
			if err := payd.SavePayment(ctx, q, s, &old, p, actorOf(ctx, "")); err != nil {
				return nil, err
			}
		}
		return s.toPayment(p), nil
	})
}
