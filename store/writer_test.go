package store

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

// These tests drive the SQLite writer directly, so that the jobs of a batch
// are known rather than left to scheduling. (They are in package store and
// cannot use storetest, which imports store.)

var errBoom = errors.New("boom")

// openWriterTest opens a migrated SQLite store for one test.
func openWriterTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// blockWriter occupies the writer with a job that waits until the returned
// function is called, so that jobs submitted meanwhile form one batch.
func blockWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	started, unblock := make(chan struct{}), make(chan struct{})
	go db.writer.submit(context.Background(), func(context.Context, *queries) error {
		close(started)
		<-unblock
		return nil
	})
	<-started
	return func() { close(unblock) }
}

// submitAll submits fns in order, each from its own goroutine, while the
// writer is blocked, then releases the writer and returns their errors and
// the number of COMMITs they took.
func submitAll(t *testing.T, db *DB, fns ...txFunc) ([]error, int64) {
	t.Helper()
	return submitJobs(t, db, false, fns...)
}

// submitJobs is submitAll with a choice of savepoint-free single jobs.
func submitJobs(t *testing.T, db *DB, single bool, fns ...txFunc) ([]error, int64) {
	t.Helper()
	release := blockWriter(t, db)
	before := db.writer.batches.Load()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			if single {
				errs[i] = db.writer.submitSingle(context.Background(), fn)
			} else {
				errs[i] = db.writer.submit(context.Background(), fn)
			}
		})
		// One at a time, so that the batch runs them in this order.
		for len(db.writer.jobs) < i+1 {
			runtime.Gosched()
		}
	}
	release()
	wg.Wait()
	return errs, db.writer.batches.Load() - before - 1
}

func createBusiness(b *payd.Business) txFunc {
	return func(ctx context.Context, q *queries) error { return q.CreateBusiness(ctx, b) }
}

func newTestBusiness(t *testing.T) *payd.Business {
	b, err := payd.NewBusiness("Writer Ltd", "w@example.com", false, clock.Real{}.Now())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantStored(t *testing.T, db *DB, b *payd.Business, want bool) {
	t.Helper()
	_, err := db.BusinessByID(t.Context(), b.ID)
	if got := err == nil; got != want || (err != nil && !payd.IsNotFound(err)) {
		t.Fatalf("business %s stored = %v (%v), want %v", b.ID, got, err, want)
	}
}

func TestWriterGroupCommitIsolatesFailures(t *testing.T) {
	db := openWriterTest(t)
	ok1, ok2, failed, panicked := newTestBusiness(t), newTestBusiness(t), newTestBusiness(t), newTestBusiness(t)
	errs, commits := submitAll(t, db,
		createBusiness(ok1),
		func(ctx context.Context, q *queries) error {
			if err := q.CreateBusiness(ctx, failed); err != nil {
				return err
			}
			return errBoom
		},
		func(ctx context.Context, q *queries) error {
			if err := q.CreateBusiness(ctx, panicked); err != nil {
				return err
			}
			panic("boom")
		},
		func(ctx context.Context, q *queries) error {
			// A later job of the batch reads an earlier one's write.
			if _, err := q.BusinessByID(ctx, ok1.ID); err != nil {
				return err
			}
			return q.CreateBusiness(ctx, ok2)
		},
	)
	if commits != 1 {
		t.Fatalf("the batch took %d COMMITs, want 1", commits)
	}
	var pe panicError
	if errs[0] != nil || !errors.Is(errs[1], errBoom) || !errors.As(errs[2], &pe) || errs[3] != nil {
		t.Fatalf("errors = %v", errs)
	}
	wantStored(t, db, ok1, true)
	wantStored(t, db, ok2, true)
	wantStored(t, db, failed, false)
	wantStored(t, db, panicked, false)
}

// TestWriterSingleJobs checks the savepoint-free path of store methods'
// own writes: a conflict fails alone and the batch commits; any other
// error is taken to have broken the transaction, so the jobs before it run
// again (isolated, then once more after the break) and are stored once.
func TestWriterSingleJobs(t *testing.T) {
	db := openWriterTest(t)
	a, b, c := newTestBusiness(t), newTestBusiness(t), newTestBusiness(t)
	errs, commits := submitJobs(t, db, true, createBusiness(a), createBusiness(a), createBusiness(b))
	if commits != 1 || errs[0] != nil || payd.ErrorCode(errs[1]) != payd.ErrConflict || errs[2] != nil {
		t.Fatalf("commits %d, errors %v", commits, errs)
	}
	wantStored(t, db, a, true)
	wantStored(t, db, b, true)
	runs := 0
	errs, _ = submitJobs(t, db, true,
		func(ctx context.Context, q *queries) error { runs++; return q.CreateBusiness(ctx, c) },
		func(context.Context, *queries) error { return errBoom },
	)
	if errs[0] != nil || !errors.Is(errs[1], errBoom) || runs != 3 {
		t.Fatalf("errors %v, first job ran %d times, want 3", errs, runs)
	}
	wantStored(t, db, c, true)
}

// TestWriterCommitFailureFailsTheBatch makes COMMIT itself fail, with a
// foreign key checked only at commit: every job that had succeeded gets
// that error, a job that had failed keeps its own.
func TestWriterCommitFailureFailsTheBatch(t *testing.T) {
	db := openWriterTest(t)
	ok := newTestBusiness(t)
	errs, _ := submitAll(t, db,
		createBusiness(ok),
		func(ctx context.Context, q *queries) error {
			if _, err := q.ex.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
				return err
			}
			_, k := payd.NewAPIKey("biz_missing", payd.KeySecret, payd.ModeLive, nil, clock.Real{}.Now())
			return q.CreateAPIKey(ctx, k)
		},
		func(context.Context, *queries) error { return errBoom },
	)
	if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() || !errors.Is(errs[2], errBoom) {
		t.Fatalf("errors = %v; want the COMMIT error twice, then boom", errs)
	}
	wantStored(t, db, ok, false)
}

// TestWriterBrokenTransactionRerunsTheOthers ends the batch's transaction
// under the other jobs, without failing: the job that broke it fails, the
// others run again in a new transaction and commit. The job before it runs
// three times: bare, isolated, and isolated again after the break.
func TestWriterBrokenTransactionRerunsTheOthers(t *testing.T) {
	db := openWriterTest(t)
	before, after := newTestBusiness(t), newTestBusiness(t)
	var runs sync.Map
	count := func(b *payd.Business) txFunc {
		return func(ctx context.Context, q *queries) error {
			n, _ := runs.LoadOrStore(b.ID, new(int))
			*n.(*int)++
			return q.CreateBusiness(ctx, b)
		}
	}
	errs, _ := submitAll(t, db,
		count(before),
		func(ctx context.Context, q *queries) error {
			_, err := q.ex.ExecContext(ctx, "ROLLBACK")
			return err
		},
		count(after),
	)
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("errors = %v; want only the breaking job to fail", errs)
	}
	wantStored(t, db, before, true)
	wantStored(t, db, after, true)
	if n, _ := runs.Load(before.ID); *n.(*int) != 3 {
		t.Fatalf("the job before the break ran %d times, want 3", *n.(*int))
	}
}

// TestWriterRefusesACommitInsideAJob checks that a job cannot make the jobs
// before it durable: its COMMIT is rolled back instead, so that running
// them again stores them once.
func TestWriterRefusesACommitInsideAJob(t *testing.T) {
	db := openWriterTest(t)
	before, after := newTestBusiness(t), newTestBusiness(t)
	errs, _ := submitAll(t, db,
		createBusiness(before),
		func(ctx context.Context, q *queries) error {
			_, _ = q.ex.ExecContext(ctx, "COMMIT") // its error ignored, as careless code might
			return nil
		},
		createBusiness(after),
	)
	if errs[0] != nil || !errors.Is(errs[1], errTxEnded) || errs[2] != nil {
		t.Fatalf("errors = %v; want only the committing job to fail", errs)
	}
	wantStored(t, db, before, true)
	wantStored(t, db, after, true)
}

// TestWriterRefusesWritesAfterAJobEndedItsTransaction checks that a write a
// job makes after its transaction ended, which SQLite would run on its own
// and commit, is rolled back instead.
func TestWriterRefusesWritesAfterAJobEndedItsTransaction(t *testing.T) {
	db := openWriterTest(t)
	before, stray, after := newTestBusiness(t), newTestBusiness(t), newTestBusiness(t)
	errs, _ := submitAll(t, db,
		createBusiness(before),
		func(ctx context.Context, q *queries) error {
			_, _ = q.ex.ExecContext(ctx, "ROLLBACK")
			_ = q.CreateBusiness(ctx, stray) // its error ignored, as careless code might
			return nil
		},
		createBusiness(after),
	)
	if errs[0] != nil || !errors.Is(errs[1], errTxEnded) || errs[2] != nil {
		t.Fatalf("errors = %v; want only the job that ended its transaction to fail", errs)
	}
	wantStored(t, db, before, true)
	wantStored(t, db, stray, false)
	wantStored(t, db, after, true)
}

// TestWriterRunsJobsBareUnlessOneFails counts how often each job of a batch
// runs: once while all succeed; when a job fails, the jobs before it run
// once more, the batch now isolated in savepoints, except when the failed
// job ran first: nothing else had run in the transaction, so its error
// stands and the others run bare.
func TestWriterRunsJobsBareUnlessOneFails(t *testing.T) {
	db := openWriterTest(t)
	var runs sync.Map
	count := func(b *payd.Business, fail bool) txFunc {
		return func(ctx context.Context, q *queries) error {
			n, _ := runs.LoadOrStore(b.ID, new(int))
			*n.(*int)++
			if err := q.CreateBusiness(ctx, b); err != nil || !fail {
				return err
			}
			return errBoom
		}
	}
	ran := func(b *payd.Business) int {
		n, _ := runs.Load(b.ID)
		return *n.(*int)
	}
	for _, tc := range []struct {
		name     string
		failing  int   // index of the failing job, -1 for none
		wantRuns []int // of each job
	}{{"none fails", -1, []int{1, 1, 1}}, {"the first fails", 0, []int{1, 1, 1}}, {"a later one fails", 1, []int{2, 2, 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			bs := []*payd.Business{newTestBusiness(t), newTestBusiness(t), newTestBusiness(t)}
			fns := make([]txFunc, len(bs))
			for i, b := range bs {
				fns[i] = count(b, i == tc.failing)
			}
			errs, commits := submitAll(t, db, fns...)
			if commits != 1 {
				t.Fatalf("the batch took %d COMMITs, want 1", commits)
			}
			for i, b := range bs {
				if i == tc.failing {
					if !errors.Is(errs[i], errBoom) {
						t.Fatalf("job %d: %v, want boom", i, errs[i])
					}
					wantStored(t, db, b, false)
					continue
				}
				if errs[i] != nil || ran(b) != tc.wantRuns[i] {
					t.Fatalf("job %d: %v, ran %d times, want %d", i, errs[i], ran(b), tc.wantRuns[i])
				}
				wantStored(t, db, b, true)
			}
		})
	}
}

// TestSQLiteStatementJournalSpills writes one statement whose statement
// journal outgrows stmtJournalSpill, so that SQLite moves it from memory to
// a file in the middle of a transaction: that move writes the in-memory
// chunk in one call, which fails when the chunk is 128 KiB or more.
func TestSQLiteStatementJournalSpills(t *testing.T) {
	if sqliteConfigErr != nil {
		t.Fatal(sqliteConfigErr)
	}
	db := openWriterTest(t)
	ctx := t.Context()
	pad := strings.Repeat("x", 1000)
	err := db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
		_, err := q.ex.ExecContext(ctx, `CREATE TABLE spill (id INTEGER PRIMARY KEY, pad TEXT);
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
			INSERT INTO spill SELECT i, $1 FROM n`, pad)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// About 1,500 pages (6 MB), each copied to the journal before it changes.
	err = db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
		_, err := q.ex.ExecContext(ctx, `SAVEPOINT spill; UPDATE spill SET pad = upper(pad); RELEASE spill`)
		return err
	})
	if err != nil {
		t.Fatalf("a statement whose journal spills: %v", err)
	}
}

func TestWriterSkipsJobsWhoseContextIsDone(t *testing.T) {
	db := openWriterTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	release := blockWriter(t, db)
	done := make(chan error)
	go func() {
		done <- db.writer.submit(ctx, func(context.Context, *queries) error { ran = true; return nil })
	}()
	for len(db.writer.jobs) < 1 {
		runtime.Gosched()
	}
	cancel()
	release()
	if err := <-done; !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("cancelled job: %v, ran = %v", err, ran)
	}
}

func TestWriterCloseDrainsQueuedJobs(t *testing.T) {
	db := openWriterTest(t)
	release := blockWriter(t, db)
	queued := newTestBusiness(t)
	done := make(chan error)
	go func() { done <- db.writer.submit(context.Background(), createBusiness(queued)) }()
	for len(db.writer.jobs) < 1 {
		runtime.Gosched()
	}
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	release()
	if err := <-done; err != nil {
		t.Fatalf("queued job: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := db.CreateBusiness(t.Context(), newTestBusiness(t)); !errors.Is(err, errClosed) {
		t.Fatalf("write after Close = %v, want errClosed", err)
	}
	reopened, err := Open(t.Context(), db.path, clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	wantStored(t, reopened, queued, true)
}

// TestSQLiteSettingsInForce reads the settings back from the connections
// themselves: durability rests on them, and a typo in a DSN is silent.
func TestSQLiteSettingsInForce(t *testing.T) {
	db := openWriterTest(t)
	want := map[string]string{"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "5000", "wal_autocheckpoint": "0"}
	for pragma, v := range want {
		var got string
		if err := db.writerConn.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != v {
			t.Errorf("writer %s = %q (%v), want %q", pragma, got, err, v)
		}
	}
	for pragma, v := range map[string]string{"query_only": "1", "synchronous": "2", "foreign_keys": "1"} {
		var got string
		if err := db.read.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != v {
			t.Errorf("reader %s = %q (%v), want %q", pragma, got, err, v)
		}
	}
}

// TestWriterFinishesCheckpointsOfALargeWAL checks when the writer stops to
// finish a background checkpoint (which every request in flight waits
// for): only once the WAL holds walRestartBytes, not at every tick.
func TestWriterFinishesCheckpointsOfALargeWAL(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), clk, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := int64(walRestartBytes / (4096 + walFrameHeader)); db.ckpt.restartFrames.Load() != want {
		t.Fatalf("restartFrames = %d, want %d", db.ckpt.restartFrames.Load(), want)
	}
	// tick runs one background pass and then a write, between whose batch
	// and the next the writer acts on it; it returns the writer's count of
	// finished checkpoints.
	tick := func() int64 {
		t.Helper()
		passes := db.ckpt.passes.Load()
		clk.Advance(checkpointEvery)
		for db.ckpt.passes.Load() == passes {
			runtime.Gosched()
		}
		for range 2 {
			if err := db.writer.submit(t.Context(), createBusiness(newTestBusiness(t))); err != nil {
				t.Fatal(err)
			}
		}
		return db.writer.tails.Load()
	}
	if n := tick(); n != 0 {
		t.Fatalf("a small WAL made the writer finish %d checkpoints", n)
	}
	db.ckpt.restartFrames.Store(1)
	if n := tick(); n != 1 {
		t.Fatalf("a large WAL made the writer finish %d checkpoints, want 1", n)
	}
}

// TestSQLitePageCacheTempKey writes rows at random places of an index, so
// that SQLite rebalances pages and swaps their numbers through the lock-byte
// page's (see rekeyPage): the page cache's largest key must be put back
// each time, and the database stay intact, through commits and through a
// rolled-back transaction that grew the file (whose pages the cache must
// then really drop).
func TestSQLitePageCacheTempKey(t *testing.T) {
	if sqliteConfigErr != nil {
		t.Fatal(sqliteConfigErr)
	}
	db := openWriterTest(t)
	ctx := t.Context()
	exec := func(sql string, args ...any) error {
		return db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
			_, err := q.ex.ExecContext(ctx, sql, args...)
			return err
		})
	}
	if err := exec(`CREATE TABLE scatter (k TEXT NOT NULL PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	before := tempKeysUndone.Load()
	const batches, rows = 100, 100
	for range batches {
		err := db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
			for range rows {
				if _, err := q.ex.ExecContext(ctx, `INSERT INTO scatter VALUES ($1, $2)`, payd.RandomString(24), strings.Repeat("v", 100)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if tempKeysUndone.Load() == before {
		t.Fatal("no page took the temporary number: the test no longer exercises rekeyPage")
	}
	errGrown := errors.New("grown, then undone")
	err := db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
		for range 2 * rows {
			if _, err := q.ex.ExecContext(ctx, `INSERT INTO scatter VALUES ($1, $2)`, payd.RandomString(24), strings.Repeat("w", 1000)); err != nil {
				return err
			}
		}
		return errGrown
	})
	if !errors.Is(err, errGrown) {
		t.Fatalf("the growing job: %v", err)
	}
	if err := exec(`INSERT INTO scatter VALUES ('last', 'v')`); err != nil {
		t.Fatal(err)
	}
	var n int
	var check string
	err = db.writer.submit(ctx, func(ctx context.Context, q *queries) error {
		if err := q.ex.QueryRowContext(ctx, `SELECT count(*) FROM scatter`).Scan(&n); err != nil {
			return err
		}
		return q.ex.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check)
	})
	if err != nil || n != batches*rows+1 || check != "ok" {
		t.Fatalf("%d rows (want %d), integrity_check %q, %v", n, batches*rows+1, check, err)
	}
}
