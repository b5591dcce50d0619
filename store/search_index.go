package store

import (
	"context"
	"log/slog"
	"strings"
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

// reindex rebuilds the entries of the given objects of one kind with a
// handful of statements for the whole batch. On SQLite that matters beyond
// the round trips: FTS5 writes its pending terms to disk as a new segment
// at every statement of a transaction that holds savepoints, so a row at a
// time left thousands of tiny segments to merge.
func (q *queries) reindex(ctx context.Context, kind payd.SearchKind, ids []string) error {
	ids = uniqueStrings(ids)
	if len(ids) == 0 {
		return nil
	}
	docs, err := q.loadSearchDocs(ctx, kind, ids)
	if err != nil {
		return err
	}
	old, err := q.storedSearchDocs(ctx, kind, ids)
	if err != nil {
		return err
	}
	var drop []storedDoc
	var add []searchDoc
	var requeue []searchDoc
	for _, id := range ids {
		d, exists := docs[id]
		o, had := old[id]
		if had && exists && o.doc == d.doc && o.keys == d.keys {
			continue
		}
		if had {
			drop = append(drop, o)
		}
		if exists {
			add = append(add, d)
			if had && kind == payd.SearchCustomer {
				requeue = append(requeue, d)
			}
		}
	}
	if err := q.dropSearchDocs(ctx, kind, drop); err != nil {
		return err
	}
	if err := q.insertSearchDocs(ctx, kind, add); err != nil {
		return err
	}
	for _, d := range requeue {
		// The customer's name and email are part of its payments' entries.
		_, err = q.ex.ExecContext(ctx, `INSERT INTO search_queue (business_id, kind, id)
			SELECT business_id, 'payment', id FROM payments WHERE business_id = $1 AND customer_id = $2`, d.businessID, d.id)
		if err != nil {
			return err
		}
	}
	return nil
}

// uniqueStrings returns ids without repeats, in first-seen order.
func uniqueStrings(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// searchRowsPerStatement bounds a multi-row statement. Both databases
// would take far more parameters, but modernc's SQLite looks each one up
// by name in a list, so a statement's binding cost grows with the square
// of its parameters.
const searchRowsPerStatement = 100

// chunks calls fn with successive slices of at most searchRowsPerStatement
// of n items: fn(i, j) covers [i, j).
func chunks(n int, fn func(i, j int) error) error {
	for i := 0; i < n; i += searchRowsPerStatement {
		if err := fn(i, min(n, i+searchRowsPerStatement)); err != nil {
			return err
		}
	}
	return nil
}

// storedDoc is what search_docs holds for an object.
type storedDoc struct {
	seq       int64
	id        string
	doc, keys string
}

// storedSearchDocs returns the stored entries of the given objects by id.
func (q *queries) storedSearchDocs(ctx context.Context, kind payd.SearchKind, ids []string) (map[string]storedDoc, error) {
	out := make(map[string]storedDoc, len(ids))
	err := chunks(len(ids), func(i, j int) error {
		args := sqlArgs{kind}
		marks := make([]string, 0, j-i)
		for _, id := range ids[i:j] {
			marks = append(marks, args.add(id))
		}
		rows, err := q.ex.QueryContext(ctx, `SELECT seq, id, doc, keys FROM search_docs WHERE kind = $1 AND id IN (`+
			strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o storedDoc
			if err := rows.Scan(&o.seq, &o.id, &o.doc, &o.keys); err != nil {
				return err
			}
			out[o.id] = o
		}
		return rows.Err()
	})
	return out, err
}

// dropSearchDocs removes stored entries with their trigram rows and keys.
func (q *queries) dropSearchDocs(ctx context.Context, kind payd.SearchKind, old []storedDoc) error {
	return chunks(len(old), func(i, j int) error {
		var fts, keys, docs sqlArgs
		var ftsRows, keyMarks, docMarks []string
		keys.add(kind)
		for _, o := range old[i:j] {
			ftsRows = append(ftsRows, "('delete', "+fts.add(o.seq)+", "+fts.add(o.doc)+")")
			keyMarks = append(keyMarks, keys.add(o.id))
			docMarks = append(docMarks, docs.add(o.seq))
		}
		if q.dialect == dialectSQLite {
			_, err := q.ex.ExecContext(ctx, `INSERT INTO search_fts (search_fts, rowid, doc) VALUES `+strings.Join(ftsRows, ", "), fts...)
			if err != nil {
				return err
			}
		}
		if _, err := q.ex.ExecContext(ctx, `DELETE FROM search_keys WHERE kind = $1 AND id IN (`+strings.Join(keyMarks, ", ")+`)`, keys...); err != nil {
			return err
		}
		_, err := q.ex.ExecContext(ctx, `DELETE FROM search_docs WHERE seq IN (`+strings.Join(docMarks, ", ")+`)`, docs...)
		return err
	})
}

// insertSearchDocs stores entries of one kind, their trigram index rows and
// their keys.
func (q *queries) insertSearchDocs(ctx context.Context, kind payd.SearchKind, add []searchDoc) error {
	if len(add) == 0 {
		return nil
	}
	// On SQLite each kind's entries take their seq (the FTS5 rowid) from
	// the kind's own range (kindSeqs), and the writer is the only one, so
	// the entries inserted now are exactly those after the kind's highest
	// seq: one statement indexes them all.
	var last, seqHi int64
	if q.dialect == dialectSQLite {
		lo, hi := kindSeqs(kind)
		seqHi = hi
		if err := q.ex.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), $1) FROM search_docs WHERE seq BETWEEN $1 AND $2`, lo, hi).Scan(&last); err != nil {
			return err
		}
	}
	err := chunks(len(add), func(i, j int) error {
		var args sqlArgs
		rows := make([]string, 0, j-i)
		for n, d := range add[i:j] {
			seq := "DEFAULT"
			if q.dialect == dialectSQLite {
				seq = args.add(last + int64(i+n) + 1)
			}
			rows = append(rows, "("+seq+", "+args.add(d.businessID)+", "+args.add(d.kind)+", "+args.add(d.id)+", "+
				args.add(d.createdAt)+", "+args.add(d.doc)+", "+args.add(d.keys)+")")
		}
		_, err := q.ex.ExecContext(ctx, `INSERT INTO search_docs (seq, business_id, kind, id, created_at, doc, keys) VALUES `+
			strings.Join(rows, ", "), args...)
		return err
	})
	if err != nil {
		return err
	}
	if q.dialect == dialectSQLite {
		_, err := q.ex.ExecContext(ctx, `INSERT INTO search_fts (rowid, doc) SELECT seq, doc FROM search_docs WHERE seq > $1 AND seq <= $2`, last, seqHi)
		if err != nil {
			return err
		}
	}
	return q.insertSearchKeys(ctx, add)
}

// insertSearchKeys stores the exact keys of entries.
func (q *queries) insertSearchKeys(ctx context.Context, docs []searchDoc) error {
	type key struct {
		d *searchDoc
		k string
	}
	var keys []key
	for i := range docs {
		for _, k := range docs[i].keyList() {
			keys = append(keys, key{&docs[i], k})
		}
	}
	return chunks(len(keys), func(i, j int) error {
		var args sqlArgs
		rows := make([]string, 0, j-i)
		for _, k := range keys[i:j] {
			rows = append(rows, "("+args.add(k.d.businessID)+", "+args.add(k.k)+", "+args.add(k.d.kind)+", "+
				args.add(k.d.createdAt)+", "+args.add(k.d.id)+")")
		}
		_, err := q.ex.ExecContext(ctx, `INSERT INTO search_keys (business_id, key, kind, created_at, id) VALUES `+
			strings.Join(rows, ", "), args...)
		return err
	})
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
type SearchIndexer struct{ batchLoop }

// NewSearchIndexer returns a stopped indexer over st.
func NewSearchIndexer(st payd.SearchStore, clk clock.Clock, log *slog.Logger) *SearchIndexer {
	return &SearchIndexer{batchLoop{what: "search indexing", every: searchIndexEvery, batch: searchIndexBatch,
		job: st.IndexSearch, clock: clk, log: log}}
}
