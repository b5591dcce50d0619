package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"

	"payd"
)

const (
	// maxBatch caps how many transactions share one COMMIT, so that one
	// batch's latency stays bounded under a flood.
	maxBatch = 256
	// beginAttempts bounds how often BEGIN IMMEDIATE is retried while
	// another process holds the write lock; each attempt already waits up
	// to busy_timeout with SQLite's own backoff.
	beginAttempts = 6
	// commitAttempts bounds retries of a COMMIT that found the database busy.
	commitAttempts = 3
)

// job is one transaction waiting for the writer.
type job struct {
	ctx  context.Context
	fn   txFunc
	done chan error
	// single marks a store method's own write (one statement, or a write
	// plus reads), which needs no savepoint of its own: see runBare.
	single bool
}

// The writer runs a batch's jobs bare, without a savepoint each, and
// isolated, each in its own savepoint, only when a bare run failed. In a
// savepoint SQLite copies every page a job changes, the first time it
// does, to the statement journal so that the job alone can be undone:
// for a checkout (about a dozen writes over more than thirty pages of tables
// and indexes) that copying was a quarter of the writer's time, and the writer
// is the bottleneck (docs/benchmarks.md, "Checkouts (issue 4)"). Jobs
// rarely fail inside the transaction, so a failure instead rolls back the
// bare run, and the batch runs again isolated: a failed job still takes no
// other job down, at the cost of running the jobs before it twice.

// writer owns SQLite's one write connection. A single goroutine runs every
// write transaction, so writes never contend for the lock inside this
// process, and it commits them in groups: one fsync makes a whole batch
// durable. Several writer connections measured slower, with second-long
// p99s (DESIGN.md §3).
type writer struct {
	db   *DB
	conn *stmtCache
	jobs chan *job
	ckpt *checkpointer

	mu      sync.RWMutex // guards closed against sends on a closed jobs
	closed  bool
	stopped chan struct{}
	// batches counts COMMITs, for the checkpoint kick and for tests that
	// check which jobs shared one.
	batches atomic.Int64
	// ends counts the transactions the connection ended, committed or
	// rolled back, explicitly or by SQLite itself after an error such as a
	// full disk (commit and rollback hooks). A job under which it moved
	// has ended the batch's transaction: see runJob.
	ends atomic.Int64
	// inJob is set while a job runs. Only the writer commits: a COMMIT
	// inside a job would make the jobs before it durable although the
	// batch then runs them again, so SQLite is told to roll it back, and
	// so is any write the job makes after its transaction has ended.
	inJob atomic.Bool
	// tails counts the checkpoints the writer finished, for tests.
	tails atomic.Int64
}

// newWriter starts the writer goroutine on conn.
func newWriter(db *DB, conn *sql.Conn, ckpt *checkpointer) (*writer, error) {
	w := &writer{db: db, conn: newStmtCache(conn, true), jobs: make(chan *job, maxBatch), ckpt: ckpt, stopped: make(chan struct{})}
	if err := w.hook(conn); err != nil {
		return nil, err
	}
	go w.run()
	return w, nil
}

// txHooks is the part of modernc.org/sqlite's connection that reports the
// ends of transactions.
type txHooks interface {
	RegisterCommitHook(sqlite.CommitHookFn)
	RegisterRollbackHook(sqlite.RollbackHookFn)
}

// hook makes conn count in w.ends every transaction it ends, and refuse
// a commit from inside a job (w.inJob). SQLite calls the hooks on the
// goroutine running the statement, the writer's.
func (w *writer) hook(conn *sql.Conn) error {
	return conn.Raw(func(dc any) error {
		h, ok := dc.(txHooks)
		if !ok {
			return fmt.Errorf("store: SQLite connection %T has no commit and rollback hooks", dc)
		}
		h.RegisterCommitHook(func() int32 {
			if w.inJob.Load() {
				return 1 // SQLite rolls back instead, and calls the rollback hook
			}
			w.ends.Add(1)
			return 0
		})
		h.RegisterRollbackHook(func() { w.ends.Add(1) })
		return nil
	})
}

// submit queues fn and waits for its answer. It does not give up when ctx
// ends while fn runs: the batch may still commit, and the caller must not
// be told otherwise.
func (w *writer) submit(ctx context.Context, fn txFunc) error {
	return w.enqueue(&job{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// submitSingle is submit for one store method's write.
func (w *writer) submitSingle(ctx context.Context, fn txFunc) error {
	return w.enqueue(&job{ctx: ctx, fn: fn, done: make(chan error, 1), single: true})
}

// enqueue hands j to the writer goroutine and waits for its answer.
func (w *writer) enqueue(j *job) error {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return errClosed
	}
	w.jobs <- j
	w.mu.RUnlock()
	return <-j.done
}

// close stops accepting jobs, lets the writer finish every queued one and
// waits for it to exit.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.jobs)
	}
	w.mu.Unlock()
	<-w.stopped
	w.conn.close()
}

// run is the writer goroutine: it takes the first waiting job plus every
// job already queued behind it and commits them together.
func (w *writer) run() {
	defer close(w.stopped)
	batch := make([]*job, 0, maxBatch)
	for first := range w.jobs {
		batch = w.collect(append(batch[:0], first))
		for rest, isolated := batch, false; len(rest) > 0; {
			rest, isolated = w.runBatch(rest, isolated)
		}
		w.finishCheckpoint()
	}
}

// collect adds the jobs already waiting, without waiting for more: a lone
// job commits at once, and jobs arriving during a commit form the next batch.
func (w *writer) collect(batch []*job) []*job {
	for len(batch) < maxBatch {
		select {
		case j, ok := <-w.jobs:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// runBatch runs jobs in one transaction and answers them, each bare or,
// when isolated, in its own savepoint. It returns the jobs to run again,
// and whether isolated: a bare run that failed runs again isolated (see
// above writer), and if the transaction itself breaks under a job (SQLite rolls
// back the whole transaction on errors such as a full disk), that job gets
// its error and the jobs it took down run again. A transaction function
// may run more than once.
func (w *writer) runBatch(jobs []*job, isolated bool) (again []*job, againIsolated bool) {
	jobs = w.dropCancelled(jobs)
	if len(jobs) == 0 {
		return nil, false
	}
	if err := w.begin(); err != nil {
		answer(jobs, fmt.Errorf("store: begin transaction: %w", err))
		return nil, false
	}
	ok := make([]*job, 0, len(jobs))
	var failed []failure
	for i, j := range jobs {
		err, broken := w.runJob(j, isolated)
		if broken != nil {
			w.rollback()
			if !isolated && i > 0 {
				return jobs, true // nothing is answered yet
			}
			answerFailed(failed)
			if broken != err {
				err = errors.Join(err, broken)
			}
			j.done <- err
			return append(ok, jobs[i+1:]...), isolated
		}
		if err != nil {
			failed = append(failed, failure{j, err})
			continue
		}
		ok = append(ok, j)
	}
	err := w.commit()
	w.afterCommit() // counted before the answers, so a caller sees its own batch counted
	answerFailed(failed)
	answer(ok, err)
	return nil, false
}

// failure is a job that failed alone, answered once its batch has ended:
// until then the batch may yet run again, and the job with it.
type failure struct {
	j   *job
	err error
}

// answerFailed gives each failed job its error.
func answerFailed(failed []failure) {
	for _, f := range failed {
		f.j.done <- f.err
	}
}

// dropCancelled answers the jobs whose caller has given up before they
// started and returns the rest.
func (w *writer) dropCancelled(jobs []*job) []*job {
	live := jobs[:0]
	for _, j := range jobs {
		if err := j.ctx.Err(); err != nil {
			j.done <- err
			continue
		}
		live = append(live, j)
	}
	return live
}

// runJob runs one job, with a context that carries the transaction and
// ignores the caller's cancellation: bare, or when isolated in its own
// savepoint. broken reports that the transaction can no longer be trusted
// to hold exactly the batch's other jobs.
func (w *writer) runJob(j *job, isolated bool) (err, broken error) {
	if err := j.ctx.Err(); err != nil {
		return err, nil
	}
	q := &queries{ex: w.conn, dialect: dialectSQLite, clock: w.db.clock, at: w.db.clock.Now()}
	st := newTxState(w.db, q)
	defer st.ended.Store(true)
	ctx := context.WithValue(context.WithoutCancel(j.ctx), txKey{}, st)
	w.inJob.Store(true)
	defer w.inJob.Store(false)
	ends := w.ends.Load()
	if isolated && !j.single {
		err, broken = w.db.savepoint(ctx, w.conn, "job", func() error { return j.fn(ctx, q) })
	} else {
		err, broken = w.runBare(ctx, j, q)
	}
	if w.ends.Load() != ends {
		// The statements after the end ran outside the batch's transaction.
		broken = errors.Join(errTxEnded, broken)
	}
	return err, broken
}

// runBare runs a job without a savepoint. A failed job's writes stay in the
// transaction, so its error breaks the batch, except a store method's own
// write (single) failing with one of the store's mapped errors (not_found,
// conflict): SQLite undoes a failed statement by itself and keeps the
// transaction. (A job under which the transaction ended, by a COMMIT or
// ROLLBACK of its own or SQLite's rollback after an error the job then
// ignored, breaks the batch whatever it returns: see runJob.)
func (w *writer) runBare(ctx context.Context, j *job, q *queries) (err, broken error) {
	err = w.db.protect(ctx, func() error { return j.fn(ctx, q) })
	var pe *payd.Error
	if err == nil || j.single && errors.As(err, &pe) {
		return err, nil
	}
	return err, err
}

// begin takes the write lock, retrying while another process holds it.
func (w *writer) begin() error {
	var err error
	for range beginAttempts {
		if _, err = w.conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); !isBusy(err) {
			return err
		}
		w.db.log.Warn("store: database busy, retrying BEGIN IMMEDIATE", "error", err)
	}
	return err
}

// commit makes the batch durable. A failed COMMIT leaves the transaction
// open, so it is retried while busy and rolled back otherwise.
func (w *writer) commit() error {
	var err error
	for range commitAttempts {
		if _, err = w.conn.ExecContext(context.Background(), "COMMIT"); !isBusy(err) {
			break
		}
	}
	if err != nil {
		w.rollback()
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// rollback ends a broken or failed transaction. Its error is only logged:
// after an automatic rollback there is no transaction left to end.
func (w *writer) rollback() {
	if _, err := w.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		w.db.log.Debug("store: rollback", "error", err)
	}
}

// afterCommit asks for an early checkpoint when the WAL has grown large,
// checking the file only every few batches to keep stat off the hot path.
func (w *writer) afterCommit() {
	if w.batches.Add(1)%16 == 0 {
		w.ckpt.kick()
	}
}

// finishCheckpoint completes, between two batches, a checkpoint the
// checkpointer has just run. Under steady writes a background checkpoint
// never catches up with the writer, so the WAL is never restarted: it
// grows without end, and appending to a growing file makes every fsync
// dearer (about 3,000 instead of 5,000 durable commits/s here; see
// docs/storage.md). From the writer, with no write in flight, the
// checkpoint only has the last few frames to copy; once all are copied the
// next transaction restarts the WAL at its beginning.
func (w *writer) finishCheckpoint() {
	if !w.ckpt.tailDue.Swap(false) {
		return
	}
	if _, err := w.conn.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		w.db.log.Warn("store: WAL checkpoint failed", "mode", "PASSIVE", "error", err)
	}
	w.tails.Add(1)
}

// answer gives every job the same result.
func answer(jobs []*job, err error) {
	for _, j := range jobs {
		j.done <- err
	}
}

// The writer's connection runs statements without the caller's
// cancellation (stmtCache with detach): SQLite answers an interrupted
// INSERT, UPDATE or DELETE inside a transaction by rolling back the whole
// transaction, which here is every job of the batch.
