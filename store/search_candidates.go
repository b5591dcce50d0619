package store

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"payd"
)

// indexMatches holds, for one search, the business's indexed entries the
// trigram index matched, by pattern. A segment that goes to the index is
// a tier of one kind, but the index cannot tell tiers or kinds apart
// without reading each candidate's entry, so the first segment that needs
// a pattern reads its candidates once and every later segment of the same
// search (the other kinds, the other tier) filters them in Go: one pass
// over the candidates instead of up to six.
type indexMatches struct {
	byPattern map[string][]searchDoc
}

// indexedSegment returns a tier 2 or 3 segment's hits from the trigram
// index's candidates for pattern, newest first.
func (q *queries) indexedSegment(ctx context.Context, s segment, pattern string) ([]payd.SearchHit, error) {
	docs, err := q.indexCandidates(ctx, s, pattern)
	if err != nil {
		return nil, err
	}
	var hits []payd.SearchHit
	for _, d := range docs {
		if d.kind != s.kind || s.term.tier(d) != s.tier {
			continue
		}
		h := payd.SearchHit{Tier: s.tier, Kind: d.kind, CreatedAt: fromMicros(d.createdAt), ID: d.id}
		if !s.ranksAfter(h) {
			continue
		}
		if hits = append(hits, h); len(hits) == s.need {
			break
		}
	}
	return hits, nil
}

// indexCandidates returns the business's indexed entries, not queued, whose
// document holds pattern, newest first, reading them on first use.
func (q *queries) indexCandidates(ctx context.Context, s segment, pattern string) ([]searchDoc, error) {
	if docs, ok := s.found.byPattern[pattern]; ok {
		return docs, nil
	}
	var args sqlArgs
	candidates := sqliteCandidates
	if q.dialect == dialectPostgres {
		candidates = postgresCandidates
	}
	query := candidates(&args, pattern, "d.business_id = "+args.add(s.biz)+" AND "+notQueued)
	rows, err := q.ex.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var docs []searchDoc
	for rows.Next() {
		var d searchDoc
		if err := rows.Scan(&d.kind, &d.id, &d.createdAt, &d.doc, &d.keys); err != nil {
			rows.Close()
			return nil, err
		}
		d.businessID = s.biz
		docs = append(docs, d)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b searchDoc) int {
		if c := cmp.Compare(b.createdAt, a.createdAt); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	if s.found.byPattern == nil {
		s.found.byPattern = map[string][]searchDoc{}
	}
	s.found.byPattern[pattern] = docs
	return docs, nil
}
