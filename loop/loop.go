// Package loop starts and stops payd's background loops (webhook delivery,
// watching, expiry, rate refresh, reaping, search indexing, checkpoints).
//
// Every loop type embeds a Runner, so each one gets the same guarantees: a
// second Start while it runs starts nothing, Stop before Start or twice is
// harmless, and Stop returns only once the loop's goroutine has ended. It
// is a leaf package like clock and money (it imports only the standard
// library), so every adapter may use it without importing another adapter.
package loop

import (
	"context"
	"sync"
)

// Service is what every background loop offers: cmd/payd starts and stops
// them alike, and tests call RunOnce to make one pass without a goroutine.
type Service interface {
	// Start runs the loop in the background until Stop or ctx ends; a
	// second Start while it runs does nothing.
	Start(ctx context.Context)
	// Stop ends the loop and waits for it; it is safe before Start and
	// twice.
	Stop()
	// RunOnce makes one pass of the loop's work in the caller's goroutine.
	RunOnce(ctx context.Context) error
}

// Runner runs one goroutine at a time for a loop. The zero value is ready
// to use; a Runner must not be copied after first use.
type Runner struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil while stopped
	done   chan struct{}      // closed when run returns
}

// Start runs run in a new goroutine with a context that Stop cancels (as
// does ctx ending), unless a run started earlier has not been stopped: then
// it does nothing and reports false, so starting twice never leaks a
// goroutine. A run that ended because ctx ended still counts until Stop.
func (r *Runner) Start(ctx context.Context, run func(ctx context.Context)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return false
	}
	ctx, r.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	r.done = done
	go func() {
		defer close(done)
		run(ctx)
	}()
	return true
}

// Stop cancels the running goroutine's context and waits for it to return.
// It does nothing before Start or after an earlier Stop, and Start may be
// called again afterwards.
func (r *Runner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel, r.done = nil, nil
}
