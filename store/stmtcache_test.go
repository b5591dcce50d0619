package store

import (
	"fmt"
	"testing"
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
