package api

import (
	"time"
)

// timeLayout is how every timestamp goes on the wire: ISO 8601 in UTC with
// milliseconds, one fixed width so that timestamps sort as text too.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Time is a timestamp on the wire.
type Time time.Time

// MarshalJSON writes the timestamp in timeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

// timePtr converts a nullable domain time into a nullable wire time.
func timePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := Time(*t)
	return &w
}
