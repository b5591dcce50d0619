package webhook

import (
	"testing"
	"time"
)

func TestNextAttempt(t *testing.T) {
	last := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		attempt int
		wait    time.Duration
		ok      bool
	}{
		{-1, 0, false},
		{0, 0, false},
		{1, 5 * time.Second, true},
		{2, 5 * time.Minute, true},
		{3, 30 * time.Minute, true},
		{4, 2 * time.Hour, true},
		{5, 5 * time.Hour, true},
		{6, 10 * time.Hour, true},
		{7, 10 * time.Hour, true},
		{8, 0, false}, // The eighth attempt was the last retry.
		{9, 0, false},
	}
	for _, c := range cases {
		next, ok := NextAttempt(c.attempt, last)
		if ok != c.ok || (ok && next.Sub(last) != c.wait) || (!ok && !next.IsZero()) {
			t.Errorf("NextAttempt(%d) = %v, %v; want +%v, %v", c.attempt, next.Sub(last), ok, c.wait, c.ok)
		}
	}
}

// TestScheduleTotal pins the whole retry window: a failing endpoint is
// retried 7 times over 27 h 35 min 5 s after the first attempt, plus the
// time the attempts themselves take.
func TestScheduleTotal(t *testing.T) {
	var total time.Duration
	attempts := 1
	at := time.Unix(0, 0)
	for {
		next, ok := NextAttempt(attempts, at)
		if !ok {
			break
		}
		total += next.Sub(at)
		at = next
		attempts++
	}
	if attempts != MaxAttempts || len(RetryDelays) != MaxAttempts-1 {
		t.Errorf("attempts = %d, MaxAttempts = %d, delays = %d", attempts, MaxAttempts, len(RetryDelays))
	}
	if want := 27*time.Hour + 35*time.Minute + 5*time.Second; total != want {
		t.Errorf("total wait = %v, want %v", total, want)
	}
}
