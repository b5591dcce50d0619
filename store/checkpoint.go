package store

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"payd/clock"
)

const (
	// checkpointEvery is how often the WAL is copied back into the
	// database when nothing else asks for it.
	checkpointEvery = time.Second
	// walKickBytes is the WAL size past which the writer asks for a
	// checkpoint before the next tick. It is also the journal_size_limit
	// a restarted WAL is cut back to, so only a WAL that grew past it
	// again asks; a WAL that stays at that size is being reused, which is
	// what keeps each commit's fsync cheap.
	walKickBytes = 32 << 20
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
	stop    chan struct{}
	stopped chan struct{}
	// tailDue tells the writer that a checkpoint has run and asks it to
	// finish it (see writer.finishCheckpoint).
	tailDue atomic.Bool
}

// newCheckpointer starts the background checkpoint loop on conn.
func newCheckpointer(conn *sql.DB, path string, clk clock.Clock, log *slog.Logger) *checkpointer {
	c := &checkpointer{conn: conn, walPath: path + "-wal", clock: clk, log: log,
		kicks: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// run checkpoints every tick of the service clock and whenever kicked.
func (c *checkpointer) run() {
	defer close(c.stopped)
	t := c.clock.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C():
		case <-c.kicks:
		}
		c.checkpoint("PASSIVE")
		c.tailDue.Store(true)
	}
}

// kick asks for a checkpoint soon if the WAL has grown large. It never
// blocks: a kick already pending covers this one.
func (c *checkpointer) kick() {
	if fi, err := os.Stat(c.walPath); err != nil || fi.Size() <= walKickBytes {
		return
	}
	select {
	case c.kicks <- struct{}{}:
	default:
	}
}

// checkpoint runs one checkpoint of the given mode and logs a failure; a
// failed checkpoint only leaves the WAL longer until the next one.
func (c *checkpointer) checkpoint(mode string) {
	var busy, logFrames, done int
	err := c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &done)
	if err != nil {
		c.log.Warn("store: WAL checkpoint failed", "mode", mode, "error", err)
	}
}

// close stops the loop and truncates the WAL to zero bytes, so that a
// stopped service leaves a self-contained database file behind.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.stopped
	c.checkpoint("TRUNCATE")
	return c.conn.Close()
}
