package payd

import (
	"context"
	"time"
)

// SavePayment is the one way a payment change is saved (DESIGN.md §2): every
// caller that creates or changes a payment (API handlers, the watcher, the
// expirer) goes through it, so none can store the row and forget its
// stats or its events. In q's transaction it stores p (created when old is
// nil, else its change from old, with the history entries p gained), adds
// the change to its customer's and link's stats, and stores the change's
// events (the outbox) followed by more, the events of the transaction's
// other changes, in one statement. rec renders the events.
func SavePayment(ctx context.Context, q Queries, rec EventRecorder, old, p *Payment, actor Actor, more ...*Event) error {
	var err error
	if old == nil {
		err = q.CreatePayment(ctx, p)
	} else {
		err = q.UpdatePayment(ctx, p)
	}
	if err != nil {
		return err
	}
	if err := applyPaymentStats(ctx, q, old, p); err != nil {
		return err
	}
	return savePaymentEvents(ctx, q, rec, old, p, actor, more)
}

// SaveOpenedCheckout saves a checkout opened on p (see OpenCryptoCheckout),
// the one way both a first checkout and a remainder's are stored: p's
// change from old (nil for a payment the checkout creates) through
// SavePayment, the checkout, and its checkout.created event with p's.
func SaveOpenedCheckout(ctx context.Context, q Queries, rec EventRecorder, old, p *Payment, c *Checkout, actor Actor) error {
	opened, err := rec.CheckoutEvents("", c, actor)
	if err != nil {
		return err
	}
	if err := SavePayment(ctx, q, rec, old, p, actor, opened...); err != nil {
		return err
	}
	return q.CreateCheckout(ctx, c)
}

// savePaymentEvents stores the events of p's change from old, then more.
func savePaymentEvents(ctx context.Context, q Queries, rec EventRecorder, old, p *Payment, actor Actor, more []*Event) error {
	events, err := rec.PaymentEvents(old, p, actor)
	if err != nil {
		return err
	}
	stampAfter(events, more)
	if events = append(events, more...); len(events) == 0 {
		return nil
	}
	return q.AppendEvents(ctx, events)
}

// applyPaymentStats adds the change from old to p (old is nil for a new
// payment) to the stats of p's customer and link, in q's transaction, so
// the totals can never drift from the payments.
func applyPaymentStats(ctx context.Context, q Queries, old, p *Payment) error {
	d := PaymentStatsDelta(old, p)
	if d.IsZero() {
		return nil
	}
	if p.CustomerID != "" {
		if err := q.AddCustomerStats(ctx, p.BusinessID, p.CustomerID, d); err != nil {
			return err
		}
	}
	if p.LinkID != "" {
		return q.AddLinkStats(ctx, p.BusinessID, p.LinkID, d)
	}
	return nil
}

// stampAfter moves the events of more after the last of events, keeping
// their order: they were rendered first (a checkout is opened before the
// payment change is saved), and the outbox goes out in created_at order,
// a payment's events before those of the changes its save carries.
func stampAfter(events, more []*Event) {
	if len(events) == 0 || len(more) == 0 {
		return
	}
	last := events[len(events)-1].CreatedAt
	if more[0].CreatedAt.After(last) {
		return
	}
	shift := last.Sub(more[0].CreatedAt) + time.Microsecond
	for _, e := range more {
		e.CreatedAt = e.CreatedAt.Add(shift)
	}
}
