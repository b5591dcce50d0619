package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"payd"
	"payd/clock"
)

// DelivererOptions tune the delivery loop; zero values take the defaults.
type DelivererOptions struct {
	// Interval is how often the loop looks for due work. One second keeps
	// the 5-second first retry on time, and the dev clock's Advance fires
	// the ticker, so retries due after a jump go out at once.
	Interval time.Duration
	// Lease is how long a claimed delivery is held (payd.DeliveryLease).
	Lease time.Duration
	// Page is how many events one fan-out transaction handles.
	Page int
	// Workers bounds the attempts in flight. Each attempt has its own
	// goroutine, so a slow or dead endpoint holds one slot, never the others.
	Workers int
}

func (o DelivererOptions) withDefaults() DelivererOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = payd.DeliveryLease
	}
	if o.Page <= 0 {
		o.Page = 200
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	return o
}

// Deliverer is the delivery loop: it fans stored events out into one
// delivery per subscribed endpoint, then claims due deliveries with a
// lease and attempts each. Any number of replicas run it side by side;
// the leases and the version fence keep them from doubling an attempt's
// record, and a delivery whose holder crashed is claimed again once its
// lease lapses.
type Deliverer struct {
	store  payd.Store
	sender *Sender
	clock  clock.Clock
	log    *slog.Logger
	opts   DelivererOptions
	sem    chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewDeliverer returns the delivery loop over st, sending with s.
func NewDeliverer(st payd.Store, s *Sender, clk clock.Clock, log *slog.Logger, o DelivererOptions) *Deliverer {
	o = o.withDefaults()
	return &Deliverer{store: st, sender: s, clock: clk, log: log, opts: o, sem: make(chan struct{}, o.Workers)}
}

var _ payd.DeliverySender = (*Deliverer)(nil)

// Start runs the loop in the background until Stop or ctx ends. Unlike
// RunOnce, a background run does not wait for its attempts: slots free
// up as they end, and the next tick claims more.
func (d *Deliverer) Start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, d.cancel = context.WithCancel(ctx)
	d.done = make(chan struct{})
	go func() {
		defer close(d.done)
		t := d.clock.NewTicker(d.opts.Interval)
		defer t.Stop()
		for {
			if err := d.run(ctx); err != nil && ctx.Err() == nil {
				d.log.Error("webhook delivery run failed", slog.Any("error", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
		}
	}()
}

// Stop ends the loop and waits for attempts in flight. An attempt cut
// short is not recorded: its lease lapses and it is made again.
func (d *Deliverer) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel == nil {
		return
	}
	d.cancel()
	<-d.done
	d.wg.Wait()
	d.cancel = nil
}

// RunOnce fans out new events, attempts every due delivery and waits
// for the attempts to end. Tests call it directly.
func (d *Deliverer) RunOnce(ctx context.Context) error {
	err := d.run(ctx)
	d.wg.Wait()
	return err
}

// run fans out, then claims as many due deliveries as there are free
// slots and starts an attempt for each.
func (d *Deliverer) run(ctx context.Context) error {
	if err := d.fanOut(ctx); err != nil {
		return err
	}
	for {
		n := cap(d.sem) - len(d.sem)
		if n == 0 {
			return nil
		}
		now := d.clock.Now()
		ds, err := d.store.ClaimDueDeliveries(ctx, now, now.Add(d.opts.Lease), n)
		if err != nil {
			return err
		}
		for _, dl := range ds {
			d.sem <- struct{}{}
			d.wg.Add(1)
			go func() {
				defer func() { <-d.sem; d.wg.Done() }()
				d.deliver(ctx, dl)
			}()
		}
		if len(ds) < n {
			return nil
		}
	}
}

// fanOut turns undispatched events into deliveries, a page per
// transaction, until none is left.
func (d *Deliverer) fanOut(ctx context.Context) error {
	for {
		n := 0
		err := d.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			var err error
			n, err = fanOutPage(ctx, q, d.clock.Now(), d.opts.Page)
			return err
		})
		if err != nil || n < d.opts.Page {
			return err
		}
	}
}

// fanOutPage stores the deliveries of up to limit events and marks the
// events dispatched, in the caller's transaction.
func fanOutPage(ctx context.Context, q payd.Queries, now time.Time, limit int) (int, error) {
	evs, err := q.UndispatchedEvents(ctx, limit)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
		eps, err := q.EndpointsFor(ctx, ev.BusinessID, ev.Type)
		if err != nil {
			return 0, err
		}
		ds, err := payd.NewDeliveries(ev, eps, now)
		if err != nil {
			return 0, err
		}
		if err := q.CreateDeliveries(ctx, ds); err != nil {
			return 0, err
		}
	}
	return len(evs), q.MarkEventsDispatched(ctx, ids, now)
}

// deliver makes one automatic attempt of a claimed delivery and saves
// the outcome under the claim's version. An endpoint turned off drops it.
func (d *Deliverer) deliver(ctx context.Context, dl *payd.WebhookDelivery) {
	log := d.log.With(slog.String("delivery", dl.ID))
	e, err := d.store.WebhookEndpointByID(ctx, dl.BusinessID, dl.WebhookID)
	if err != nil {
		log.Warn("webhook delivery: reading the endpoint", slog.Any("error", err))
		return
	}
	if !e.Enabled {
		dl.Drop(payd.DropEndpointDisabled, d.clock.Now())
	} else {
		a, headers, ended := d.Attempt(ctx, e, dl, payd.TriggerAutomatic)
		if ctx.Err() != nil {
			return // shutting down: the lease lapses and the attempt is made again
		}
		dl.Record(a, headers, ended, d.Retry)
	}
	if err := d.store.SaveDelivery(ctx, dl); err != nil && ctx.Err() == nil {
		log.Warn("webhook delivery: saving the attempt", slog.Any("error", err))
	}
}

// Attempt posts dl's payload to e now, signed with the secrets e signs
// with at this moment and a fresh webhook-timestamp; webhook-id is the
// event id, the same on every attempt. See payd.DeliverySender.
func (d *Deliverer) Attempt(ctx context.Context, e *payd.WebhookEndpoint, dl *payd.WebhookDelivery, trigger string) (payd.DeliveryAttempt, map[string]string, time.Time) {
	now := d.clock.Now()
	a := payd.DeliveryAttempt{At: now, Trigger: trigger}
	h, err := Headers(dl.EventID, now, dl.Payload, e.Secrets(now))
	if err != nil {
		a.Error = err.Error()
		return a, nil, now
	}
	res := d.sender.Post(ctx, e.URL, h, dl.Payload)
	a.ResponseStatus, a.DurationMS = res.Status, res.Duration.Milliseconds()
	if res.Err != nil {
		a.Error = errorText(res.Err)
	}
	return a, flatHeaders(h), d.clock.Now()
}

// Retry is the schedule of spec 6.3 (NextAttempt).
func (d *Deliverer) Retry(n int, last time.Time) (time.Time, bool) { return NextAttempt(n, last) }

// flatHeaders are the sent headers as the delivery record shows them
// (spec 2.10 request_headers), with lower-case names.
func flatHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k := range h {
		out[strings.ToLower(k)] = h.Get(k)
	}
	return out
}

// errorText is a failure's reason for the delivery log, shortened so a
// long wrapped error cannot bloat every row.
func errorText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
