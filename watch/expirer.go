package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
	"payd/money"
)

// Expirer ends what the clock has run out on: quotes of checkouts still
// taking funds, and pending payments past their expires_at (spec 3). Every
// replica may run one: each change is made on rows read again in its own
// transaction, so two expirers never both apply it.
//
// On a network followed on a real node, nothing is ended while payd cannot
// see the chain: its node cannot be read, no replica has read it lately,
// or its follower is behind the node's tip (catching up). A customer who
// paid then would otherwise find the payment ended as unpaid, and the
// transfer, seen later, counted as late; once the follower has caught up,
// what is due ends with what arrived in time known. A hold lasts at most
// MaxHold past a quote's end: after that the quote ends even unseen, so a
// dead node cannot keep stale quotes payable for ever.
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

// RunOnce ends every checkout and payment due at the clock's time, but
// those on held networks.
func (e *Expirer) RunOnce(ctx context.Context) error {
	now := e.clock.Now()
	held, err := e.held(ctx, now)
	if err != nil {
		return err
	}
	cs, err := e.store.DueCheckouts(ctx, now, e.opts.Page, held, now.Add(-MaxHold))
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range cs {
		if err := e.expire(ctx, c.BusinessID, c.PaymentID, c.ID, held); err != nil {
			errs = append(errs, fmt.Errorf("checkout %s: %w", c.ID, err))
		}
	}
	ps, err := e.store.DuePayments(ctx, now, e.opts.Page)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, p := range ps {
		if err := e.expire(ctx, p.BusinessID, p.ID, p.CheckoutID, held); err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", p.ID, err))
		}
	}
	return errors.Join(errs...)
}

// MaxHold is the longest a quote is held past its end while payd cannot
// see its chain.
const MaxHold = time.Hour

// held lists the followed networks payd cannot see now: no status yet,
// a failing node, no reading for staleAfter, or a follower behind the
// node's tip.
func (e *Expirer) held(ctx context.Context, now time.Time) ([]money.Network, error) {
	if len(e.opts.Followed) == 0 {
		return nil, nil
	}
	all, err := e.store.ChainStatuses(ctx)
	if err != nil {
		return nil, err
	}
	byNetwork := map[money.Network]payd.ChainStatus{}
	for _, s := range all {
		byNetwork[s.Network] = s
	}
	var out []money.Network
	for _, n := range e.opts.Followed {
		if s, ok := byNetwork[n]; unseen(s, ok, now) {
			out = append(out, n)
		}
	}
	return out, nil
}

// expire reads the payment and its checkout (checkoutID may be "") in a
// transaction and lets the domain decide what has run out. A payment whose
// checkout takes funds on a held network waits with it.
func (e *Expirer) expire(ctx context.Context, bizID, paymentID, checkoutID string, held []money.Network) error {
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
			if c.Active() && c.Crypto != nil && slices.Contains(held, c.Crypto.Network) && c.ExpiresAt.After(now.Add(-MaxHold)) {
				return nil
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
