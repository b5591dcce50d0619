package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"payd"
)

// indexMatches holds, for one search, the business's indexed entries the
// trigram index matched, by pattern. A segment that goes to the index is
// a tier of one kind, but the index cannot tell tiers or kinds apart
// without reading each candidate's entry, so the first segment that needs
// a pattern reads its candidates once, each with its kind and tier, and
// every later segment of the same search (the other kinds, the other tier)
// filters them in Go: one pass over the candidates instead of up to six.
type indexMatches struct {
	byPattern map[string][]payd.SearchHit
}

// indexedSegment returns a tier 2 or 3 segment's hits from the trigram
// index's candidates for pattern, newest first.
func (q *queries) indexedSegment(ctx context.Context, s segment, pattern string) ([]payd.SearchHit, error) {
	found, err := q.indexCandidates(ctx, s, pattern)
	if err != nil {
		return nil, err
	}
	var hits []payd.SearchHit
	for _, h := range found {
		if h.Kind != s.kind || h.Tier != s.tier || !s.ranksAfter(h) {
			continue
		}
		if hits = append(hits, h); len(hits) == s.need {
			break
		}
	}
	return hits, nil
}

// indexCandidates returns the business's indexed entries, not queued, whose
// document holds pattern, ranked by the search's term and newest first,
// reading them on first use. The tier is worked out in SQL, as the
// segment queries do, so that only ids cross over.
func (q *queries) indexCandidates(ctx context.Context, s segment, pattern string) ([]payd.SearchHit, error) {
	if found, ok := s.found.byPattern[pattern]; ok {
		return found, nil
	}
	var args sqlArgs
	exact := "1 = 0"
	if s.term.key != "" {
		exact = `EXISTS (SELECT 1 FROM search_keys k WHERE k.business_id = d.business_id AND k.key = ` + args.add(s.term.key) +
			` AND k.kind = d.kind AND k.created_at = d.created_at AND k.id = d.id)`
	}
	tier := fmt.Sprintf("CASE WHEN %s THEN %d WHEN d.doc LIKE %s THEN %d ELSE %d END",
		exact, payd.TierExact, args.add("% "+s.term.words+"%"), payd.TierWord, payd.TierAnywhere)
	candidates := sqliteCandidates
	if q.dialect == dialectPostgres {
		candidates = postgresCandidates
	}
	query := candidates(&args, tier, pattern, "d.business_id = "+args.add(s.biz)+" AND "+notQueued)
	rows, err := q.ex.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var found []payd.SearchHit
	for rows.Next() {
		var h payd.SearchHit
		var created int64
		if err := rows.Scan(&h.Kind, &h.ID, &created, &h.Tier); err != nil {
			rows.Close()
			return nil, err
		}
		h.CreatedAt = fromMicros(created)
		found = append(found, h)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
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
	s.found.byPattern[pattern] = found
	return found, nil
}
