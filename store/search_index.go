package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"payd"
	"payd/clock"
)

// The search indexer (docs/search.md). Triggers put every created, changed
// or deleted payment, customer and link in search_queue; IndexSearch takes
// a batch of it, rebuilds those objects' entries in Go and writes them with
// the trigram index, all in one write transaction, away from the request
// that made the change. Until then a search reads the queued objects from
// their own tables, so results never lag.

// IndexSearch brings up to max queued objects into the search index and
// returns how many queue entries it handled.
func (db *DB) IndexSearch(ctx context.Context, max int) (n int, err error) {
	err = db.transact(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.IndexSearch(ctx, max)
		return err
	})
	return n, err
}

// queueEntry is one row of search_queue.
type queueEntry struct {
	seq        int64
	businessID string
	kind       payd.SearchKind
	id         string
}

// IndexSearch indexes up to max queue entries in the current transaction.
func (q *queries) IndexSearch(ctx context.Context, max int) (_ int, err error) {
	defer fail(&err, "search queue", "store.IndexSearch")
	entries, err := q.claimSearchQueue(ctx, max)
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	byKind := map[payd.SearchKind][]string{}
	for _, e := range entries {
		byKind[e.kind] = append(byKind[e.kind], e.id)
	}
	for _, kind := range payd.SearchKinds {
		if err := q.reindex(ctx, kind, byKind[kind]); err != nil {
			return 0, err
		}
	}
	return len(entries), q.deleteSearchQueue(ctx, entries)
}

// claimSearchQueue returns the oldest queue entries; on PostgreSQL it locks
// them, skipping entries another replica's indexer holds.
func (q *queries) claimSearchQueue(ctx context.Context, max int) ([]queueEntry, error) {
	query := `SELECT seq, business_id, kind, id FROM search_queue ORDER BY seq LIMIT $1`
	if q.dialect == dialectPostgres {
		query += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := q.ex.QueryContext(ctx, query, max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []queueEntry
	for rows.Next() {
		var e queueEntry
		if err := rows.Scan(&e.seq, &e.businessID, &e.kind, &e.id); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// deleteSearchQueue removes the handled entries, by seq: an object changed
// again meanwhile has a newer entry, which stays.
func (q *queries) deleteSearchQueue(ctx context.Context, entries []queueEntry) error {
	var args sqlArgs
	marks := make([]string, len(entries))
	for i, e := range entries {
		marks[i] = args.add(e.seq)
	}
	_, err := q.ex.ExecContext(ctx, `DELETE FROM search_queue WHERE seq IN (`+strings.Join(marks, ", ")+`)`, args...)
	return err
}

// reindex rebuilds the entries of the given objects of one kind.
func (q *queries) reindex(ctx context.Context, kind payd.SearchKind, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	docs, err := q.loadSearchDocs(ctx, kind, ids)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		d, ok := docs[id]
		if err := q.storeSearchDoc(ctx, kind, id, d, ok); err != nil {
			return err
		}
	}
	return nil
}

// storedDoc is what search_docs holds for an object.
type storedDoc struct {
	seq       int64
	doc, keys string
}

// storeSearchDoc writes an object's entry (exists) or removes it.
func (q *queries) storeSearchDoc(ctx context.Context, kind payd.SearchKind, id string, d searchDoc, exists bool) error {
	var old storedDoc
	err := q.ex.QueryRowContext(ctx, `SELECT seq, doc, keys FROM search_docs WHERE kind = $1 AND id = $2`,
		kind, id).Scan(&old.seq, &old.doc, &old.keys)
	had := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if had && exists && old.doc == d.doc && old.keys == d.keys {
		return nil
	}
	if had {
		if err := q.dropSearchDoc(ctx, kind, id, old); err != nil {
			return err
		}
	}
	if !exists {
		return nil
	}
	if err := q.insertSearchDoc(ctx, d); err != nil {
		return err
	}
	if !had || kind != payd.SearchCustomer {
		return nil
	}
	// The customer's name and email are part of its payments' entries.
	_, err = q.ex.ExecContext(ctx, `INSERT INTO search_queue (business_id, kind, id)
		SELECT business_id, 'payment', id FROM payments WHERE business_id = $1 AND customer_id = $2`, d.businessID, id)
	return err
}

// dropSearchDoc removes an object's stored entry and its keys.
func (q *queries) dropSearchDoc(ctx context.Context, kind payd.SearchKind, id string, old storedDoc) error {
	if q.dialect == dialectSQLite {
		_, err := q.ex.ExecContext(ctx, `INSERT INTO search_fts (search_fts, rowid, doc) VALUES ('delete', $1, $2)`, old.seq, old.doc)
		if err != nil {
			return err
		}
	}
	if _, err := q.ex.ExecContext(ctx, `DELETE FROM search_keys WHERE kind = $1 AND id = $2`, kind, id); err != nil {
		return err
	}
	_, err := q.ex.ExecContext(ctx, `DELETE FROM search_docs WHERE seq = $1`, old.seq)
	return err
}

// insertSearchDoc stores an entry, its trigram index row and its keys.
func (q *queries) insertSearchDoc(ctx context.Context, d searchDoc) error {
	var seq int64
	err := q.ex.QueryRowContext(ctx, `INSERT INTO search_docs (business_id, kind, id, created_at, doc, keys)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq`, d.businessID, d.kind, d.id, d.createdAt, d.doc, d.keys).Scan(&seq)
	if err != nil {
		return err
	}
	if q.dialect == dialectSQLite {
		if _, err := q.ex.ExecContext(ctx, `INSERT INTO search_fts (rowid, doc) VALUES ($1, $2)`, seq, d.doc); err != nil {
			return err
		}
	}
	for _, k := range d.keyList() {
		_, err := q.ex.ExecContext(ctx, `INSERT INTO search_keys (business_id, key, kind, created_at, id)
			VALUES ($1, $2, $3, $4, $5)`, d.businessID, k, d.kind, d.createdAt, d.id)
		if err != nil {
			return err
		}
	}
	return nil
}

// Indexer loop settings.
const (
	// searchIndexEvery is how often the indexer looks at the queue when
	// the previous run emptied it.
	searchIndexEvery = 250 * time.Millisecond
	// searchIndexBatch bounds one indexing transaction, which on SQLite
	// holds the single writer while it runs.
	searchIndexBatch = 128
)

// SearchIndexer is the background loop that keeps the search index
// current: Start it once per process; replicas on one PostgreSQL share the
// queue safely.
type SearchIndexer struct {
	db    payd.SearchStore
	clock clock.Clock
	log   *slog.Logger

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
}

// NewSearchIndexer returns a stopped indexer over st.
func NewSearchIndexer(st payd.SearchStore, clk clock.Clock, log *slog.Logger) *SearchIndexer {
	return &SearchIndexer{db: st, clock: clk, log: log}
}

// Start runs the loop until Stop or ctx ends. Starting twice is a no-op.
func (x *SearchIndexer) Start(ctx context.Context) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stop != nil {
		return
	}
	ctx, x.stop = context.WithCancel(ctx)
	x.done = make(chan struct{})
	go x.run(ctx, x.done)
}

// Stop ends the loop and waits for its current batch.
func (x *SearchIndexer) Stop() {
	x.mu.Lock()
	stop, done := x.stop, x.done
	x.stop = nil
	x.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// run indexes batch after batch while the queue is full, then waits a tick.
func (x *SearchIndexer) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := x.clock.NewTicker(searchIndexEvery)
	defer t.Stop()
	for {
		for x.RunOnce(ctx) == searchIndexBatch {
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// RunOnce indexes one batch and returns how many queue entries it handled;
// a failure is logged and retried on the next tick.
func (x *SearchIndexer) RunOnce(ctx context.Context) int {
	n, err := x.db.IndexSearch(ctx, searchIndexBatch)
	if err != nil && ctx.Err() == nil {
		x.log.WarnContext(ctx, "store: search indexing failed", "error", err)
	}
	return n
}
