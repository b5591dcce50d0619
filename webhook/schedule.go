package webhook

import "time"

// RetryDelays are the waits of spec 6.3 rule 2 and 8.1: after the first
// attempt fails, up to 7 more follow, each this long after the attempt
// before it failed. RetryDelays[n-1] is the wait after attempt n.
var RetryDelays = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is the first attempt plus every retry of RetryDelays: after
// this many failures a delivery has failed for good.
const MaxAttempts = 8

// NextAttempt says when to try again after attempt number attempt failed
// at last. Attempts count from 1 (the first try), matching the attempt
// field of the delivery object (spec 2.10). After attempt n the next one
// is due at last + RetryDelays[n-1]; after attempt MaxAttempts, or for a
// number out of range, there is none and ok is false. last is the time
// the attempt ended, so a slow receiver does not shorten the wait.
func NextAttempt(attempt int, last time.Time) (next time.Time, ok bool) {
	if attempt < 1 || attempt > len(RetryDelays) {
		return time.Time{}, false
	}
	return last.Add(RetryDelays[attempt-1]), true
}
