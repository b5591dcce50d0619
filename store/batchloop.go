package store

import (
	"context"
	"log/slog"
	"time"

	"payd/clock"
	"payd/loop"
)

// batchLoop is a background loop of batched store work (the search
// indexer, the rollup folder): every tick it runs job batch after batch
// until one is not full.
type batchLoop struct {
	what  string // for the log: "search indexing"
	every time.Duration
	batch int
	// job does up to max items of work in one transaction and reports how
	// many it did.
	job    func(ctx context.Context, max int) (int, error)
	clock  clock.Clock
	log    *slog.Logger
	runner loop.Runner
}

// Start runs the loop until Stop or ctx ends. Starting twice is a no-op.
func (b *batchLoop) Start(ctx context.Context) { b.runner.Start(ctx, b.run) }

// Stop ends the loop and waits for its current batch.
func (b *batchLoop) Stop() { b.runner.Stop() }

// run works batch after batch while there is more, then waits a tick.
func (b *batchLoop) run(ctx context.Context) {
	t := b.clock.NewTicker(b.every)
	defer t.Stop()
	for {
		_ = b.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// RunOnce runs batch after batch until one is not full, so nothing was
// left when it looked last. A failure is logged and also returned; the
// loop retries on its next tick.
func (b *batchLoop) RunOnce(ctx context.Context) error {
	for {
		n, err := b.job(ctx, b.batch)
		if err != nil && ctx.Err() == nil {
			b.log.WarnContext(ctx, "store: "+b.what+" failed", "error", err)
		}
		if err != nil || n < b.batch {
			return err
		}
	}
}
