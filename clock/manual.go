package clock

import (
	"sync"
	"time"
)

// manual is the machinery Offset and Fake share: a time that can be moved
// forward and the timers and tickers waiting on it. When live, the time is
// the system's plus an offset and each waiter also keeps a system timer for
// the real time left; when frozen, only advance moves anything.
type manual struct {
	mu      sync.Mutex
	live    bool
	offset  time.Duration // live: what advance has added to the system time
	frozen  time.Time     // frozen: the current time
	pending map[*waiter]struct{}
}

// now returns the clock's time; m.mu is held. A live clock keeps the
// monotonic reading of time.Now, so deadlines are immune to wall-clock
// steps; callers strip it with UTC before handing a time out.
func (m *manual) now() time.Time {
	if m.live {
		return time.Now().Add(m.offset)
	}
	return m.frozen
}

// Now returns the clock's time in UTC.
func (m *manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now().UTC()
}

// advance moves the clock forward by d and fires whatever fell due. A
// negative d is ignored: service time never runs backwards, because
// expiries that already happened could not be undone.
func (m *manual) advance(d time.Duration) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d > 0 {
		if m.live {
			m.offset += d
		} else {
			m.frozen = m.frozen.Add(d)
		}
	}
	return m.settleAll()
}

// set makes a frozen clock read t and fires whatever fell due.
func (m *manual) set(t time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frozen = t
	return m.settleAll()
}

// settleAll fires or rearms every waiter at the current time; m.mu is held.
func (m *manual) settleAll() time.Time {
	now := m.now()
	for w := range m.pending {
		m.settle(w, now)
	}
	return now.UTC()
}

// waiter is one timer (every == 0) or ticker on a manual clock.
type waiter struct {
	m     *manual
	ch    chan time.Time
	at    time.Time     // next deadline on the clock
	every time.Duration // ticker period; 0 for a timer
	sys   *time.Timer   // live clocks only: fires when real time reaches at
}

// wait registers a waiter due after d and repeating every period.
func (m *manual) wait(d, every time.Duration) *waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	// One buffered slot, like the channels of time.Timer before Go 1.23: a
	// send never blocks the clock, and a slow reader misses ticks rather
	// than stalling Advance.
	w := &waiter{m: m, ch: make(chan time.Time, 1), at: now.Add(d), every: every}
	m.pending[w] = struct{}{}
	m.settle(w, now)
	return w
}

// settle fires w if it is due at now and then retires or rearms it; m.mu is
// held. A ticker that fell several periods behind fires once and moves to
// the next period after now, dropping the missed ticks like time.Ticker.
func (m *manual) settle(w *waiter, now time.Time) {
	if now.Before(w.at) {
		w.arm(now)
		return
	}
	select {
	case w.ch <- now.UTC():
	default:
	}
	if w.every == 0 {
		m.drop(w)
		return
	}
	if w.at = w.at.Add(w.every); !now.Before(w.at) {
		w.at = now.Add(w.every)
	}
	w.arm(now)
}

// arm points a live waiter's system timer at the real time left until its
// deadline; a frozen clock needs none because only advance moves it.
func (w *waiter) arm(now time.Time) {
	if !w.m.live {
		return
	}
	left := w.at.Sub(now)
	if w.sys == nil {
		w.sys = time.AfterFunc(left, w.wake)
		return
	}
	w.sys.Reset(left)
}

// wake runs when the system timer fires. The waiter may have been stopped
// or already fired by advance in the meantime; settle sorts that out.
func (w *waiter) wake() {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pending[w]; ok {
		m.settle(w, m.now())
	}
}

// drop forgets w; m.mu is held. It reports whether w was still pending.
func (m *manual) drop(w *waiter) bool {
	_, ok := m.pending[w]
	delete(m.pending, w)
	if w.sys != nil {
		w.sys.Stop()
	}
	return ok
}

// stop is Stop for both timers and tickers.
func (w *waiter) stop() bool {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	return w.m.drop(w)
}

// manualTimer is a Timer on a manual clock.
type manualTimer struct{ w *waiter }

func (t manualTimer) C() <-chan time.Time { return t.w.ch }
func (t manualTimer) Stop() bool          { return t.w.stop() }

// manualTicker is a Ticker on a manual clock.
type manualTicker struct{ w *waiter }

func (t manualTicker) C() <-chan time.Time { return t.w.ch }
func (t manualTicker) Stop()               { t.w.stop() }

// newTimer returns a timer due after d on m.
func (m *manual) newTimer(d time.Duration) Timer { return manualTimer{m.wait(d, 0)} }

// newTicker returns a ticker firing every d on m. Like time.NewTicker it
// panics for d <= 0, which would tick without pause.
func (m *manual) newTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return manualTicker{m.wait(d, d)}
}
