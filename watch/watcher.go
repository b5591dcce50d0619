// Package watch runs the loops that move payments along without anyone
// asking: a Watcher per network reads transfers into checkouts' deposits,
// and the Expirer ends quotes and payments whose time is up.
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
	"payd/money"
)

// Options tune a loop; zero values take the defaults.
type Options struct {
	// Interval is how often the loop runs when nothing wakes it.
	Interval time.Duration
	// Lease is how long one replica keeps the job before another may take
	// it over; it outlasts many runs, and a crashed holder's lapses.
	Lease time.Duration
	// Page is how many checkouts one read of the store returns.
	Page int
	// LateEvery is how often the watcher's timed runs also read the
	// checkouts that ended and are watched only for late funds (the
	// watcher); every other timed run reads the live ones alone.
	LateEvery time.Duration
	// Events renders the events of the changes the loop makes, stored in
	// their transactions. Only tests of the loops alone leave it nil: they
	// get silent, which renders none.
	Events payd.EventRecorder
	// Followed are the networks followed on real nodes (the expirer's
	// option): their quotes hold while payd cannot see the chain (see
	// Expirer).
	Followed []money.Network
}

// silent is the EventRecorder of a loop run without an API, in tests of
// the loops alone: its changes are told to no one.
type silent struct{}

func (silent) PaymentEvents(*payd.Payment, *payd.Payment, payd.Actor) ([]*payd.Event, error) {
	return nil, nil
}

func (silent) CheckoutEvents(payd.CheckoutStatus, *payd.Checkout, payd.Actor) ([]*payd.Event, error) {
	return nil, nil
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 15 * time.Second
	}
	if o.Page <= 0 {
		o.Page = 500
	}
	if o.LateEvery <= 0 {
		o.LateEvery = time.Minute
	}
	if o.Events == nil {
		o.Events = silent{}
	}
	return o
}

// changer is a network that can say when it changed, so the watcher wakes
// at once instead of at its next tick (the devnet does).
type changer interface {
	Changed() <-chan struct{}
}

// blinder is a network whose chain payd may not see for a while (a real
// node followed by a Follower): the watcher skips its runs meanwhile.
type blinder interface {
	Unseen(ctx context.Context) (bool, error)
}

// Watcher follows one network's deposits. One replica at a time watches a
// network, holding the lease "watch:NETWORK"; every change it makes is
// also fenced by the checkout's version, so two watchers never apply one
// report twice even if the lease is lost mid-run.
type Watcher struct {
	store  payd.Store
	net    payd.Network
	clock  clock.Clock
	log    *slog.Logger
	opts   Options
	holder string
	runner loop.Runner
	// lateDue is when a timed run next reads the ended checkouts too; only
	// the loop's goroutine uses it.
	lateDue time.Time
}

// NewWatcher returns the watcher of net.
func NewWatcher(st payd.Store, net payd.Network, clk clock.Clock, log *slog.Logger, o Options) *Watcher {
	return &Watcher{store: st, net: net, clock: clk, log: log, opts: o.withDefaults(),
		holder: payd.NewID("wch_")}
}

// Start runs the watcher in the background until Stop or ctx ends: every
// Interval it reads the live checkouts (those still taking funds), and
// every LateEvery, or when the network says it changed, every watched one,
// the ended ones watched for late funds included. Those are most of the
// watched checkouts (a week of them, against a quote's minutes) and
// almost never paid, so a run costs what the live ones cost.
func (w *Watcher) Start(ctx context.Context) {
	var wake func() <-chan struct{}
	if c, ok := w.net.(changer); ok {
		wake = c.Changed
	}
	log := w.log.With(slog.String("network", string(w.net.Name())))
	w.runner.Start(ctx, func(ctx context.Context) { every(ctx, w.clock, w.opts.Interval, wake, log, w.tick) })
}

// tick is one run of the loop: all watched checkouts when the network
// woke it or the late ones are due, the live ones otherwise. The late ones
// are due again LateEvery after a full run this replica made holding the
// lease, so a replica that takes the lease over starts with a full run.
func (w *Watcher) tick(ctx context.Context, woken bool) error {
	now := w.clock.Now()
	if !woken && now.Before(w.lateDue) {
		_, err := w.run(ctx, payd.WatchCursor{Until: payd.LiveWatchUntil})
		return err
	}
	held, err := w.run(ctx, payd.WatchCursor{})
	if held {
		w.lateDue = now.Add(w.opts.LateEvery)
	}
	return err
}

// Stop stops the watcher, waits for a run in progress to end and gives
// its lease up, so a restarted replica watches at once.
func (w *Watcher) Stop() {
	w.runner.Stop()
	release(w.store, w.log, "watch:"+string(w.net.Name()), w.holder)
}

// release gives a stopped loop's lease up; a failure only means another
// replica waits for the lease to lapse.
func release(st payd.LeaseStore, log *slog.Logger, name, holder string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.ReleaseLease(ctx, name, holder); err != nil {
		log.Warn("giving a lease up failed; it lapses on its own", slog.String("lease", name), slog.Any("error", err))
	}
}

// RunOnce reads every watched deposit of the network once and applies
// what changed. It does nothing while another replica holds the lease.
func (w *Watcher) RunOnce(ctx context.Context) error {
	_, err := w.run(ctx, payd.WatchCursor{})
	return err
}

// run reads the watched deposits from the cursor from on (the zero cursor
// for all of them) and applies what changed. held reports whether this
// replica held the lease and so made the run.
func (w *Watcher) run(ctx context.Context, from payd.WatchCursor) (held bool, err error) {
	now := w.clock.Now()
	held, err = w.store.AcquireLease(ctx, "watch:"+string(w.net.Name()), w.holder, now, now.Add(w.opts.Lease))
	if err != nil || !held {
		return false, err
	}
	if b, ok := w.net.(blinder); ok {
		if unseen, err := b.Unseen(ctx); err != nil || unseen {
			return false, err
		}
	}
	var errs []error
	for after := from; ; {
		page, err := w.store.WatchedCheckouts(ctx, w.net.Name(), now, after, w.opts.Page)
		if err != nil {
			return true, err
		}
		if len(page) == 0 {
			return true, errors.Join(errs...)
		}
		if err := w.watchPage(ctx, page, now); err != nil {
			errs = append(errs, err)
		}
		after = payd.WatchCursorOf(page[len(page)-1])
	}
}

// watchPage asks the network once about a page of checkouts and applies
// the reports of those whose view changed.
func (w *Watcher) watchPage(ctx context.Context, page []*payd.Checkout, now time.Time) error {
	deps := make([]payd.Deposit, len(page))
	for i, c := range page {
		deps[i] = c.Crypto.Deposit
	}
	seen, err := w.net.Transfers(ctx, deps)
	if err != nil {
		return err
	}
	byDeposit := map[payd.Deposit][]payd.Transfer{}
	for _, t := range seen {
		d := payd.Deposit{Address: t.To, Reference: t.Reference}
		byDeposit[d] = append(byDeposit[d], t)
	}
	var errs []error
	for _, c := range page {
		ts := byDeposit[c.Crypto.Deposit]
		if !stale(c, ts, now) {
			continue
		}
		if err := w.apply(ctx, c.ID, c.Version, ts, now); err != nil {
			errs = append(errs, fmt.Errorf("checkout %s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}

// stale reports whether the report differs from what the checkout holds
// (a transfer new, gone, back or with other confirmations), or its quote
// is over: only then is the payment read and a write made.
func stale(c *payd.Checkout, ts []payd.Transfer, now time.Time) bool {
	if c.Active() && !now.Before(c.ExpiresAt) {
		return true
	}
	known := make(map[payd.TransferKey]payd.SeenTransfer, len(c.Transfers))
	for _, st := range c.Transfers {
		known[st.Key()] = st
	}
	for _, t := range ts {
		if st, ok := known[t.Key()]; !ok || st.Gone || st.Confirmations != c.KeptConfirmations(t.Confirmations) {
			return true
		}
		delete(known, t.Key())
	}
	for _, st := range known {
		if !st.Counted && !st.Gone {
			return true
		}
	}
	return false
}

// apply observes the report on the checkout read again in a transaction,
// and stores the checkout, the payment, the stats and the holdings it
// moved, together. A checkout changed since the page was read (version
// moved) is left to the next run, which reads it and the network again:
// a report older than the checkout, from a watcher that lost its lease,
// could otherwise take back a transfer seen since.
func (w *Watcher) apply(ctx context.Context, id string, version int, ts []payd.Transfer, now time.Time) error {
	return w.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		c, err := q.CheckoutByID(ctx, id)
		if err != nil {
			return err
		}
		if c.Version != version {
			return nil
		}
		p, err := q.PaymentByID(ctx, c.BusinessID, c.PaymentID)
		if err != nil {
			return err
		}
		old, was := *p, c.Status
		o := c.Observe(p, ts, w.net.ExplorerURL, now)
		if !o.Changed {
			return nil
		}
		return storeOutcome(ctx, q, w.opts.Events, was, c, &old, p, o)
	})
}

// storeOutcome writes an outcome: the checkout, and through
// payd.SavePayment the payment with its new history, stats and events,
// the checkout's event with them; then the coin counted into the wallet's
// holdings. was is the checkout's status before.
func storeOutcome(ctx context.Context, q payd.Queries, rec payd.EventRecorder, was payd.CheckoutStatus,
	c *payd.Checkout, old, p *payd.Payment, o payd.Outcome) error {
	if err := payd.SaveCheckoutChange(ctx, q, rec, was, c, old, p, payd.SystemActor); err != nil {
		return err
	}
	for _, coin := range append([]money.CoinAmount{o.Counted}, o.Foreign...) {
		if coin.Units == nil || coin.Sign() <= 0 {
			continue
		}
		if err := q.AddHoldings(ctx, c.Crypto.WalletID, c.Crypto.Network, coin); err != nil {
			return err
		}
	}
	return nil
}

// every runs run at once (woken), then every interval on the clock, or
// when wake fires (then woken is true), until ctx ends. A failing run is
// logged and the next one tries again.
func every(ctx context.Context, clk clock.Clock, interval time.Duration, wake func() <-chan struct{},
	log *slog.Logger, run func(ctx context.Context, woken bool) error) {
	t := clk.NewTicker(interval)
	defer t.Stop()
	for woken := true; ; {
		var woke <-chan struct{}
		if wake != nil {
			woke = wake()
		}
		if err := run(ctx, woken); err != nil && ctx.Err() == nil {
			log.Error("background run failed", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			woken = false
		case <-woke:
			woken = true
		}
	}
}
