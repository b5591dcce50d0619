// Package clock is the only place payd reads the time or waits for it.
//
// Everything that falls due (quote and payment expiry, webhook retries,
// rate-limit windows) asks a Clock, so the development test clock
// (POST /devnet/clock) can move the whole service forward at once.
package clock

import "time"

// Clock tells the time and makes timers that follow it.
type Clock interface {
	// Now returns the current service time.
	Now() time.Time
	// NewTimer returns a timer that fires once d has passed on this clock.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d on this clock.
	NewTicker(d time.Duration) Ticker
}

// Timer fires once on its channel.
type Timer interface {
	// C delivers the clock's time when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was pending.
	Stop() bool
}

// Ticker fires repeatedly on its channel until stopped.
type Ticker interface {
	// C delivers the clock's time at each tick.
	C() <-chan time.Time
	// Stop turns the ticker off.
	Stop()
}

// Sleep waits for d on c or until done is closed, whichever comes first.
// It reports whether the full duration passed.
func Sleep(c Clock, d time.Duration, done <-chan struct{}) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-done:
		return false
	}
}

// Real is the system clock.
type Real struct{}

// Now returns the system time in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// NewTimer returns a system timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker returns a system ticker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
