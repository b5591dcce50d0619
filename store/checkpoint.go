package store

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"payd/clock"
	"payd/loop"
)

const (
	// checkpointEvery is how often the WAL is copied back into the
	// database when nothing else asks for it.
	checkpointEvery = time.Second
	// walCapBytes is the journal_size_limit a restarted WAL is cut back
	// to: below it, a restarted WAL overwrites the file it already has,
	// which keeps each commit's fsync cheap. A WAL that grows past it asks
	// for a checkpoint before the next tick.
	walCapBytes = 128 << 20
	// walRestartBytes is how much WAL the writer lets accumulate before it
	// finishes a checkpoint itself so that the WAL restarts (see
	// writer.finishCheckpoint): every request in flight waits for that
	// one, so under steady writes it should come every few seconds, not
	// every tick. It leaves a tick's worth of writes under walCapBytes.
	walRestartBytes = 96 << 20
)

// checkpointer copies the WAL into the database file in the background, on
// its own connection. The writer runs with automatic checkpoints off, so
// no commit ever waits for a checkpoint's fsync of the database file.
// PASSIVE checkpoints never block the writer or readers.
type checkpointer struct {
	conn    *sql.DB
	walPath string
	clock   clock.Clock
	log     *slog.Logger
	kicks   chan struct{}
	runner  loop.Runner
	// tailDue tells the writer that a checkpoint has run over a WAL of
	// walRestartBytes or more and asks it to finish it (see
	// writer.finishCheckpoint).
	tailDue atomic.Bool
	// restartFrames is walRestartBytes in WAL frames of this database.
	restartFrames atomic.Int64
	// passes counts background checkpoints, for tests.
	passes atomic.Int64
}

// newCheckpointer starts the background checkpoint loop on conn; it runs
// until close, not until ctx (Open's) ends.
func newCheckpointer(ctx context.Context, conn *sql.DB, path string, clk clock.Clock, log *slog.Logger) (*checkpointer, error) {
	var pageSize int
	if err := conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return nil, err
	}
	c := &checkpointer{conn: conn, walPath: path + "-wal", clock: clk, log: log,
		kicks: make(chan struct{}, 1)}
	c.restartFrames.Store(int64(walRestartBytes / (pageSize + walFrameHeader)))
	c.Start(context.WithoutCancel(ctx))
	return c, nil
}

// walFrameHeader is the size of the header SQLite writes before each page
// in the WAL.
const walFrameHeader = 24

// Start runs the loop in the background until Stop or ctx ends.
func (c *checkpointer) Start(ctx context.Context) { c.runner.Start(ctx, c.run) }

// Stop ends the loop and waits for a checkpoint in progress.
func (c *checkpointer) Stop() { c.runner.Stop() }

// run checkpoints every tick of the service clock and whenever kicked.
func (c *checkpointer) run(ctx context.Context) {
	t := c.clock.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		case <-c.kicks:
		}
		_ = c.RunOnce(ctx) // logged by checkpoint
	}
}

// RunOnce runs one PASSIVE checkpoint and, when it ran over a WAL long
// enough, asks the writer to finish it.
func (c *checkpointer) RunOnce(context.Context) error {
	frames, err := c.checkpoint("PASSIVE")
	if int64(frames) >= c.restartFrames.Load() {
		c.tailDue.Store(true)
	}
	c.passes.Add(1)
	return err
}

// kick asks for a checkpoint soon if the WAL has grown large. It never
// blocks: a kick already pending covers this one.
func (c *checkpointer) kick() {
	if fi, err := os.Stat(c.walPath); err != nil || fi.Size() <= walCapBytes {
		return
	}
	select {
	case c.kicks <- struct{}{}:
	default:
	}
}

// checkpoint runs one checkpoint of the given mode and logs a failure; a
// failed checkpoint only leaves the WAL longer until the next one. It
// returns how many frames the WAL holds.
func (c *checkpointer) checkpoint(mode string) (frames int, err error) {
	var busy, logFrames, done int
	err = c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &done)
	if err != nil {
		c.log.Warn("store: WAL checkpoint failed", "mode", mode, "error", err)
	}
	return logFrames, err
}

// close stops the loop and truncates the WAL to zero bytes, so that a
// stopped service leaves a self-contained database file behind.
func (c *checkpointer) close() error {
	c.Stop()
	_, _ = c.checkpoint("TRUNCATE") // logged; the file stays consistent
	return c.conn.Close()
}
