package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"payd"
)

// Search (spec 4.2, docs/search.md). The ranked result is nine segments:
// tiers 1–3, and within each the requested kinds in tie order, each segment
// newest first. A page walks the segments from the cursor's, asking each
// for what the page still needs:
//   - tier 1 is an exact key: one range of search_keys' primary key;
//   - tiers 2 and 3 first scan the newest searchWindow entries of the kind
//     and keep those that match, which fills a page at once for a query that
//     matches much; a window that finds some matches but too few for the page
//     is widened once, to what their density says a page needs (a broad
//     query's matches are spread thinly over the whole history); only a
//     query too rare for that goes to the trigram index, and then its
//     matches are few.
//
// Objects still in search_queue are left out of those queries and matched
// in Go from their own rows instead (searchTail).

// searchWindow is how many of a kind's newest entries a segment scans
// before it turns to the trigram index (2,000; a test lowers it to drive
// small fixtures through the index).
var searchWindow = func() *atomic.Int64 {
	var w atomic.Int64
	w.Store(2000)
	return &w
}()

// maxWindowGrowth bounds the widened window, as a multiple of searchWindow.
const maxWindowGrowth = 10

// Search returns one page of ranked hits, all read from one snapshot.
func (db *DB) Search(ctx context.Context, sq payd.SearchQuery) (hits []payd.SearchHit, err error) {
	if st := db.txFrom(ctx); st != nil {
		return st.q.Search(ctx, sq)
	}
	var opts *sql.TxOptions
	if db.dialect == dialectPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	q := &queries{ex: tx, dialect: db.dialect, clock: db.clock}
	return q.Search(ctx, sq)
}

// searchTerm is a query in the two forms it is compared in.
type searchTerm struct {
	// key is the folded query, compared with exact keys.
	key string
	// words is payd.SearchWords of the query; "" matches no document.
	words string
}

// newSearchTerm folds text.
func newSearchTerm(text string) searchTerm {
	return searchTerm{key: payd.SearchFold(strings.TrimSpace(text)), words: payd.SearchWords(text)}
}

// tier ranks an entry against the term; 0 means no match.
func (t searchTerm) tier(d searchDoc) int {
	switch {
	case t.key != "" && slices.Contains(d.keyList(), t.key):
		return payd.TierExact
	case t.words == "":
		return 0
	case strings.Contains(d.doc, " "+t.words):
		return payd.TierWord
	case strings.Contains(d.doc, t.words):
		return payd.TierAnywhere
	}
	return 0
}

// Search returns one page of ranked hits.
func (q *queries) Search(ctx context.Context, sq payd.SearchQuery) (hits []payd.SearchHit, err error) {
	defer fail(&err, "search", "store.Search")
	t := newSearchTerm(sq.Text)
	tail, err := q.searchTail(ctx, sq, t)
	if err != nil {
		return nil, err
	}
	found := &indexMatches{}
	for tier := payd.TierExact; tier <= payd.TierAnywhere; tier++ {
		for _, kind := range sq.Kinds {
			need := sq.Limit - len(hits)
			if need <= 0 {
				return hits, nil
			}
			after, skip := segmentAfter(sq.After, tier, kind)
			if skip {
				continue
			}
			seg := segment{biz: sq.BusinessID, term: t, tier: tier, kind: kind, after: after, need: need, found: found}
			got, err := q.searchSegment(ctx, seg)
			if err != nil {
				return nil, err
			}
			hits = append(hits, mergeTail(got, tail, seg)...)
		}
	}
	return hits, nil
}

// kindRank is a kind's place in the tie order.
func kindRank(k payd.SearchKind) int { return slices.Index(payd.SearchKinds, k) }

// segmentAfter says where a segment starts for a page after pos: skipped
// when the segment ranks before pos's, from pos within pos's own segment,
// and from its start after it.
func segmentAfter(pos *payd.SearchPosition, tier int, kind payd.SearchKind) (*payd.SearchPosition, bool) {
	if pos == nil {
		return nil, false
	}
	switch {
	case tier != pos.Tier:
		return nil, tier < pos.Tier
	case kind != pos.Kind:
		return nil, kindRank(kind) < kindRank(pos.Kind)
	}
	return pos, false
}

// segment is one tier and kind of a search, from after, need hits at most.
type segment struct {
	biz   string
	term  searchTerm
	tier  int
	kind  payd.SearchKind
	after *payd.SearchPosition
	need  int
	// found holds what the trigram index matched, shared by the
	// segments of one search.
	found *indexMatches
}

// ranksAfter reports whether a hit of the segment lies after its cursor.
func (s segment) ranksAfter(h payd.SearchHit) bool {
	if s.after == nil {
		return true
	}
	c := s.after.CreatedAt.UnixMicro()
	return h.CreatedAt.UnixMicro() < c || h.CreatedAt.UnixMicro() == c && h.ID < s.after.ID
}

// searchTail matches the business's queued objects, which the index may
// not hold yet or may hold as they were, in Go.
func (q *queries) searchTail(ctx context.Context, sq payd.SearchQuery, t searchTerm) ([]payd.SearchHit, error) {
	rows, err := q.ex.QueryContext(ctx, `SELECT DISTINCT kind, id FROM search_queue WHERE business_id = $1`, sq.BusinessID)
	if err != nil {
		return nil, err
	}
	ids := map[payd.SearchKind][]string{}
	for rows.Next() {
		var kind payd.SearchKind
		var id string
		if err := rows.Scan(&kind, &id); err != nil {
			rows.Close()
			return nil, err
		}
		ids[kind] = append(ids[kind], id)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	var hits []payd.SearchHit
	for _, kind := range sq.Kinds {
		docs, err := q.loadSearchDocs(ctx, kind, ids[kind])
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if tier := t.tier(d); tier > 0 && d.businessID == sq.BusinessID {
				hits = append(hits, payd.SearchHit{Tier: tier, Kind: kind, CreatedAt: fromMicros(d.createdAt), ID: d.id})
			}
		}
	}
	return hits, nil
}

// closeRows closes rows and returns the error that ended them, if any.
func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	rows.Close()
	return err
}

// mergeTail adds the segment's queued hits to what the index returned and
// keeps the first seg.need in rank order.
func mergeTail(got, tail []payd.SearchHit, seg segment) []payd.SearchHit {
	for _, h := range tail {
		if h.Tier == seg.tier && h.Kind == seg.kind && seg.ranksAfter(h) {
			got = append(got, h)
		}
	}
	slices.SortFunc(got, func(a, b payd.SearchHit) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return got[:min(len(got), seg.need)]
}

// searchSegment returns the indexed hits of one segment.
func (q *queries) searchSegment(ctx context.Context, s segment) ([]payd.SearchHit, error) {
	if s.tier == payd.TierExact {
		if s.term.key == "" {
			return nil, nil
		}
		return q.exactSegment(ctx, s)
	}
	if s.term.words == "" {
		return nil, nil
	}
	// The window of newest entries comes first, then the trigram
	// candidates (docs/search.md).
	pattern := ftsPattern(s)
	b := newSegmentSQL(s)
	window := searchWindow.Load()
	hits, err := q.segmentHits(ctx, s, b.window(window), b.args)
	if err != nil || len(hits) == s.need {
		return hits, err
	}
	if whole, err := q.windowIsWhole(ctx, s, window); err != nil || whole {
		return hits, err
	}
	if n := int64(len(hits)); n > 0 {
		// At the density the window found, half as many again as the page
		// needs: a broad query fills its page there without the index,
		// whose candidates would be all of its matches.
		need := int64(s.need)
		if wider := min(window*((need*3/2+n-1)/n), window*maxWindowGrowth); wider > window {
			window = wider
			if hits, err = q.segmentHits(ctx, s, b.window(window), b.args); err != nil || len(hits) == s.need {
				return hits, err
			}
			if whole, err := q.windowIsWhole(ctx, s, window); err != nil || whole {
				return hits, err
			}
		}
	}
	if pattern != "" {
		hits, ok, err := q.indexedSegment(ctx, s, pattern)
		if err != nil || ok {
			return hits, err
		}
		return q.segmentHits(ctx, s, b.indexed(q, pattern), b.args)
	}
	return q.segmentHits(ctx, s, b.scan(), b.args)
}

// exactSegment reads tier 1 of one kind from search_keys.
func (q *queries) exactSegment(ctx context.Context, s segment) ([]payd.SearchHit, error) {
	var args sqlArgs
	where := []string{"d.business_id = " + args.add(s.biz), "d.key = " + args.add(s.term.key),
		"d.kind = " + args.add(string(s.kind)), notQueued}
	where = append(where, afterSQL(s.after, &args)...)
	query := `SELECT d.id, d.created_at FROM search_keys d WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY d.created_at DESC, d.id DESC LIMIT ` + args.add(s.need)
	return q.segmentHits(ctx, s, query, args)
}

// notQueued leaves out objects a search matches from their own rows.
const notQueued = `NOT EXISTS (SELECT 1 FROM search_queue sq WHERE sq.kind = d.kind AND sq.id = d.id)`

// afterSQL is the keyset condition of a segment's cursor.
func afterSQL(after *payd.SearchPosition, args *sqlArgs) []string {
	if after == nil {
		return nil
	}
	c := args.add(after.CreatedAt.UnixMicro())
	return []string{"(d.created_at < " + c + " OR (d.created_at = " + c + " AND d.id < " + args.add(after.ID) + "))"}
}

// segmentHits runs a query returning (id, created_at) in rank order.
func (q *queries) segmentHits(ctx context.Context, s segment, query string, args []any) ([]payd.SearchHit, error) {
	return queryAll(ctx, q.ex, func(row rowScanner) (payd.SearchHit, error) {
		var created int64
		h := payd.SearchHit{Tier: s.tier, Kind: s.kind}
		err := row.Scan(&h.ID, &created)
		h.CreatedAt = fromMicros(created)
		return h, err
	}, query, args...)
}

// windowIsWhole reports whether the segment's window held every entry of
// the kind after the cursor, so that what it found is all there is.
func (q *queries) windowIsWhole(ctx context.Context, s segment, window int64) (bool, error) {
	var args sqlArgs
	where := []string{"d.business_id = " + args.add(s.biz), "d.kind = " + args.add(string(s.kind))}
	where = append(where, afterSQL(s.after, &args)...)
	var n int
	err := q.ex.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM search_docs d WHERE `+
		strings.Join(where, " AND ")+` LIMIT `+args.add(window+1)+`) w`, args...).Scan(&n)
	return n <= int(window), err
}

// segmentSQL builds the queries of a tier 2 or 3 segment.
type segmentSQL struct {
	args sqlArgs
	// scope selects the business's entries of the kind after the cursor;
	// match keeps those of the segment's tier.
	scope, match []string
	limit        string
	kind         payd.SearchKind
}

// newSegmentSQL builds the shared conditions of a segment.
func newSegmentSQL(s segment) *segmentSQL {
	b := &segmentSQL{kind: s.kind}
	b.scope = []string{"d.business_id = " + b.args.add(s.biz), "d.kind = " + b.args.add(string(s.kind))}
	b.scope = append(b.scope, afterSQL(s.after, &b.args)...)
	word := b.args.add("% " + s.term.words + "%")
	if s.tier == payd.TierWord {
		b.match = []string{"d.doc LIKE " + word}
	} else {
		b.match = []string{"d.doc LIKE " + b.args.add("%"+s.term.words+"%"), "d.doc NOT LIKE " + word}
	}
	b.match = append(b.match, notQueued)
	if s.term.key != "" {
		b.match = append(b.match, `NOT EXISTS (SELECT 1 FROM search_keys k WHERE k.business_id = d.business_id AND k.key = `+
			b.args.add(s.term.key)+` AND k.kind = d.kind AND k.created_at = d.created_at AND k.id = d.id)`)
	}
	b.limit = b.args.add(s.need)
	return b
}

const segmentOrder = ` ORDER BY d.created_at DESC, d.id DESC LIMIT `

// window matches within the newest n entries.
func (b *segmentSQL) window(n int64) string {
	return `SELECT d.id, d.created_at FROM (SELECT business_id, kind, id, created_at, doc FROM search_docs d WHERE ` +
		strings.Join(b.scope, " AND ") + segmentOrder + strconv.FormatInt(n, 10) + `) d WHERE ` +
		strings.Join(b.match, " AND ") + segmentOrder + b.limit
}

// scan matches every entry newest first, for a term too short for the
// trigram index.
func (b *segmentSQL) scan() string {
	return `SELECT d.id, d.created_at FROM search_docs d WHERE ` + strings.Join(append(b.scope, b.match...), " AND ") +
		segmentOrder + b.limit
}

// ftsPattern is the text the trigram index looks up for a segment: the
// word start " words" for tier 2, the words for tier 3; "" when it is
// shorter than one trigram.
func ftsPattern(s segment) string {
	p := s.term.words
	if s.tier == payd.TierWord {
		p = " " + p
	}
	if utf8.RuneCountInString(p) < 3 {
		return ""
	}
	return p
}

// indexed is a segment's query through the trigram index, for a pattern
// with too many candidates to read: the database keeps only the segment's
// first hits.
func (b *segmentSQL) indexed(q *queries, pattern string) string {
	return q.trigramCandidates(&b.args, "d.id, d.created_at", pattern, b.kind, strings.Join(append(b.scope, b.match...), " AND ")) +
		segmentOrder + b.limit
}
