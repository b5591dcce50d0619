package api

import (
	"context"
	"net/http"
	"net/url"

	"payd"
)

// remainderRequest is the answer of POST /payments/{id}/request-remainder
// (spec 2.9).
type remainderRequest struct {
	Kind     string   `json:"kind"`
	Payment  payment  `json:"payment"`
	Checkout checkout `json:"checkout"`
	URL      string   `json:"url"`
}

// requestRemainder serves POST /payments/{id}/request-remainder (spec 4.6):
// a new checkout, in the coin and on the network the customer used, for
// what an underpaid payment still lacks, once its quote is over.
func (s *Server) requestRemainder(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	ctx := r.Context()
	biz := callOf(ctx).biz
	p, err := s.store.PaymentByID(ctx, biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	tg, in, err := s.remainderTarget(ctx, biz, p)
	if err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		p, c, err := s.openRemainder(ctx, q, tg, in)
		if err != nil {
			return nil, err
		}
		page, err := s.pageURL(ctx, q, p)
		if err != nil {
			return nil, err
		}
		return remainderRequest{Kind: "remainder_request", Payment: s.toPayment(p), Checkout: s.toCheckout(c),
			URL: page + "?checkout=" + url.QueryEscape(c.ID)}, nil
	})
}

// checkoutRemainder serves POST /checkouts/{id}/remainder (public): the
// customer of an underpaid payment whose quote has ended asks, on the
// hosted page, for a new quote for what is still due. It opens the same
// checkout as POST /payments/{id}/request-remainder, under the same rules,
// for the payment whose current checkout is {id}; remainder_unavailable
// when a later checkout of the payment exists.
func (s *Server) checkoutRemainder(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	ctx := r.Context()
	c, err := s.store.CheckoutByID(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	p, err := s.store.PaymentByID(ctx, c.BusinessID, c.PaymentID)
	if err != nil {
		return err
	}
	if c.Rail != payd.RailCrypto {
		return payd.Errorf(payd.ErrWrongRail, "a card checkout has no remainder; its coin comes from the card provider")
	}
	if p.CheckoutID != c.ID {
		return payd.Errorf(payd.ErrRemainderUnavailable, "a later checkout of this payment exists; pay on it")
	}
	biz, err := s.store.BusinessByID(ctx, c.BusinessID)
	if err != nil {
		return err
	}
	if err := publicTarget(ctx, biz); err != nil {
		return err
	}
	tg, in, err := s.remainderTarget(ctx, biz, p)
	if err != nil {
		return err
	}
	return s.opened(s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		_, c, err := s.openRemainder(ctx, q, tg, in)
		if err != nil {
			return nil, err
		}
		return s.toCheckout(c), nil
	}), payd.RailCrypto, in.Network)
}

// remainderTarget checks that p may have a remainder now and gathers what
// opening it needs: the wallet that receives the payment's coin, the
// network and the rates.
func (s *Server) remainderTarget(ctx context.Context, biz *payd.Business, p *payd.Payment) (*checkoutTarget, payd.OpenParams, error) {
	if err := s.remainderAllowed(ctx, s.store, p); err != nil {
		return nil, payd.OpenParams{}, err
	}
	tg := &checkoutTarget{biz: biz, payment: p}
	ch := checkoutChoice{paymentID: p.ID, asset: p.Method.Asset, network: p.Method.Network}
	var err error
	if tg.cs, err = s.checkoutSettings(ctx, s.store, biz.ID); err != nil {
		return nil, payd.OpenParams{}, err
	}
	if err := s.pauses.check(ctx, "network:"+string(ch.network)); err != nil {
		return nil, payd.OpenParams{}, err
	}
	if err := s.loadWallet(ctx, tg, ch); err != nil {
		return nil, payd.OpenParams{}, err
	}
	in, err := s.openParams(ctx, tg, ch)
	if err != nil {
		return nil, payd.OpenParams{}, err
	}
	in.Remainder = true
	return tg, in, nil
}

// remainderAllowed applies the rules of spec 4.6 that need no wallet:
// payment_not_underpaid, and remainder_unavailable while the quote is
// live or when no page is left to pay on.
func (s *Server) remainderAllowed(ctx context.Context, q payd.Queries, p *payd.Payment) error {
	if p.Status == payd.PaymentUnderpaid && p.Method != nil && p.Method.Rail == payd.RailCard {
		return payd.Errorf(payd.ErrWrongRail, "a card payment has no remainder: its coin comes from the card provider; accept the payment as it stands, or not")
	}
	if p.Status != payd.PaymentUnderpaid || p.Method == nil || p.Method.Rail != payd.RailCrypto {
		return payd.Errorf(payd.ErrPaymentNotUnderpaid, "only an underpaid payment has a remainder; this one is %s", p.Status)
	}
	if p.Amount+p.CustomerFee <= p.AmountReceived {
		return payd.Errorf(payd.ErrNothingDue, "payment %s has received its whole amount", p.ID)
	}
	now := s.clock.Now()
	if p.ExpiresAt != nil && !now.Before(*p.ExpiresAt) {
		return payd.Errorf(payd.ErrRemainderUnavailable, "the payment expired; no checkout page is left to pay the rest on")
	}
	c, err := q.CheckoutByID(ctx, p.CheckoutID)
	if err != nil {
		return err
	}
	if c.Active() && now.Before(c.ExpiresAt) {
		return payd.Errorf(payd.ErrRemainderUnavailable, "the quote is still live: the customer can still send the rest to the same address until %s",
			c.ExpiresAt.Format("2006-01-02T15:04:05Z"))
	}
	return nil
}

// openRemainder opens the remainder checkout in the transaction, checking
// the rules again on the locked payment.
func (s *Server) openRemainder(ctx context.Context, q payd.Queries, tg *checkoutTarget, in payd.OpenParams) (*payd.Payment, *payd.Checkout, error) {
	p, err := q.PaymentByID(ctx, tg.biz.ID, tg.payment.ID)
	if err != nil {
		return nil, nil, err
	}
	if err := s.remainderAllowed(ctx, q, p); err != nil {
		return nil, nil, err
	}
	prev, err := q.CheckoutByID(ctx, p.CheckoutID)
	if err != nil {
		return nil, nil, err
	}
	in.Email = prev.Email
	old := *p
	c, err := s.quoteCheckout(ctx, q, tg, p, in)
	if err != nil {
		return nil, nil, err
	}
	if err := payd.SaveOpenedCheckout(ctx, q, s, &old, p, c, actorOf(ctx, prev.Email)); err != nil {
		return nil, nil, err
	}
	return p, c, nil
}

// pageURL is the hosted page a payment is paid on: its own, or its link's.
func (s *Server) pageURL(ctx context.Context, q payd.Queries, p *payd.Payment) (string, error) {
	if p.LinkID == "" {
		return s.paymentURL(p.Code), nil
	}
	l, err := q.LinkByID(ctx, p.BusinessID, p.LinkID)
	if err != nil {
		return "", err
	}
	return s.linkURL(l.Code), nil
}
