package mail

import (
	"context"
	"log/slog"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
)

// OutboxOptions tune the outbox loop; zero values take the defaults.
type OutboxOptions struct {
	// Interval is how often the loop looks for due emails in any case. One
	// second keeps the 10-second first retry on time; the dev clock's
	// Advance fires the ticker, so retries due after a jump go out at once.
	// Wake sends a new email sooner.
	Interval time.Duration
	// Lease is how long a claimed email is held (payd.EmailLease).
	Lease time.Duration
	// Batch is how many emails one claim takes and one connection sends.
	Batch int
}

func (o OutboxOptions) withDefaults() OutboxOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = payd.EmailLease
	}
	if o.Batch <= 0 {
		o.Batch = 20
	}
	return o
}

// Outbox is the email loop: it claims due emails with a lease, sends them
// and records each outcome under the version it claimed, retrying on the
// schedule of NextAttempt. Any number of replicas run it side by side: a
// claim gives each email to one of them, and an email whose holder
// crashed is claimed again once its lease lapses. Without a sender
// (development, --dev) it keeps the emails instead: each is marked kept,
// its bodies intact for GET /devnet/emails, and nothing leaves the
// machine.
type Outbox struct {
	store  payd.Store
	sender Sender // nil: keep
	clock  clock.Clock
	log    *slog.Logger
	opts   OutboxOptions
	wake   chan struct{}
	runner loop.Runner
}

// NewOutbox returns the outbox loop over st, sending with s, or keeping
// every email when s is nil.
func NewOutbox(st payd.Store, s Sender, clk clock.Clock, log *slog.Logger, o OutboxOptions) *Outbox {
	return &Outbox{store: st, sender: s, clock: clk, log: log.With(slog.String("loop", "outbox")),
		opts: o.withDefaults(), wake: make(chan struct{}, 1)}
}

var _ loop.Service = (*Outbox)(nil)

// Start runs the loop in the background until Stop or ctx ends: a pass at
// once, then on every tick and whenever Wake is called.
func (o *Outbox) Start(ctx context.Context) {
	o.runner.Start(ctx, func(ctx context.Context) {
		tick := o.clock.NewTicker(o.opts.Interval)
		defer tick.Stop()
		for {
			if err := o.RunOnce(ctx); err != nil && ctx.Err() == nil {
				o.log.Error("email outbox run failed", slog.Any("error", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C():
			case <-o.wake:
			}
		}
	})
}

// Stop ends the loop and waits for a pass in progress, whose sends are
// finished and recorded.
func (o *Outbox) Stop() { o.runner.Stop() }

// Wake asks the running loop for a pass now, without waiting for the
// tick: call it after committing an email, so the person waiting for a
// code gets it at once. It never blocks.
func (o *Outbox) Wake() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// RunOnce sends (or keeps) every email due at the clock's time, a batch
// per claim, until a claim comes back short. Tests call it directly.
func (o *Outbox) RunOnce(ctx context.Context) error {
	for {
		now := o.clock.Now()
		es, err := o.store.ClaimDueEmails(ctx, now, now.Add(o.opts.Lease), o.opts.Batch)
		if err != nil || len(es) == 0 {
			return err
		}
		if err := o.handle(ctx, es); err != nil {
			return err
		}
		if len(es) < o.opts.Batch {
			return nil
		}
	}
}

// handle sends or keeps the claimed emails and saves each outcome. The
// saves go ahead when ctx has ended meanwhile (shutting down): the server
// has the emails it accepted, and recording that spares a resend. An
// email that failed because ctx ended is handed back due, its attempt
// not counted.
func (o *Outbox) handle(ctx context.Context, es []*payd.Email) error {
	if o.sender == nil {
		now := o.clock.Now()
		for _, e := range es {
			e.Kept(now)
		}
		return o.save(context.WithoutCancel(ctx), es)
	}
	errs := o.sender.Send(ctx, es)
	ended := o.clock.Now()
	for i, e := range es {
		switch {
		case errs[i] == nil:
			e.Sent(ended)
			o.log.Info("email sent", emailAttrs(e))
		case ctx.Err() != nil:
			e.Release(ended)
		default:
			e.Failed(errs[i].Error(), ended, NextAttempt)
			o.log.Warn("email not sent", emailAttrs(e), slog.String("status", string(e.Status)),
				slog.String("error", e.LastError))
		}
	}
	return o.save(context.WithoutCancel(ctx), es)
}

// save records every outcome of a batch in one transaction (one commit,
// not one per email). An email whose lease was lost meanwhile (a pass
// slower than the lease) is left to its new holder. The transaction
// function may run again, so each run starts from the claimed versions.
func (o *Outbox) save(ctx context.Context, es []*payd.Email) error {
	versions := make([]int, len(es))
	for i, e := range es {
		versions[i] = e.Version
	}
	var lost []*payd.Email
	err := o.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		lost = lost[:0]
		for i, e := range es {
			e.Version = versions[i]
		}
		for _, e := range es {
			switch err := q.SaveEmail(ctx, e); payd.ErrorCode(err) {
			case payd.ErrConflict, payd.ErrNotFound:
				lost = append(lost, e)
			default:
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		for i, e := range es {
			e.Version = versions[i]
		}
		return err
	}
	for _, e := range lost {
		o.log.Warn("email outcome not saved: its lease was taken over", emailAttrs(e))
	}
	return nil
}

// emailAttrs name an email in the log: its id, kind and attempt, never
// the address or the bodies, which carry codes.
func emailAttrs(e *payd.Email) slog.Attr {
	return slog.Group("email", slog.String("id", e.ID), slog.String("kind", e.Kind), slog.Int("attempts", e.Attempts))
}
