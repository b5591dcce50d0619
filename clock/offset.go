package clock

import "time"

// Offset is the development server's clock: the system time plus an offset
// that POST /devnet/clock moves forward with Advance. Its timers and tickers
// fire when their deadline passes on this clock, by real time passing or by
// Advance, so everything that falls due follows a jump at once. It is safe
// for concurrent use.
type Offset struct{ m manual }

// NewOffset returns an Offset that starts at the system time.
func NewOffset() *Offset {
	return &Offset{m: manual{live: true, pending: map[*waiter]struct{}{}}}
}

// Now returns the system time plus the offset, in UTC.
func (o *Offset) Now() time.Time { return o.m.Now() }

// NewTimer returns a timer that fires once d has passed on this clock.
func (o *Offset) NewTimer(d time.Duration) Timer { return o.m.newTimer(d) }

// NewTicker returns a ticker that fires every d on this clock. An Advance
// past several periods delivers one tick at once rather than one per
// period, as time.Ticker drops ticks for a slow reader. It panics for
// d <= 0, like time.NewTicker.
func (o *Offset) NewTicker(d time.Duration) Ticker { return o.m.newTicker(d) }

// Advance moves the clock forward by d, fires every timer and ticker that
// is now due, and returns the new time. A negative d changes nothing,
// because undoing time would leave already-expired things expired.
func (o *Offset) Advance(d time.Duration) time.Time { return o.m.advance(d) }
