package rate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"payd"
	"payd/clock"
	"payd/loop"
)

// Refresher defaults and fixed policy; docs/rates.md explains each.
const (
	// DefaultInterval is how often sources are asked.
	DefaultInterval = time.Minute
	// DefaultMaxAge is the oldest snapshot a checkout may quote from.
	DefaultMaxAge = 10 * time.Minute
	// FetchTimeout bounds each source's answer, so a hanging service costs
	// one refresh at most this long and never holds the others.
	FetchTimeout = 10 * time.Second
	// History is how long snapshots are kept; the newest is always kept.
	History = 30 * 24 * time.Hour
)

// PrefixExchangeRates starts every snapshot id.
const PrefixExchangeRates = "xr_"

// Refresher asks every source on a loop, combines what answered into a
// snapshot, stores it with its history and serves the newest one. It is
// the api package's RateProvider. Every replica may run one: snapshots are
// insert-only and each has its own id.
//
// It keeps each source's last good report in memory. When a source that
// implements Durable fails, that report is used in its place while it is
// younger than the source's Validity, so a reference rate published once a
// day does not stop checkouts when one fetch of it fails.
type Refresher struct {
	sources  []*tracked
	store    payd.RateStore
	clock    clock.Clock
	log      *slog.Logger
	interval time.Duration
	maxAge   time.Duration

	mu     sync.Mutex
	latest *payd.ExchangeRates

	// runMu makes refreshes one at a time, so each source's kept report
	// has a single writer.
	runMu sync.Mutex

	runner loop.Runner
}

// NewRefresher returns a refresher over sources, asking each whether it is
// Durable. A zero interval or maxAge takes DefaultInterval or
// DefaultMaxAge.
func NewRefresher(sources []payd.RateSource, store payd.RateStore, clk clock.Clock, log *slog.Logger,
	interval, maxAge time.Duration) *Refresher {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	return &Refresher{sources: track(sources), store: store, clock: clk, log: log, interval: interval, maxAge: maxAge}
}

// Start loads the newest stored snapshot, so a restarted server quotes at
// once, and then refreshes every interval in the background until ctx ends
// or Stop. When the store holds no snapshot at all (a new database), the
// first refresh runs before Start returns (at most FetchTimeout), because
// until it succeeds every checkout would fail anyway.
func (r *Refresher) Start(ctx context.Context) {
	ready := make(chan struct{})
	if r.runner.Start(ctx, func(ctx context.Context) { r.background(ctx, ready) }) {
		<-ready
	}
}

// Stop ends the loop and waits for a refresh in progress to wind down;
// pending fetches are abandoned at once, so that is at most one store write.
func (r *Refresher) Stop() { r.runner.Stop() }

// background loads the stored snapshot and, when there is none, refreshes
// before closing ready (Start waits for it); then it loops.
func (r *Refresher) background(ctx context.Context, ready chan<- struct{}) {
	loaded := r.load(ctx)
	if !loaded {
		_ = r.RunOnce(ctx)
	}
	close(ready)
	r.loop(ctx, loaded)
}

// loop refreshes at once when Start did not, then on every tick.
func (r *Refresher) loop(ctx context.Context, refreshNow bool) {
	t := r.clock.NewTicker(r.interval)
	defer t.Stop()
	if refreshNow {
		_ = r.RunOnce(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			_ = r.RunOnce(ctx)
		}
	}
}

// load takes the newest stored snapshot into memory and reports whether
// there was one.
func (r *Refresher) load(ctx context.Context) bool {
	x, err := r.store.LatestExchangeRates(ctx)
	if err != nil {
		if !payd.IsNotFound(err) {
			r.log.Error("rate: loading stored exchange rates", slog.Any("error", err))
		}
		return false
	}
	r.keep(x)
	return true
}

// keep makes x the snapshot served unless a newer one is already held.
func (r *Refresher) keep(x *payd.ExchangeRates) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latest == nil || !x.CreatedAt.Before(r.latest.CreatedAt) {
		r.latest = x
	}
}

// Latest returns the newest snapshot known, from memory or else the store,
// stale or not: GET /exchange-rates shows it with its created_at. It fails
// with upstream_unavailable when no snapshot was ever made. The snapshot is
// shared; callers must not change it.
func (r *Refresher) Latest(ctx context.Context) (*payd.ExchangeRates, error) {
	r.mu.Lock()
	x := r.latest
	r.mu.Unlock()
	if x != nil {
		return x, nil
	}
	x, err := r.store.LatestExchangeRates(ctx)
	if payd.IsNotFound(err) {
		return nil, r.unavailable("no exchange rates yet")
	}
	if err != nil {
		return nil, err
	}
	r.keep(x)
	return x, nil
}

// ByID returns one snapshot of the history: the one in memory when it has
// the id, else the store's (not_found once pruned).
func (r *Refresher) ByID(ctx context.Context, id string) (*payd.ExchangeRates, error) {
	r.mu.Lock()
	x := r.latest
	r.mu.Unlock()
	if x != nil && x.ID == id {
		return x, nil
	}
	return r.store.ExchangeRatesByID(ctx, id)
}

// Fresh returns the newest snapshot only if it is younger than the max age
// by the service clock, else upstream_unavailable: a checkout must never
// lock an amount at a price the market has long left.
func (r *Refresher) Fresh(ctx context.Context) (*payd.ExchangeRates, error) {
	x, err := r.Latest(ctx)
	if err != nil {
		return nil, err
	}
	if age := r.clock.Now().Sub(x.CreatedAt); age >= r.maxAge {
		return nil, r.unavailable(fmt.Sprintf("exchange rates are %s old", age.Round(time.Second)))
	}
	return x, nil
}

// unavailable is the error of Latest and Fresh; a retry after one refresh
// interval may find new rates.
func (r *Refresher) unavailable(msg string) *payd.Error {
	return &payd.Error{Code: payd.ErrUpstreamUnavailable, Message: msg, RetryAfter: r.interval}
}

// RunOnce asks every source at once, combines the answers, stores the
// snapshot and prunes old history. A source that fails is logged and
// replaced by its kept report while that is valid, or left out; a value
// far from the others is dropped and logged (Combine); the
// snapshot is kept in memory only once stored, so every id served can be
// found in the store later. A refresh cut short by ctx (shutdown) makes
// nothing and logs nothing: every failure in it would be ctx's.
func (r *Refresher) RunOnce(ctx context.Context) (err error) {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	defer func() {
		if err != nil && ctx.Err() == nil {
			r.log.Error("rate: refresh", slog.Any("error", err))
		}
	}()
	results := r.fetchAll(ctx)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	now := r.clock.Now()
	reports := make([]Report, len(r.sources))
	for i, t := range r.sources {
		reports[i] = r.report(t, results[i], now)
	}
	r.mu.Lock()
	prev := r.latest
	r.mu.Unlock()
	x, err := Combine(reports, prev, now)
	if err != nil {
		return err
	}
	r.logOutliers(x)
	if m := Missing(x); len(m) > 0 {
		r.log.Error("rate: no agreed value, left out of the snapshot: prices needing it are refused",
			slog.Any("codes", m))
	}
	x.ID = payd.NewID(PrefixExchangeRates)
	x.CreatedAt = now
	if err := r.store.CreateExchangeRates(ctx, x); err != nil {
		return fmt.Errorf("rate: storing %s: %w", x.ID, err)
	}
	r.keep(x)
	if _, err := r.store.DeleteExchangeRatesBefore(ctx, x.CreatedAt.Add(-History)); err != nil {
		return fmt.Errorf("rate: pruning history: %w", err)
	}
	return nil
}

// logOutliers logs every value of x's sources dropped for lying far from
// the others (or, a fee coin, for being absurd), with the values, so an
// operator sees a source going wrong before it matters; and every value
// carried from the previous snapshot.
func (r *Refresher) logOutliers(x *payd.ExchangeRates) {
	for code, v := range x.Detail.Values {
		if v.Note == payd.ValueCarried {
			r.log.Warn("rate: no agreed value, previous one carried", slog.String("code", code),
				slog.Time("as_of", v.AsOf), slog.Time("until", v.Until))
		}
	}
	for _, s := range x.Detail.Sources {
		for _, d := range s.Dropped {
			if d.Reason == payd.DropImplausible {
				r.log.Warn("rate: fee coin price absurd, dropped", slog.String("source", s.Name),
					slog.String("code", d.Code), slog.String("value", d.Value.String()))
				continue
			}
			r.log.Warn("rate: source far from the others, dropped", slog.String("source", s.Name),
				slog.String("code", d.Code), slog.String("value", d.Value.String()),
				slog.String("median", d.Median.String()), slog.Int64("deviation_bps", d.DeviationBps))
		}
	}
}

// fetchAll asks every source concurrently and returns their answers in
// source order, so Sources reads the same on every refresh. Each answer is
// checked, whoever wrote the source, and timed on the service clock.
func (r *Refresher) fetchAll(ctx context.Context) []result {
	results := make([]result, len(r.sources))
	var wg sync.WaitGroup
	for i, t := range r.sources {
		wg.Go(func() {
			q, err := r.fetch(ctx, t.src)
			if err == nil {
				err = check(t.src.Name(), q)
			}
			var dropped []payd.DroppedValue
			if err == nil {
				q, dropped = dropImplausible(q)
			}
			results[i] = result{q: q, at: r.clock.Now(), err: err, dropped: dropped}
		})
	}
	wg.Wait()
	return results
}

// errTimeout is the cause given to a source cancelled for being slow.
var errTimeout = errors.New("no answer in time")

// fetch asks one source, giving up after FetchTimeout on the service clock.
// The answer is awaited in a select rather than trusted to honour ctx, so
// a source that ignores cancellation still cannot hold up the refresh.
func (r *Refresher) fetch(ctx context.Context, s payd.RateSource) (payd.Quotes, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := r.clock.NewTimer(FetchTimeout)
	defer timer.Stop()
	type answer struct {
		q   payd.Quotes
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		q, err := s.Fetch(ctx)
		ch <- answer{q, err}
	}()
	select {
	case a := <-ch:
		return a.q, a.err
	case <-timer.C():
		cancel(errTimeout)
		return payd.Quotes{}, categorized(payd.SourceErrTimeout, fmt.Errorf("rate: %s: %w within %s", s.Name(), errTimeout, FetchTimeout))
	case <-ctx.Done():
		return payd.Quotes{}, context.Cause(ctx)
	}
}
