package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the cache; payd's statements are fixed strings, so
// the bound only matters if one is ever built on the fly.
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
	stmts map[string]*sql.Stmt
}

func newStmtCache(p preparer, detach bool) *stmtCache {
	return &stmtCache{p: p, detach: detach, stmts: map[string]*sql.Stmt{}}
}

// stmt returns the prepared statement for query, or nil when it cannot be
// cached, in which case the caller runs the query unprepared.
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s
	}
	if len(c.stmts) >= maxCachedStmts {
		return nil
	}
	s, err := c.p.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared run reports the error
	}
	c.stmts[query] = s
	return s
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
	if s := c.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.p.ExecContext(ctx, query, args...)
}

// QueryContext runs a query through the cache.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = c.ctx(ctx)
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.p.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query through the cache.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = c.ctx(ctx)
	if s := c.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.p.QueryRowContext(ctx, query, args...)
}

// close releases every prepared statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.stmts {
		_ = s.Close()
		delete(c.stmts, q)
	}
}
