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
	"payd/loop"
)

// DelivererOptions tune the delivery loop; zero values take the defaults.
type DelivererOptions struct {
	// Observe is told of each automatic attempt's outcome ("succeeded",
	// "failed", or "dropped" for an endpoint turned off), and for a
	// delivery's first attempt how long after the delivery was created
	// (its event's commit) the attempt ended: the operator's metrics
	// (ops.Metrics.Delivered). nil tells no one.
	Observe func(outcome string, first bool, lag time.Duration)
	// Interval is how often the loop looks for due work in any case. One
	// second keeps the 5-second first retry on time, and the dev clock's
	// Advance fires the ticker, so retries due after a jump go out at once.
	Interval time.Duration
	// Poll is how often the loop asks whether new events are waiting to
	// be fanned out: one cheap indexed read, so that an event goes out
	// within a few milliseconds of its commit without a full run each time.
	Poll time.Duration
	// Lease is how long a claimed delivery is held (payd.DeliveryLease).
	Lease time.Duration
	// Page is how many events one fan-out transaction handles.
	Page int
	// Workers bounds the deliveries held at once: attempts in flight and
	// results waiting to be saved, so that attempts never outrun saving.
	// Each attempt has its own goroutine.
	Workers int
	// PerEndpoint bounds one endpoint's attempts in flight, softly: a
	// claim passes over an endpoint that has its share, and one claim
	// takes at most this many rows. An endpoint whose last attempt ended
	// within a second is quick and its share is 4 times this (quickFactor);
	// one whose last attempt took 5 s or more is slow and its share is 4
	// (slowShare), strictly: claimed rows past it are handed back due (start).
	// A slow or dead endpoint thus holds a few slots and connections,
	// never the rest.
	PerEndpoint int
	// Wall is the real time, which alone stamps webhook-timestamp: a
	// receiver checks it against its own clock (spec 6.2, five minutes),
	// so it must not follow the service clock, which POST /devnet/clock
	// moves ahead. Nil means clock.Real; only tests set it.
	Wall clock.Clock
}

func (o DelivererOptions) withDefaults() DelivererOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = payd.DeliveryLease
	}
	if o.Page <= 0 {
		o.Page = 200
	}
	if o.Workers <= 0 {
		o.Workers = 2048
	}
	if o.PerEndpoint <= 0 {
		o.PerEndpoint = 64
	}
	if o.Wall == nil {
		o.Wall = clock.Real{}
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
	wg     sync.WaitGroup // attempts

	slots  slots
	saver  saver
	runner loop.Runner
}

// NewDeliverer returns the delivery loop over st, sending with s.
func NewDeliverer(st payd.Store, s *Sender, clk clock.Clock, log *slog.Logger, o DelivererOptions) *Deliverer {
	o = o.withDefaults()
	d := &Deliverer{store: st, sender: s, clock: clk, log: log, opts: o,
		slots: newSlots(o.Workers, o.PerEndpoint)}
	d.saver = newSaver(d)
	return d
}

var _ payd.DeliverySender = (*Deliverer)(nil)

// Start runs the loop in the background until Stop or ctx ends. Unlike
// RunOnce, a background run does not wait for its attempts: each ended
// attempt frees its slot and wakes the loop, which claims more while due
// work may be left; results are saved in batches by a second goroutine.
func (d *Deliverer) Start(ctx context.Context) { d.runner.Start(ctx, d.background) }

// background is the started loop: it ends once ctx has ended, the attempts
// in flight have ended and their results are saved.
func (d *Deliverer) background(ctx context.Context) {
	stop, saved := make(chan struct{}), make(chan struct{})
	go func() { defer close(saved); d.saver.loop(ctx, stop) }()
	d.loop(ctx)
	d.wg.Wait()
	close(stop)
	<-saved
}

// loop runs until ctx ends, in two goroutines so that a slow fan-out
// transaction never holds up claims, nor a claim the fan-out: one fans
// out whenever the poll finds new events, the other claims whenever a
// slot frees up for work that may be waiting; both run on every tick.
func (d *Deliverer) loop(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.fanOutLoop(ctx) })
	d.claimLoop(ctx)
	wg.Wait()
}

// fanOutLoop fans out on every tick and whenever the poll finds an
// undispatched event.
func (d *Deliverer) fanOutLoop(ctx context.Context) {
	poll := d.clock.NewTicker(d.opts.Poll)
	defer poll.Stop()
	repeat(ctx, d, d.fanOut, poll.C(), func(ctx context.Context) (bool, error) {
		evs, err := d.store.UndispatchedEvents(ctx, 1)
		return len(evs) > 0, err
	})
}

// claimLoop claims on every tick (retries fall due) and whenever a slot
// frees up while work may be waiting for it.
func (d *Deliverer) claimLoop(ctx context.Context) {
	repeat(ctx, d, d.claim, d.slots.freed, func(context.Context) (bool, error) {
		return d.slots.more.Load(), nil
	})
}

// repeat runs run at once, then on every tick of the loop's Interval and
// whenever nudge fires and due says there is work, until ctx ends; a
// failed run is logged and the next one comes as usual.
func repeat[T any](ctx context.Context, d *Deliverer, run func(context.Context) error, nudge <-chan T,
	due func(context.Context) (bool, error)) {
	tick := d.clock.NewTicker(d.opts.Interval)
	defer tick.Stop()
	for err := run(ctx); ; {
		d.logRun(ctx, err)
		err = nil
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
			err = run(ctx)
		case <-nudge:
			var ok bool
			if ok, err = due(ctx); err == nil && ok {
				err = run(ctx)
			}
		}
	}
}

// logRun logs a failed run, unless the loop is stopping.
func (d *Deliverer) logRun(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		d.log.Error("webhook delivery run failed", slog.Any("error", err))
	}
}

// Stop ends the loop, waits for attempts in flight and saves the results
// of those that ended. An attempt cut short is not recorded: its lease
// lapses and it is made again.
func (d *Deliverer) Stop() { d.runner.Stop() }

// RunOnce fans out new events, attempts every due delivery, waits for the
// attempts to end and saves them. Tests call it directly.
func (d *Deliverer) RunOnce(ctx context.Context) error {
	err := d.run(ctx)
	d.wg.Wait()
	d.saver.flush(context.WithoutCancel(ctx))
	d.saver.wg.Wait()
	return err
}

// run fans out, then claims whatever is due.
func (d *Deliverer) run(ctx context.Context) error {
	if err := d.fanOut(ctx); err != nil {
		return err
	}
	return d.claim(ctx)
}

// claim leases due deliveries while there are free slots and starts an
// attempt for each. Each claim takes at most PerEndpoint rows and passes
// over the endpoints that have their share of attempts in flight; the
// rows it passes over still cost a look each, so it does not claim again
// just to look past an endpoint it has just filled: when a full claim went
// to one endpoint alone, the next claim waits for that endpoint to get a
// slot back (slots.done), for rows a fan-out left, or for the tick.
func (d *Deliverer) claim(ctx context.Context) error {
	d.slots.more.Store(false)
	for {
		n, skip := d.slots.room()
		if n == 0 {
			return nil // slots.done sets more when a slot frees up
		}
		now := d.clock.Now()
		ds, err := d.store.ClaimDueDeliveries(ctx, now, now.Add(d.opts.Lease), n, skip...)
		if err != nil {
			return err
		}
		d.start(ctx, ds)
		if len(ds) < n || d.slots.filled(ds) {
			return nil
		}
	}
}

// start reads each claimed delivery's endpoint, once per endpoint, and
// starts an attempt of each in its own goroutine. Rows a claim took past
// a slow endpoint's share are handed back at once, due as they were: the
// claims pass over that endpoint until it has room again. (Left to their
// lease they waited a whole minute, even for an endpoint that was slow
// only once, on a starved machine.)
func (d *Deliverer) start(ctx context.Context, ds []*payd.WebhookDelivery) {
	eps := map[string]*payd.WebhookEndpoint{}
	var back []*payd.WebhookDelivery
	for _, dl := range ds {
		if !d.slots.takeClaimed(dl.WebhookID) {
			back = append(back, dl)
			continue
		}
		e, ok := eps[dl.WebhookID]
		if !ok {
			var err error
			if e, err = d.store.WebhookEndpointByID(ctx, dl.BusinessID, dl.WebhookID); err != nil {
				d.log.Warn("webhook delivery: reading the endpoint", slog.String("delivery", dl.ID), slog.Any("error", err))
			}
			eps[dl.WebhookID] = e
		}
		d.attempt(ctx, e, dl)
	}
	d.handBack(ctx, back)
}

// handBack frees the leases of claimed rows that were not attempted,
// leaving them due now. A failure only leaves them to their lease.
func (d *Deliverer) handBack(ctx context.Context, ds []*payd.WebhookDelivery) {
	if len(ds) == 0 {
		return
	}
	now := d.clock.Now()
	for _, dl := range ds {
		dl.LeaseUntil, dl.NextAttemptAt, dl.UpdatedAt = nil, &now, now
	}
	if _, err := d.store.SaveDeliveries(ctx, ds); err != nil {
		d.log.Warn("webhook delivery: handing back claimed deliveries", slog.Int("deliveries", len(ds)), slog.Any("error", err))
	}
}

// attempt starts the attempt of dl to e in its own goroutine; its slot
// is taken.
func (d *Deliverer) attempt(ctx context.Context, e *payd.WebhookEndpoint, dl *payd.WebhookDelivery) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.deliver(ctx, e, dl)
	}()
}

// fanOut turns undispatched events into deliveries, a page per
// transaction, until none is left. A new delivery whose endpoint has a
// free slot is stored already leased and attempted as soon as the page
// commits, with the endpoint the transaction read: no claim stands
// between an event's commit and its first attempt. The others are stored
// due, and a claim picks them up when slots free up.
func (d *Deliverer) fanOut(ctx context.Context) error {
	for {
		var p fanPage
		err := d.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			p.release(&d.slots) // a transaction function may run again
			p = fanPage{}
			return d.fanOutPage(ctx, q, &p)
		})
		if err != nil {
			p.release(&d.slots)
			return err
		}
		for _, h := range p.handoff {
			d.attempt(ctx, h.e, h.dl)
		}
		if p.left {
			d.slots.more.Store(true)
			d.slots.wake() // the claiming side looks for room
		}
		if p.events < d.opts.Page {
			return nil
		}
	}
}

// fanPage is what one fan-out transaction did.
type fanPage struct {
	events  int
	handoff []handoff // leased at creation, to attempt once committed
	left    bool      // deliveries stored due for want of any free slot
}

// handoff is a delivery leased at its creation, with its endpoint.
type handoff struct {
	e  *payd.WebhookEndpoint
	dl *payd.WebhookDelivery
}

// release gives back the slots of a page that did not commit.
func (p *fanPage) release(s *slots) {
	for _, h := range p.handoff {
		s.untake(h.dl.WebhookID)
	}
}

// fanOutPage marks up to Page events dispatched and stores their
// deliveries, in the caller's transaction: one statement takes the events,
// one reads the endpoints of all their businesses, one stores the
// deliveries.
func (d *Deliverer) fanOutPage(ctx context.Context, q payd.Queries, p *fanPage) error {
	now := d.clock.Now()
	evs, err := q.DispatchEvents(ctx, d.opts.Page, now)
	if err != nil || len(evs) == 0 {
		return err
	}
	endpoints, err := endpointsOf(ctx, q, evs)
	if err != nil {
		return err
	}
	until := now.Add(d.opts.Lease)
	var all []*payd.WebhookDelivery
	for _, ev := range evs {
		eps := receivers(endpoints[ev.BusinessID], ev.Type)
		ds, err := payd.NewDeliveries(ev, eps, now)
		if err != nil {
			return err
		}
		for _, dl := range ds {
			if ok, full := d.slots.tryTake(dl.WebhookID); !ok {
				// Rows of a busy endpoint wait for it to free a slot;
				// rows left for want of any slot need a claim then.
				p.left = p.left || full
				continue
			}
			// Leased like a claim does it: due again when the lease ends.
			dl.LeaseUntil, dl.NextAttemptAt = &until, &until
			p.handoff = append(p.handoff, handoff{endpointOf(eps, dl.WebhookID), dl})
		}
		all = append(all, ds...)
	}
	p.events = len(evs)
	return q.CreateDeliveries(ctx, all)
}

// endpointsOf reads the enabled endpoints of the events' businesses, by
// business, oldest first.
func endpointsOf(ctx context.Context, q payd.Queries, evs []*payd.Event) (map[string][]*payd.WebhookEndpoint, error) {
	byBiz := map[string][]*payd.WebhookEndpoint{}
	var ids []string
	for _, ev := range evs {
		if _, ok := byBiz[ev.BusinessID]; !ok {
			byBiz[ev.BusinessID] = nil
			ids = append(ids, ev.BusinessID)
		}
	}
	eps, err := q.EnabledEndpoints(ctx, ids)
	for _, e := range eps {
		byBiz[e.BusinessID] = append(byBiz[e.BusinessID], e)
	}
	return byBiz, err
}

// receivers are the endpoints of eps that receive events of type typ.
func receivers(eps []*payd.WebhookEndpoint, typ string) []*payd.WebhookEndpoint {
	var out []*payd.WebhookEndpoint
	for _, e := range eps {
		if e.Receives(typ) {
			out = append(out, e)
		}
	}
	return out
}

// endpointOf returns the endpoint of eps whose id is id.
func endpointOf(eps []*payd.WebhookEndpoint, id string) *payd.WebhookEndpoint {
	for _, e := range eps {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// deliver makes one automatic attempt of a claimed delivery to e (nil
// when it could not be read) and hands the outcome to the saver. An
// endpoint turned off drops it.
func (d *Deliverer) deliver(ctx context.Context, e *payd.WebhookEndpoint, dl *payd.WebhookDelivery) {
	took := time.Duration(-1) // no attempt: says nothing of the endpoint's speed
	defer func() { d.slots.done(dl.WebhookID, took) }()
	switch {
	case e == nil:
		d.slots.release(1) // its lease lapses and it is tried again
		return
	case !e.Enabled:
		dl.Drop(payd.DropEndpointDisabled, d.clock.Now())
		d.observe("dropped", false, 0)
	default:
		started := d.clock.Now()
		a, headers, ended := d.Attempt(ctx, e, dl, payd.TriggerAutomatic)
		took = ended.Sub(started)
		if ctx.Err() != nil {
			d.slots.release(1) // shutting down: the lease lapses and the attempt is made again
			return
		}
		dl.Record(a, headers, ended, d.Retry)
		outcome := "succeeded"
		if a.Error != "" {
			outcome = "failed"
		}
		d.observe(outcome, len(dl.Attempts) == 1, ended.Sub(dl.CreatedAt))
	}
	d.saver.add(dl)
}

// observe tells Options.Observe of an attempt, if anyone listens.
func (d *Deliverer) observe(outcome string, first bool, lag time.Duration) {
	if d.opts.Observe != nil {
		d.opts.Observe(outcome, first, lag)
	}
}

// Attempt posts dl's payload to e now, signed with the secrets e signs
// with at this moment and a fresh webhook-timestamp; webhook-id is the
// event id, the same on every attempt. See payd.DeliverySender. The
// timestamp is the real time of the attempt (DelivererOptions.Wall);
// everything payd itself schedules or records (the attempt's time, the
// secrets' overlap, retries) stays on the service clock.
func (d *Deliverer) Attempt(ctx context.Context, e *payd.WebhookEndpoint, dl *payd.WebhookDelivery, trigger string) (payd.DeliveryAttempt, map[string]string, time.Time) {
	now := d.clock.Now()
	a := payd.DeliveryAttempt{At: now, Trigger: trigger}
	h, err := Headers(dl.EventID, d.opts.Wall.Now(), dl.Payload, e.Secrets(now))
	if err != nil {
		a.Error = payd.AttemptInternalError
		d.log.Error("webhook attempt not signed", attemptAttrs(e, dl, trigger), slog.Any("error", err))
		return a, nil, now
	}
	res := d.sender.Post(ctx, e.URL, h, dl.Payload)
	a.ResponseStatus, a.DurationMS = res.Status, res.Duration.Milliseconds()
	switch {
	case res.Err != nil:
		a.Error = Reason(res.Err)
		d.log.Info("webhook attempt failed", attemptAttrs(e, dl, trigger),
			slog.String("reason", a.Error), slog.Any("error", res.Err))
	case !res.OK():
		a.Error = payd.AttemptHTTPStatus(res.Status)
	}
	return a, flatHeaders(h), d.clock.Now()
}

// attemptAttrs names an attempt in the log, so that an operator can find
// the detail behind what the delivery log shows.
func attemptAttrs(e *payd.WebhookEndpoint, dl *payd.WebhookDelivery, trigger string) slog.Attr {
	return slog.Group("attempt", slog.String("delivery", dl.ID), slog.String("endpoint", e.ID),
		slog.String("business", dl.BusinessID), slog.String("event", dl.EventID), slog.String("trigger", trigger))
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
