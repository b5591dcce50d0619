package seed

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"payd/clock"
	"payd/store/storetest"
)

// TestSeedSpeed seeds PAYD_SEED_SPEED payments into a fresh database of
// each kind and logs the rate (go test -run TestSeedSpeed -v ./seed). It is
// skipped unless the variable is set.
func TestSeedSpeed(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PAYD_SEED_SPEED"))
	if n <= 0 {
		t.Skip("PAYD_SEED_SPEED is not set")
	}
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Open(t, dialect, clock.Real{})
			cfg := testConfig(n, 1)
			cfg.BatchSize = 1000
			clk := clock.Real{}
			start, cpu := clk.Now(), cpuTime()
			if _, err := Run(context.Background(), db, cfg); err != nil {
				t.Fatal(err)
			}
			took, used := clk.Now().Sub(start), cpuTime()-cpu
			t.Logf("%s: %d payments in %s (%.0f/s); this process used %s of CPU", dialect, n,
				took.Round(time.Millisecond), float64(n)/took.Seconds(), used.Round(time.Millisecond))
		})
	}
}

// cpuTime is the CPU time this process has used, user and system: the
// wall time of a run depends on what else the machine does, this less so.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
