package rate

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"payd"
)

// Durable is implemented by a source whose last good report may stand in
// for it while it fails. The Refresher checks for it once, in
// NewRefresher; a source without it is used only in the refreshes it
// answers, as if its Validity were zero.
type Durable interface {
	// Validity is how long after a successful fetch, on the service clock,
	// the report may still be used when later fetches fail. Zero or less
	// means never.
	Validity() time.Duration
}

// CoinValidity is how long a coin source's report stands in for it. It is
// short because a price must not be quoted from a market that has moved
// on: it covers a failed refresh or two, not an outage.
const CoinValidity = 2 * time.Minute

// forever is the Validity of a source whose report never ages.
const forever = time.Duration(math.MaxInt64)

// CachedSuffix marks, in ExchangeRates.Sources, a source whose report was
// reused from an earlier refresh because the source failed this time:
// "ecb (cached)".
const CachedSuffix = " (cached)"

// tracked is one of the Refresher's sources with the last good report it
// gave. The report is kept in memory only: a restart fetches afresh.
type tracked struct {
	src      payd.RateSource
	validity time.Duration

	// last is the newest good answer, fetched at fetchedAt with values as
	// of asOf; nil when there is none or it expired. Only the refresh in
	// progress touches them (Refresher.runMu).
	last      *payd.Quotes
	fetchedAt time.Time
	asOf      time.Time
}

// track wraps sources with their validity.
func track(sources []payd.RateSource) []*tracked {
	out := make([]*tracked, len(sources))
	for i, s := range sources {
		t := &tracked{src: s}
		if d, ok := s.(Durable); ok {
			t.validity = max(d.Validity(), 0)
		}
		out[i] = t
	}
	return out
}

// result is one source's answer in one refresh, and when it came.
type result struct {
	q   payd.Quotes
	at  time.Time
	err error
	// dropped are the fee coins dropped from q as absurd.
	dropped []payd.DroppedValue
}

// asOf is when res's values are from: the source's own date, or the fetch.
func (res result) asOf() time.Time {
	if res.q.AsOf.IsZero() {
		return res.at
	}
	return res.q.AsOf
}

// report returns what t contributes to the refresh that got res: the
// fresh answer, which then becomes the one kept; or, when the source
// failed, the kept one while its values are younger than the source's
// validity (its freshness limit). A fresh answer whose own date is already
// past that limit is refused like a failure. What is not used comes back
// with Err set, for the snapshot's Detail. Every use of a kept report is
// logged, and so is its expiry, once, after which the source is simply
// skipped until it answers again.
func (r *Refresher) report(t *tracked, res result, now time.Time) Report {
	name := t.src.Name()
	if res.err == nil {
		asOf := res.asOf()
		if age := now.Sub(asOf); !res.q.AsOf.IsZero() && t.validity > 0 && age >= t.validity {
			r.log.Warn("rate: source's values too old, source skipped", slog.String("source", name),
				slog.Time("as_of", asOf), slog.Duration("age", age), slog.Duration("validity", t.validity))
			return Report{Source: name, Err: categorized(payd.SourceErrStale, fmt.Errorf("rate: %s: values of %s are %s old, limit %s",
				name, asOf.Format(time.RFC3339), age.Round(time.Minute), t.validity))}
		}
		if t.validity > 0 {
			t.last, t.fetchedAt, t.asOf = &res.q, res.at, asOf
		}
		return Report{Source: name, Quotes: res.q, AsOf: asOf, Validity: t.validity, Dropped: res.dropped}
	}
	if t.last == nil {
		r.log.Warn("rate: source skipped", slog.String("source", name), slog.Any("error", res.err))
		return Report{Source: name, Err: res.err}
	}
	age := now.Sub(t.asOf)
	if age >= t.validity {
		r.log.Warn("rate: cached report expired, source skipped", slog.String("source", name),
			slog.Any("error", res.err), slog.Time("fetched_at", t.fetchedAt), slog.Time("as_of", t.asOf),
			slog.Duration("age", age), slog.Duration("validity", t.validity))
		t.last = nil
		return Report{Source: name, Err: res.err}
	}
	attrs := []any{slog.String("source", name), slog.Any("error", res.err),
		slog.Time("fetched_at", t.fetchedAt), slog.Time("as_of", t.asOf), slog.Duration("age", age)}
	if t.validity != forever {
		attrs = append(attrs, slog.Time("expires_at", t.asOf.Add(t.validity)))
	}
	r.log.Warn("rate: source failed, using its cached report", attrs...)
	return Report{Source: name, Quotes: *t.last, Cached: true, AsOf: t.asOf, Validity: t.validity}
}
