package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"payd"
	"payd/clock"
	"payd/loop"
)

// Expirer ends what the clock has run out on: quotes of checkouts still
// taking funds, and pending payments past their expires_at (spec 3). Every
// replica may run one: each change is made on rows read again in its own
// transaction, so two expirers never both apply it.
type Expirer struct {
	store  payd.Store
	clock  clock.Clock
	log    *slog.Logger
	opts   Options
	runner loop.Runner
}

// NewExpirer returns an expirer.
func NewExpirer(st payd.Store, clk clock.Clock, log *slog.Logger, o Options) *Expirer {
	return &Expirer{store: st, clock: clk, log: log, opts: o.withDefaults()}
}

// Start runs the expirer in the background until Stop or ctx ends.
func (e *Expirer) Start(ctx context.Context) {
	log := e.log.With(slog.String("loop", "expirer"))
	e.runner.Start(ctx, func(ctx context.Context) {
		every(ctx, e.clock, e.opts.Interval, nil, log, func(ctx context.Context, _ bool) error { return e.RunOnce(ctx) })
	})
}

// Stop stops the expirer and waits for a run in progress to end.
func (e *Expirer) Stop() { e.runner.Stop() }

// RunOnce ends every checkout and payment due at the clock's time.
func (e *Expirer) RunOnce(ctx context.Context) error {
	now := e.clock.Now()
	cs, err := e.store.DueCheckouts(ctx, now, e.opts.Page)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range cs {
		if err := e.expire(ctx, c.BusinessID, c.PaymentID, c.ID); err != nil {
			errs = append(errs, fmt.Errorf("checkout %s: %w", c.ID, err))
		}
	}
	ps, err := e.store.DuePayments(ctx, now, e.opts.Page)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, p := range ps {
		if err := e.expire(ctx, p.BusinessID, p.ID, p.CheckoutID); err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", p.ID, err))
		}
	}
	return errors.Join(errs...)
}

// expire reads the payment and its checkout (checkoutID may be "") in a
// transaction and lets the domain decide what has run out.
func (e *Expirer) expire(ctx context.Context, bizID, paymentID, checkoutID string) error {
	now := e.clock.Now()
	return e.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		p, err := q.PaymentByID(ctx, bizID, paymentID)
		if err != nil {
			return err
		}
		old := *p
		if checkoutID != "" {
			c, err := q.CheckoutByID(ctx, checkoutID)
			if err != nil {
				return err
			}
			if was := c.Status; c.Active() {
				if o := c.Expire(p, now); o.Changed {
					return storeOutcome(ctx, q, e.opts.Events, was, c, &old, p, o)
				}
				return nil
			}
		}
		if !p.Expire(now) {
			return nil
		}
		return payd.SavePayment(ctx, q, e.opts.Events, &old, p, payd.SystemActor)
	})
}
