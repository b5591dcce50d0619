package store

import (
	"context"
	"strings"
	"unicode/utf8"

	"payd"
)

// The q filter of GET /payments (spec 4.3, docs/listing.md) matches what
// GET /search?kind=payment finds for the same text, at any tier: the search
// index answers which payments match, and the listing keeps its own
// filters and order. A term with few matches hands the list their ids,
// which it looks up by primary key; a term with many (or one too short
// for the trigram index) is a check on each row of the list's own index
// scan, which fills a page quickly because matches are dense.

// queryMatchLimit is the most matches a term may have for its ids to
// drive the list; past it the list checks each row instead.
const queryMatchLimit = 1000

// queryMatch is what a q term matches: ids, or, when many, the term for a
// per-row check. Queued payments (search_queue), which the index may hold
// stale or not at all, are matched in Go and always listed by id.
type queryMatch struct {
	term   searchTerm
	many   bool
	ids    []string
	queued []string
}

// none reports whether the term matches no payment at all.
func (m *queryMatch) none() bool {
	return m != nil && !m.many && len(m.ids) == 0
}

// matchQuery resolves f.Query against the search index; nil without one.
func (q *queries) matchQuery(ctx context.Context, f payd.PaymentFilter) (*queryMatch, error) {
	if f.Query == "" {
		return nil, nil
	}
	m := &queryMatch{term: newSearchTerm(f.Query)}
	if m.term.key == "" && m.term.words == "" {
		return m, nil
	}
	tail, err := q.searchTail(ctx, payd.SearchQuery{BusinessID: f.BusinessID, Kinds: []payd.SearchKind{payd.SearchPayment}}, m.term)
	if err != nil {
		return nil, err
	}
	for _, h := range tail {
		m.queued = append(m.queued, h.ID)
	}
	seen := map[string]bool{}
	add := func(ids []string) {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				m.ids = append(m.ids, id)
			}
		}
	}
	add(m.queued)
	if m.term.key != "" {
		ids, err := q.matchIDs(ctx, `SELECT d.id FROM search_keys d WHERE d.business_id = $1 AND d.key = $2
			AND d.kind = 'payment' AND `+notQueued+` LIMIT $3`, f.BusinessID, m.term.key, queryMatchLimit+1)
		if err != nil {
			return nil, err
		}
		add(ids)
	}
	if m.term.words != "" {
		if utf8.RuneCountInString(m.term.words) < 3 {
			m.many = true // no trigram to look up: check every row
			return m, nil
		}
		var args sqlArgs
		query := q.trigramCandidates(&args, "d.id", m.term.words, payd.SearchPayment, "d.business_id = "+args.add(f.BusinessID)+
			" AND "+notQueued) + " LIMIT " + args.add(queryMatchLimit+1)
		ids, err := q.matchIDs(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		add(ids)
	}
	m.many = len(m.ids) > queryMatchLimit
	return m, nil
}

// matchIDs runs a query returning ids.
func (q *queries) matchIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	return queryAll(ctx, q.ex, scanString, query, args...)
}

// match adds the condition of a resolved q term: the ids when few, or a
// check of each row's search entry (or its queued match) when many.
func (pq *paymentQuery) match(q *queries, m *queryMatch) {
	if !m.many {
		pq.byIDs = true
		pq.where = append(pq.where, q.idsIn("p.id", pq.args.add(jsonIDs(m.ids))))
		return
	}
	var entry []string
	if m.term.words != "" {
		entry = append(entry, "d.doc LIKE "+pq.args.add("%"+m.term.words+"%"))
	}
	if m.term.key != "" {
		entry = append(entry, `EXISTS (SELECT 1 FROM search_keys k WHERE k.business_id = d.business_id AND k.key = `+
			pq.args.add(m.term.key)+` AND k.kind = d.kind AND k.created_at = d.created_at AND k.id = d.id)`)
	}
	cond := `EXISTS (SELECT 1 FROM search_docs d WHERE d.kind = 'payment' AND d.id = p.id AND ` + notQueued +
		` AND (` + strings.Join(entry, " OR ") + `))`
	if len(m.queued) > 0 {
		cond = "(" + cond + " OR " + q.idsIn("p.id", pq.args.add(jsonIDs(m.queued))) + ")"
	}
	pq.where = append(pq.where, cond)
}
