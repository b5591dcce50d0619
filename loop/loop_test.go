package loop_test

import (
	"context"
	"sync/atomic"
	"testing"

	"payd/loop"
	"payd/loop/looptest"
)

// ticker is the smallest loop: its goroutine waits for its context to end.
type ticker struct{ runner loop.Runner }

func (k *ticker) Start(ctx context.Context) {
	k.runner.Start(ctx, func(ctx context.Context) { <-ctx.Done() })
}
func (k *ticker) Stop()                         { k.runner.Stop() }
func (k *ticker) RunOnce(context.Context) error { return nil }

func TestRunnerStartStop(t *testing.T) {
	looptest.Check(t, &ticker{})
}

// TestRunnerStartTwice: the second Start reports false and runs nothing.
func TestRunnerStartTwice(t *testing.T) {
	var r loop.Runner
	var runs atomic.Int32
	run := func(ctx context.Context) { runs.Add(1); <-ctx.Done() }
	if !r.Start(t.Context(), run) {
		t.Fatal("first Start = false")
	}
	if r.Start(t.Context(), run) {
		t.Fatal("second Start = true, want false while running")
	}
	r.Stop()
	if n := runs.Load(); n != 1 {
		t.Fatalf("runs = %d, want 1", n)
	}
	if !r.Start(t.Context(), run) {
		t.Fatal("Start after Stop = false")
	}
	r.Stop()
}

// TestRunnerParentEnds: the run ends with its parent context, and it still
// counts as started until Stop, which then returns at once.
func TestRunnerParentEnds(t *testing.T) {
	var r loop.Runner
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan struct{})
	r.Start(ctx, func(ctx context.Context) { <-ctx.Done(); close(ended) })
	cancel()
	<-ended
	if r.Start(t.Context(), func(context.Context) {}) {
		t.Fatal("Start before Stop of an ended run = true")
	}
	r.Stop()
}
