package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// A cache full of statements built on the fly still takes new ones: the
// least recently used goes, and one evicted while its rows are being read
// keeps working until they are closed.
func TestStmtCacheEvictsLeastRecentlyUsed(t *testing.T) {
	db := openWriterTest(t)
	c := newStmtCache(db.read, false)
	defer c.close()
	ctx := t.Context()

	hot := "SELECT 1"
	rows, err := c.QueryContext(ctx, "SELECT value FROM json_each('[1,2,3]')")
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxCachedStmts + 100 {
		var n int
		if err := c.QueryRowContext(ctx, hot).Scan(&n); err != nil || n != 1 {
			t.Fatalf("hot statement: %d %v", n, err)
		}
		if _, err := c.ExecContext(ctx, fmt.Sprintf("SELECT %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.lru.Len(); got != maxCachedStmts || len(c.stmts) != got {
		t.Fatalf("cache holds %d statements (%d by query), want %d", got, len(c.stmts), maxCachedStmts)
	}
	if _, ok := c.stmts[hot]; !ok {
		t.Error("the statement used all along was evicted")
	}
	if _, ok := c.stmts[fmt.Sprintf("SELECT %d", maxCachedStmts+99)]; !ok {
		t.Error("the newest statement was not cached")
	}
	if _, ok := c.stmts["SELECT 0"]; ok {
		t.Error("the least recently used statement is still cached")
	}
	sum := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	if err := rows.Close(); err != nil || sum != 6 {
		t.Fatalf("rows of an evicted statement: sum %d, %v", sum, err)
	}
}

// A caller preparing a new statement while every read connection is busy
// must not hold the cache's lock meanwhile: the callers holding those
// connections take the lock to end their use of a statement before they
// give the connection back, so the pool would wait for itself until each
// caller's context ended. (A restarted payd serve hung its first
// concurrent reads that way until the clients gave up.)
func TestStmtCachePreparesWithoutTheLock(t *testing.T) {
	db := openWriterTest(t)
	c := newStmtCache(db.read, false)
	defer c.close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// Open rows hold all the read connections but one, as busy requests do.
	for range max(4, runtime.GOMAXPROCS(0)) - 1 {
		rows, err := c.QueryContext(ctx, "SELECT value FROM json_each('[1,2]')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
	}
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				var n int
				want := (g*50 + i) % 97 // new statements and cached ones, mixed
				if err := c.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", want)).Scan(&n); err != nil || n != want {
					errs <- fmt.Errorf("SELECT %d: %d, %v", want, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
