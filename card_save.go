package payd

import (
	"context"
	"time"
)

// SaveCardReport is the one way a provider's report is applied, whether it
// came by webhook, by the poller or by the page asking for news: in q's
// transaction it finds the checkout whose current route is the report's
// session (a report for an earlier route's session, or for a session payd
// never opened, changes nothing), applies it (Checkout.ApplyCardReport)
// and stores the checkout and the payment with their events. It reports
// whether anything changed; the same report twice changes nothing.
func SaveCardReport(ctx context.Context, q Queries, rec EventRecorder, provider string, r CardReport, now time.Time) (bool, error) {
	c, err := q.CheckoutByCardSession(ctx, provider, r.Session)
	if IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	p, err := q.PaymentByID(ctx, c.BusinessID, c.PaymentID)
	if err != nil {
		return false, err
	}
	old, was := *p, c.Status
	if !c.ApplyCardReport(p, r, now) {
		return false, nil
	}
	return true, SaveCheckoutChange(ctx, q, rec, was, c, &old, p, SystemActor)
}

// ApplyCardReports applies a provider's reports, each in a transaction of
// its own (SaveCardReport), at the time now gives then: the one way the
// provider's webhooks and polls reach a checkout.
func ApplyCardReports(ctx context.Context, st Store, rec EventRecorder, provider string, reps []CardReport, now func() time.Time) error {
	for _, r := range reps {
		err := st.Tx(ctx, func(ctx context.Context, q Queries) error {
			_, err := SaveCardReport(ctx, q, rec, provider, r, now())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PollCardSession asks prov how session stands and applies the answer
// (ApplyCardReports): what the card poller does for every session it
// follows and the page's refresh for its own.
func PollCardSession(ctx context.Context, st Store, prov CardProvider, rec EventRecorder, session string, now func() time.Time) error {
	r, err := prov.Status(ctx, session)
	if err != nil {
		return err
	}
	r.Session = session
	return ApplyCardReports(ctx, st, rec, prov.Name(), []CardReport{r}, now)
}

// SaveCheckoutChange stores a change to a checkout c (in status was
// before) and its payment p (old before), the one way the watcher, the
// expirer and the card rail store one: the checkout, then the payment
// through SavePayment with the checkout's event.
func SaveCheckoutChange(ctx context.Context, q Queries, rec EventRecorder, was CheckoutStatus, c *Checkout, old, p *Payment, actor Actor) error {
	if err := q.UpdateCheckout(ctx, c); err != nil {
		return err
	}
	changed, err := rec.CheckoutEvents(was, c, actor)
	if err != nil {
		return err
	}
	return SavePayment(ctx, q, rec, old, p, actor, changed...)
}
