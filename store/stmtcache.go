package store

import (
	"container/list"
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the cache. Most of payd's statements are fixed
// strings, but filters and batches build some on the fly (an IN list per
// batch size), so the least recently used statement makes room for a new
// one rather than the cache filling once and never taking another.
const maxCachedStmts = 512

// preparer is a connection or pool that can prepare statements.
type preparer interface {
	execer
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache prepares each distinct statement once and reuses it. modernc's
// SQLite parses a statement on every call otherwise, and parsing was a
// quarter of the writer's time under load (the idempotency claim's upsert
// most of all).
type stmtCache struct {
	p preparer
	// detach runs statements without the caller's cancellation (the
	// writer's connection, where an interrupted statement would roll back
	// the whole batch).
	detach bool

	mu    sync.Mutex
	stmts map[string]*list.Element // of *cachedStmt
	lru   list.List                // front: most recently used
}

// cachedStmt is a prepared statement and how many calls are using it: an
// evicted statement is closed when the last of them ends. (Rows a query
// returned keep their statement open by themselves until they are closed.)
type cachedStmt struct {
	query   string
	stmt    *sql.Stmt
	users   int
	evicted bool
}

func newStmtCache(p preparer, detach bool) *stmtCache {
	return &stmtCache{p: p, detach: detach, stmts: map[string]*list.Element{}}
}

// acquire returns the prepared statement for query, or nil when it cannot
// be prepared, in which case the caller runs the query unprepared (and
// that run reports the error). Every non-nil result must be released.
func (c *stmtCache) acquire(ctx context.Context, query string) *cachedStmt {
	if cs := c.cached(query); cs != nil {
		return cs
	}
	// Prepare without the lock: on the read pool, preparing waits for a
	// free connection, and the callers holding the connections take the
	// lock (release) before they give them back, so holding it here would
	// stall every reader until the caller's context ends.
	s, err := c.p.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.stmts[query]; ok { // another caller prepared it meanwhile
		_ = s.Close()
		return c.useLocked(e)
	}
	if c.lru.Len() >= maxCachedStmts {
		c.evictLocked(c.lru.Back())
	}
	cs := &cachedStmt{query: query, stmt: s, users: 1}
	c.stmts[query] = c.lru.PushFront(cs)
	return cs
}

// cached returns the prepared statement for query if the cache holds it,
// counting one more use.
func (c *stmtCache) cached(query string) *cachedStmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.stmts[query]; ok {
		return c.useLocked(e)
	}
	return nil
}

// useLocked marks e most recently used and counts one more use of it.
func (c *stmtCache) useLocked(e *list.Element) *cachedStmt {
	c.lru.MoveToFront(e)
	cs := e.Value.(*cachedStmt)
	cs.users++
	return cs
}

// release ends one use of cs.
func (c *stmtCache) release(cs *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs.users--
	if cs.evicted && cs.users == 0 {
		_ = cs.stmt.Close()
	}
}

// evictLocked drops e from the cache, closing its statement unless a call
// is using it.
func (c *stmtCache) evictLocked(e *list.Element) {
	cs := c.lru.Remove(e).(*cachedStmt)
	delete(c.stmts, cs.query)
	cs.evicted = true
	if cs.users == 0 {
		_ = cs.stmt.Close()
	}
}

func (c *stmtCache) ctx(ctx context.Context) context.Context {
	if c.detach {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// ExecContext runs a statement through the cache.
func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = c.ctx(ctx)
	if cs := c.acquire(ctx, query); cs != nil {
		defer c.release(cs)
		return cs.stmt.ExecContext(ctx, args...)
	}
	return c.p.ExecContext(ctx, query, args...)
}

// QueryContext runs a query through the cache.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = c.ctx(ctx)
	if cs := c.acquire(ctx, query); cs != nil {
		defer c.release(cs)
		return cs.stmt.QueryContext(ctx, args...)
	}
	return c.p.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query through the cache.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = c.ctx(ctx)
	if cs := c.acquire(ctx, query); cs != nil {
		defer c.release(cs)
		return cs.stmt.QueryRowContext(ctx, args...)
	}
	return c.p.QueryRowContext(ctx, query, args...)
}

// close releases every prepared statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.evictLocked(c.lru.Back())
	}
}
