package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"payd"
)

// indexMatches holds, for one search, the business's indexed entries the
// trigram index matched, by pattern and kind. A segment that goes to the
// index is a tier of one kind; the index tells kinds apart (each has its
// own part of it) but not tiers, so the first segment of a kind that needs
// a pattern reads its candidates once, each with its tier, and the other
// tier's segment filters them in Go.
type indexMatches struct {
	// byPattern holds the candidates of each pattern and kind read so far;
	// tooMany those with more than maxIndexCandidates.
	byPattern map[string][]payd.SearchHit
	tooMany   map[string]bool
}

// maxIndexCandidates bounds the candidates a search reads into memory.
// Past it (a common word: 81,000 entries hold "trail" at a million
// payments) each segment asks the database for its own first hits
// instead, which keeps only those. (A test sets it to 0 to take that way.)
var maxIndexCandidates = func() *atomic.Int64 {
	var n atomic.Int64
	n.Store(20000)
	return &n
}()

// indexedSegment returns a tier 2 or 3 segment's hits from the trigram
// index's candidates for pattern, newest first; ok is false when the
// pattern has too many candidates to read, and the segment must be
// answered from the newest entries or by the index query of its own.
func (q *queries) indexedSegment(ctx context.Context, s segment, pattern string) (hits []payd.SearchHit, ok bool, err error) {
	found, ok, err := q.indexCandidates(ctx, s, pattern)
	if err != nil || !ok {
		return nil, false, err
	}
	for _, h := range found {
		if h.Tier != s.tier || !s.ranksAfter(h) {
			continue
		}
		if hits = append(hits, h); len(hits) == s.need {
			break
		}
	}
	return hits, true, nil
}

// indexCandidates returns the business's indexed entries, not queued, whose
// document holds pattern, ranked by the search's term and newest first,
// reading them on first use; ok is false when there are more than
// maxIndexCandidates. The tier is worked out in SQL, as the
// segment queries do, so that only ids cross over; entries the term is an
// exact key of are left out (tier 1 ranks them).
func (q *queries) indexCandidates(ctx context.Context, s segment, pattern string) (found []payd.SearchHit, ok bool, err error) {
	// Only the segment's kind is read (each kind has its own part of the
	// index: migrations 00013 and 00014): a kind without matches is spared
	// the reading of another kind's many (a broad word of payments, looked
	// for among customers).
	cached := pattern + "\x00" + string(s.kind)
	if s.found.tooMany[cached] {
		return nil, false, nil
	}
	if found, ok := s.found.byPattern[cached]; ok {
		return found, true, nil
	}
	limit := maxIndexCandidates.Load()
	exact, err := q.exactKeyed(ctx, s)
	if err != nil {
		return nil, false, err
	}
	var args sqlArgs
	tier := fmt.Sprintf("CASE WHEN d.doc LIKE %s THEN %d ELSE %d END",
		args.add("% "+s.term.words+"%"), payd.TierWord, payd.TierAnywhere)
	query := q.trigramCandidates(&args, "d.id, d.created_at, "+tier, pattern, s.kind,
		"d.business_id = "+args.add(s.biz)+" AND "+notQueued) + " LIMIT " + args.add(limit+1)
	rows, err := q.ex.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, err
	}
	var n int64
	for rows.Next() {
		h := payd.SearchHit{Kind: s.kind}
		var created int64
		if err := rows.Scan(&h.ID, &created, &h.Tier); err != nil {
			rows.Close()
			return nil, false, err
		}
		n++
		h.CreatedAt = fromMicros(created)
		if exact[string(h.Kind)+":"+h.ID] {
			continue // ranked in tier 1
		}
		found = append(found, h)
	}
	if err := closeRows(rows); err != nil {
		return nil, false, err
	}
	if n > limit {
		if s.found.tooMany == nil {
			s.found.tooMany = map[string]bool{}
		}
		s.found.tooMany[cached] = true
		return nil, false, nil
	}
	slices.SortFunc(found, func(a, b payd.SearchHit) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if s.found.byPattern == nil {
		s.found.byPattern = map[string][]payd.SearchHit{}
	}
	s.found.byPattern[cached] = found
	return found, true, nil
}

// exactKeyed returns the entries whose exact keys include the search's
// term, as "kind:id": a range of search_keys' primary key, read once
// rather than probed for every candidate.
func (q *queries) exactKeyed(ctx context.Context, s segment) (map[string]bool, error) {
	out := map[string]bool{}
	if s.term.key == "" {
		return out, nil
	}
	rows, err := q.ex.QueryContext(ctx, `SELECT kind, id FROM search_keys WHERE business_id = $1 AND key = $2`, s.biz, s.term.key)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var kind, id string
		if err := rows.Scan(&kind, &id); err != nil {
			rows.Close()
			return nil, err
		}
		out[kind+":"+id] = true
	}
	return out, closeRows(rows)
}

// trigramCandidates is the query through the trigram index of the
// database (FTS5 or pg_trgm) for the entries of kind in scope whose
// document holds pattern, at least one trigram long; search and the
// payment list's q both look the index up through it. Each database keeps
// each kind in a part of its own (migrations 00013 and 00014), so the kind
// must be one of payd.SearchKinds; the callers name their own.
func (q *queries) trigramCandidates(args *sqlArgs, columns, pattern string, kind payd.SearchKind, scope string) string {
	if !slices.Contains(payd.SearchKinds, kind) {
		panic(fmt.Sprintf("store: trigram candidates of kind %q", kind))
	}
	if q.dialect == dialectPostgres {
		return postgresCandidates(args, columns, pattern, kind, scope)
	}
	return sqliteCandidates(args, columns, pattern, kind, scope)
}
