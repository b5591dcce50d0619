package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
)

// CardPoller asks the card provider how every route it may still move
// stands (awaiting_payment, challenge, processing) and applies what it
// says (payd.SaveCardReport), so that a card checkout moves on even when
// the provider's webhook is lost or late. A webhook and a poll may report
// the same change in either order; the second changes nothing. Every
// replica may run one, as with the Expirer: each report is applied to the
// checkout read again under its version.
type CardPoller struct {
	store    payd.Store
	provider payd.CardProvider
	clock    clock.Clock
	log      *slog.Logger
	opts     Options
	runner   loop.Runner
}

// NewCardPoller returns a poller of provider's sessions. Options.Interval
// is how often it runs (every 5 s when unset, on the service clock).
func NewCardPoller(st payd.Store, provider payd.CardProvider, clk clock.Clock, log *slog.Logger, o Options) *CardPoller {
	if o.Interval <= 0 {
		o.Interval = CardPollEvery
	}
	return &CardPoller{store: st, provider: provider, clock: clk, log: log, opts: o.withDefaults()}
}

// CardPollEvery is how often the poller asks, by default: a provider's
// webhook usually comes first.
const CardPollEvery = 5 * time.Second

// Start runs the poller in the background until Stop or ctx ends.
func (cp *CardPoller) Start(ctx context.Context) {
	log := cp.log.With(slog.String("loop", "card-poller"))
	cp.runner.Start(ctx, func(ctx context.Context) {
		every(ctx, cp.clock, cp.opts.Interval, nil, log, func(ctx context.Context, _ bool) error { return cp.RunOnce(ctx) })
	})
}

// Stop stops the poller and waits for a run in progress to end.
func (cp *CardPoller) Stop() { cp.runner.Stop() }

// RunOnce polls every session the provider may still move, a page at a
// time. A session the provider cannot answer for now is tried again on
// the next run; the others go on.
func (cp *CardPoller) RunOnce(ctx context.Context) error {
	var errs []error
	for after := ""; ; {
		cs, err := cp.store.PolledCardCheckouts(ctx, after, cp.opts.Page)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, c := range cs {
			if err := cp.poll(ctx, c); err != nil {
				errs = append(errs, fmt.Errorf("checkout %s: %w", c.ID, err))
			}
		}
		if len(cs) < cp.opts.Page {
			return errors.Join(errs...)
		}
		after = cs[len(cs)-1].ID
	}
}

// poll asks about one checkout's current session and applies the answer.
func (cp *CardPoller) poll(ctx context.Context, c *payd.Checkout) error {
	k := c.Card
	if k == nil || k.Session == "" || k.Provider != cp.provider.Name() {
		return nil
	}
	return payd.PollCardSession(ctx, cp.store, cp.provider, cp.opts.Events, k.Session, cp.clock.Now)
}
