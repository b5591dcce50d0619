package clock

import (
	"testing"
	"time"
)

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// received returns what ch holds right now, without waiting: a Fake fires
// during Advance, so anything due is already there.
func received(ch <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-ch:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeNow(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	f := NewFake(epoch.In(paris))
	if got := f.Now(); !got.Equal(epoch) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v, want %v in UTC", got, epoch)
	}
	if got := f.Advance(90 * time.Second); !got.Equal(epoch.Add(90*time.Second)) || !f.Now().Equal(got) {
		t.Fatalf("Advance returned %v, Now %v", got, f.Now())
	}
	if got := f.Advance(-time.Hour); !got.Equal(epoch.Add(90 * time.Second)) {
		t.Fatalf("negative Advance moved the clock to %v", got)
	}
	if got := f.Set(epoch.In(paris)); !got.Equal(epoch) || got.Location() != time.UTC || !f.Now().Equal(epoch) {
		t.Fatalf("Set returned %v, Now %v", got, f.Now())
	}
}

func TestFakeTimer(t *testing.T) {
	f := NewFake(epoch)
	tm := f.NewTimer(10 * time.Second)
	f.Advance(9 * time.Second)
	if got, ok := received(tm.C()); ok {
		t.Fatalf("fired early at %v", got)
	}
	f.Advance(time.Second)
	got, ok := received(tm.C())
	if !ok || !got.Equal(epoch.Add(10*time.Second)) || got.Location() != time.UTC {
		t.Fatalf("after 10s: %v, %v", got, ok)
	}
	if tm.Stop() {
		t.Error("Stop after firing reported a pending timer")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C()); ok {
		t.Error("a timer fired twice")
	}
}

func TestFakeTimerZeroFiresAtOnce(t *testing.T) {
	f := NewFake(epoch)
	for _, d := range []time.Duration{0, -time.Second} {
		if got, ok := received(f.NewTimer(d).C()); !ok || !got.Equal(epoch) {
			t.Errorf("NewTimer(%v): %v, %v", d, got, ok)
		}
	}
}

func TestFakeTimerStop(t *testing.T) {
	f := NewFake(epoch)
	tm := f.NewTimer(time.Minute)
	if !tm.Stop() {
		t.Error("Stop of a pending timer reported false")
	}
	if tm.Stop() {
		t.Error("second Stop reported true")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C()); ok {
		t.Error("a stopped timer fired")
	}
}

func TestFakeSetFiresTimers(t *testing.T) {
	f := NewFake(epoch)
	tm := f.NewTimer(time.Hour)
	f.Set(epoch.Add(-time.Hour)) // backwards: the timer now waits two hours
	f.Set(epoch.Add(59 * time.Minute))
	if _, ok := received(tm.C()); ok {
		t.Fatal("fired before its deadline")
	}
	f.Set(epoch.Add(2 * time.Hour))
	if got, ok := received(tm.C()); !ok || !got.Equal(epoch.Add(2*time.Hour)) {
		t.Fatalf("Set past the deadline: %v, %v", got, ok)
	}
}

func TestFakeTicker(t *testing.T) {
	f := NewFake(epoch)
	tk := f.NewTicker(10 * time.Second)
	steps := []struct {
		advance time.Duration
		tick    bool
	}{
		{9 * time.Second, false}, // 0:09
		{1 * time.Second, true},  // 0:10
		{10 * time.Second, true}, // 0:20
		{35 * time.Second, true}, // 0:55: three periods missed, one tick, next at 1:05
		{9 * time.Second, false}, // 1:04
		{1 * time.Second, true},  // 1:05
		{10 * time.Second, true}, // 1:15
		{-time.Minute, false},    // ignored
		{10 * time.Second, true}, // 1:25
	}
	for i, s := range steps {
		now := f.Advance(s.advance)
		got, ok := received(tk.C())
		if ok != s.tick || ok && !got.Equal(now) {
			t.Fatalf("step %d (+%v, now %v): tick %v at %v, want tick %v", i, s.advance, now.Sub(epoch), ok, got, s.tick)
		}
	}
	tk.Stop()
	f.Advance(time.Hour)
	if _, ok := received(tk.C()); ok {
		t.Error("a stopped ticker ticked")
	}
}

func TestTickerPanicsOnZero(t *testing.T) {
	for name, c := range map[string]Clock{"fake": NewFake(epoch), "offset": NewOffset()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewTicker(0) did not panic", name)
				}
			}()
			c.NewTicker(0)
		}()
	}
}

func TestFakeSleep(t *testing.T) {
	f := NewFake(epoch)
	done := make(chan bool)
	go func() { done <- Sleep(f, time.Minute, nil) }()
	// Sleep's timer may not exist yet, so keep moving time until it returns.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.Advance(time.Minute)
		select {
		case full := <-done:
			if !full {
				t.Fatal("Sleep reported it was cut short")
			}
			return
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("Sleep never returned")
		}
	}
}

func TestSleepCanceled(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	for name, c := range map[string]Clock{"fake": NewFake(epoch), "offset": NewOffset(), "real": Real{}} {
		if Sleep(c, time.Hour, stop) {
			t.Errorf("%s: Sleep ran its hour despite done", name)
		}
	}
	if !Sleep(Real{}, time.Millisecond, nil) {
		t.Error("Real: Sleep(1ms) reported it was cut short")
	}
}
