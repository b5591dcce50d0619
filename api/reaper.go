package api

import (
	"context"
	"log/slog"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
)

// ReaperStore is what the reaper deletes from.
type ReaperStore interface {
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int, error)
	DeleteExpiredRateCounters(ctx context.Context, now time.Time) (int, error)
	DeleteExpiredAccountRows(ctx context.Context, now time.Time) (int, error)
	DeleteExpiredWebAuthnChallenges(ctx context.Context, now time.Time) (int, error)
	DeleteExpiredTwoFactorChallenges(ctx context.Context, now time.Time) (int, error)
}

// Reaper deletes idempotency records past their 24 hours, rate-limit
// windows that have ended, ended sessions, sign-ups and failure counts,
// passkey ceremonies never finished and two-step sign-ins that timed out.
// Deleting by expiry is idempotent, so any number of replicas may run it.
type Reaper struct {
	store    ReaperStore
	clock    clock.Clock
	log      *slog.Logger
	interval time.Duration
	runner   loop.Runner
}

// NewReaper returns a reaper that runs every interval.
func NewReaper(st ReaperStore, clk clock.Clock, log *slog.Logger, interval time.Duration) *Reaper {
	return &Reaper{store: st, clock: clk, log: log, interval: interval}
}

// Start runs the loop in the background until Stop or ctx ends: a pass
// every interval, the first one interval after Start.
func (rp *Reaper) Start(ctx context.Context) {
	rp.runner.Start(ctx, func(ctx context.Context) {
		for clock.Sleep(rp.clock, rp.interval, ctx.Done()) {
			if err := rp.RunOnce(ctx); err != nil {
				rp.log.Error("reaper", slog.Any("error", err))
			}
		}
	})
}

// Stop ends the loop and waits for a pass in progress to finish.
func (rp *Reaper) Stop() { rp.runner.Stop() }

// RunOnce deletes what has expired by now.
func (rp *Reaper) RunOnce(ctx context.Context) (err error) {
	defer payd.Wrap(&err, "api.Reaper.RunOnce")
	now := rp.clock.Now()
	n, err := rp.store.DeleteExpiredIdempotencyKeys(ctx, now)
	if err != nil {
		return err
	}
	m, err := rp.store.DeleteExpiredRateCounters(ctx, now)
	if err != nil {
		return err
	}
	a, err := rp.store.DeleteExpiredAccountRows(ctx, now)
	if err != nil {
		return err
	}
	w, err := rp.store.DeleteExpiredWebAuthnChallenges(ctx, now)
	if err != nil {
		return err
	}
	c, err := rp.store.DeleteExpiredTwoFactorChallenges(ctx, now)
	if err != nil {
		return err
	}
	if n+m+a+w+c > 0 {
		rp.log.Debug("reaped", slog.Int("idempotency_keys", n), slog.Int("rate_counters", m), slog.Int("account_rows", a),
			slog.Int("webauthn_challenges", w), slog.Int("two_factor_challenges", c))
	}
	return nil
}
