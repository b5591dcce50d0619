package mail

import "time"

// RetryDelays are the waits between attempts of an email: after attempt n
// fails, attempt n+1 is due RetryDelays[n-1] after it ended. They start
// short because most of payd's emails carry a code that lapses in 15
// minutes (a sign-up or sign-in code): a mail server that was down for a
// moment, or answered 4xx once, should cost the person seconds, not the
// code. They then stretch to hours for the emails that still matter later
// (an email-change alert with its undo link, an invitation). Attempt 8
// comes about 5 h 23 min after the first; after it the email has failed.
var RetryDelays = []time.Duration{
	10 * time.Second,
	30 * time.Second,
	2 * time.Minute,
	5 * time.Minute,
	15 * time.Minute,
	time.Hour,
	4 * time.Hour,
}

// MaxAttempts is the first attempt plus every retry of RetryDelays.
const MaxAttempts = 8

// NextAttempt says when to try again after attempt number attempt failed
// at last (a payd.RetryPolicy). Attempts count from 1; after attempt
// MaxAttempts, or for a number out of range, there is none and ok is false.
func NextAttempt(attempt int, last time.Time) (next time.Time, ok bool) {
	if attempt < 1 || attempt > len(RetryDelays) {
		return time.Time{}, false
	}
	return last.Add(RetryDelays[attempt-1]), true
}
