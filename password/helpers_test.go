package password

import (
	"time"

	"payd/clock"
)

// waitBriefly lets other goroutines run for a millisecond of real time.
func waitBriefly() { clock.Sleep(clock.Real{}, time.Millisecond, nil) }
