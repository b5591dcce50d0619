package clock

import (
	"sync"
	"testing"
	"time"
)

// patience is how long a test waits for something that should happen at
// once; it is generous because a loaded CI machine can stall for seconds.
const patience = 10 * time.Second

// within waits up to patience for a value on ch.
func within(t *testing.T, ch <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("%s: nothing after %v", what, patience)
		return time.Time{}
	}
}

func TestOffsetNow(t *testing.T) {
	o := NewOffset()
	before := time.Now()
	now := o.Now()
	after := time.Now()
	if now.Before(before.Add(-time.Millisecond)) || now.After(after.Add(time.Millisecond)) || now.Location() != time.UTC {
		t.Fatalf("Now() = %v, outside [%v, %v] or not UTC", now, before, after)
	}
	before = time.Now()
	moved := o.Advance(time.Hour)
	after = time.Now()
	if moved.Before(before.Add(time.Hour-time.Millisecond)) || moved.After(after.Add(time.Hour+time.Millisecond)) {
		t.Fatalf("Advance(1h) = %v, want about %v", moved, before.Add(time.Hour))
	}
	if now := o.Now(); now.Before(moved) || now.Location() != time.UTC {
		t.Fatalf("Now() after Advance = %v, before the %v Advance returned", now, moved)
	}
	if back := o.Advance(-2 * time.Hour); back.Before(moved) {
		t.Fatalf("negative Advance moved the clock back to %v", back)
	}
}

func TestOffsetTimerByAdvance(t *testing.T) {
	o := NewOffset()
	tm := o.NewTimer(time.Hour)
	deadline := o.Now().Add(time.Hour)
	o.Advance(30 * time.Minute)
	if _, ok := received(tm.C()); ok {
		t.Fatal("fired after half its time")
	}
	o.Advance(30 * time.Minute)
	// Advance fires what is due before it returns.
	got, ok := received(tm.C())
	if !ok || got.Before(deadline) || got.Location() != time.UTC {
		t.Fatalf("after 1h of Advance: %v, %v (deadline %v)", got, ok, deadline)
	}
	if tm.Stop() {
		t.Error("Stop after firing reported a pending timer")
	}
}

func TestOffsetTimerByRealTime(t *testing.T) {
	o := NewOffset()
	start := o.Now()
	got := within(t, o.NewTimer(20*time.Millisecond).C(), "20ms timer")
	if got.Sub(start) < 20*time.Millisecond {
		t.Fatalf("fired after %v", got.Sub(start))
	}
}

// An Advance that leaves a timer a little real time to go must shorten its
// system timer too; otherwise it would wait the original hour.
func TestOffsetAdvanceShortensTimer(t *testing.T) {
	o := NewOffset()
	tm := o.NewTimer(time.Hour)
	o.Advance(time.Hour - 30*time.Millisecond)
	within(t, tm.C(), "timer with 30ms left")
}

func TestOffsetTimerStop(t *testing.T) {
	o := NewOffset()
	tm := o.NewTimer(time.Minute)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	o.Advance(time.Hour)
	if _, ok := received(tm.C()); ok {
		t.Fatal("a stopped timer fired")
	}
	if tm.Stop() {
		t.Error("second Stop reported true")
	}
}

func TestOffsetTickerByAdvance(t *testing.T) {
	o := NewOffset()
	tk := o.NewTicker(time.Hour)
	defer tk.Stop()
	o.Advance(5 * time.Hour)
	if _, ok := received(tk.C()); !ok {
		t.Fatal("no tick after five periods")
	}
	if _, ok := received(tk.C()); ok {
		t.Fatal("a second tick was queued; missed ticks should be dropped")
	}
	o.Advance(time.Hour)
	if _, ok := received(tk.C()); !ok {
		t.Fatal("no tick one period after the catch-up tick")
	}
}

func TestOffsetTickerByRealTime(t *testing.T) {
	o := NewOffset()
	tk := o.NewTicker(5 * time.Millisecond)
	defer tk.Stop()
	var last time.Time
	for i := 0; i < 3; i++ {
		got := within(t, tk.C(), "5ms ticker")
		if !got.After(last) {
			t.Fatalf("tick %d at %v, not after %v", i, got, last)
		}
		last = got
	}
}

// TestConcurrentUse is for the race detector: every operation at once.
func TestConcurrentUse(t *testing.T) {
	for name, c := range map[string]interface {
		Clock
		Advance(time.Duration) time.Time
	}{"offset": NewOffset(), "fake": NewFake(epoch)} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 200; i++ {
						tm := c.NewTimer(time.Duration(i%5) * time.Millisecond)
						tk := c.NewTicker(time.Millisecond)
						c.Advance(time.Millisecond)
						_ = c.Now()
						received(tm.C())
						received(tk.C())
						tm.Stop()
						tk.Stop()
					}
				}()
			}
			wg.Wait()
		})
	}
}

func TestReal(t *testing.T) {
	var c Clock = Real{}
	if c.Now().Location() != time.UTC {
		t.Error("Real.Now is not UTC")
	}
	tk := c.NewTicker(time.Millisecond)
	within(t, tk.C(), "Real ticker")
	tk.Stop()
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Error("Real timer Stop reported false while pending")
	}
}
