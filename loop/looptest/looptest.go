// Package looptest checks that a background loop keeps the loop package's
// promises: Stop before Start and twice is harmless, and starting twice
// leaves no goroutine behind once stopped. Each package tests its own loops
// with it, so the check is written once.
package looptest

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"payd/clock"
	"payd/loop"
)

// wait bounds each call and the wait for goroutines to end; a loop that
// needs longer to stop is broken.
const wait = 10 * time.Second

// wall is the real clock: the check waits for goroutines, not for the
// loop's (perhaps fake) service clock.
var wall clock.Clock = clock.Real{}

// Check runs the start/stop sequence on s, which must be stopped and not
// started yet. The context is never cancelled, so a goroutine that only
// ctx would end stays visible. It must not run in parallel with other
// tests of the package: it counts the process's goroutines.
func Check(t *testing.T, s loop.Service) {
	t.Helper()
	ctx := context.Background()
	call(t, "Stop before Start", s.Stop)
	call(t, "second Stop before Start", s.Stop)
	// One pass first, so the connections and helpers it opens (and keeps)
	// are part of the baseline.
	call(t, "RunOnce", func() { _ = s.RunOnce(ctx) })
	base := runtime.NumGoroutine()
	call(t, "Start", func() { s.Start(ctx) })
	call(t, "second Start", func() { s.Start(ctx) })
	call(t, "Stop", s.Stop)
	call(t, "second Stop", s.Stop)
	settle(t, "after starting twice and stopping", base)
	call(t, "Start after Stop", func() { s.Start(ctx) })
	call(t, "Stop after restart", s.Stop)
	settle(t, "after a restart", base)
}

// call runs f, failing the test if it panics or does not return in time.
func call(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panicked: %v", p)
			}
		}()
		f()
		done <- nil
	}()
	timer := wall.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %v", what, err)
		}
	case <-timer.C():
		t.Fatalf("%s did not return within %s", what, wait)
	}
}

// settle waits for the goroutine count to fall back to base.
func settle(t *testing.T, when string, base int) {
	t.Helper()
	deadline := wall.Now().Add(wait)
	for n := runtime.NumGoroutine(); n > base; n = runtime.NumGoroutine() {
		if wall.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines, want at most %d (a leaked loop?)\n%s", when, n, base, buf[:runtime.Stack(buf, true)])
		}
		clock.Sleep(wall, 10*time.Millisecond, nil)
	}
}
