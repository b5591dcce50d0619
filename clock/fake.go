package clock

import "time"

// Fake is a frozen clock for tests: its time moves only with Advance or Set,
// and its timers and tickers fire during that call when due, so a test
// decides exactly when things happen without sleeping. It is safe for
// concurrent use.
type Fake struct{ m manual }

// NewFake returns a Fake reading t (in UTC).
func NewFake(t time.Time) *Fake {
	return &Fake{m: manual{frozen: t.UTC(), pending: map[*waiter]struct{}{}}}
}

// Now returns the fake's current time.
func (f *Fake) Now() time.Time { return f.m.Now() }

// NewTimer returns a timer that fires once the fake has been moved d
// forward; a d <= 0 fires at once.
func (f *Fake) NewTimer(d time.Duration) Timer { return f.m.newTimer(d) }

// NewTicker returns a ticker that fires every d of fake time. An Advance
// past several periods delivers one tick, as time.Ticker would to a slow
// reader. It panics for d <= 0, like time.NewTicker.
func (f *Fake) NewTicker(d time.Duration) Ticker { return f.m.newTicker(d) }

// Advance moves the fake forward by d, fires what fell due and returns the
// new time. A negative d changes nothing, as on Offset.
func (f *Fake) Advance(d time.Duration) time.Time { return f.m.advance(d) }

// Set makes the fake read t, fires what fell due and returns t in UTC.
// Unlike Advance it may move time backwards, for tests of a clock step;
// pending timers then simply wait longer.
func (f *Fake) Set(t time.Time) time.Time { return f.m.set(t.UTC()) }
