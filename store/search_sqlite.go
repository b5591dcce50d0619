package store

import (
	"slices"
	"strings"

	"payd"
)

// kindSeqs is the range of search_docs.seq, the FTS5 rowid, that entries of
// kind take on SQLite: links, customers and payments each have their own
// (2^40 entries each; migration 00014 moved the entries there). FTS5 keeps
// each trigram's documents in rowid order and seeks to a rowid range, so a
// query restricted to one kind's range reads only that kind's part of each
// posting list: a word held by 10,000 payments costs a search among
// customers nothing. (PostgreSQL has a partial index per kind instead.)
func kindSeqs(kind payd.SearchKind) (lo, hi int64) {
	i := int64(slices.Index(payd.SearchKinds, kind)) + 1
	return i << 40, (i+1)<<40 - 1
}

// ftsMaxTrigrams is how many of a long pattern's trigrams the FTS5 query
// asks for. FTS5 reads the posting list of every trigram of a phrase, and
// a 66-character transaction hash has 64 common ones (74 ms); four spread
// over it narrow the candidates as well (2 ms), and the LIKE on each
// candidate's document is the exact check either way.
const ftsMaxTrigrams = 4

// sampleTrigrams returns ftsMaxTrigrams of a long pattern's trigrams,
// spread from its start to its end, or nil when the pattern has no more
// than that and is looked up whole.
func sampleTrigrams(pattern string) []string {
	runes := []rune(pattern)
	n := len(runes) - 2 // trigrams
	if n <= ftsMaxTrigrams {
		return nil
	}
	out := make([]string, ftsMaxTrigrams)
	for i := range out {
		at := i * (n - 1) / (ftsMaxTrigrams - 1)
		out[i] = string(runes[at : at+3])
	}
	return out
}

// ftsQuery is the FTS5 query for a pattern: the pattern as one phrase, or
// for a long one its sampled trigrams. The pattern holds only letters,
// digits and spaces, so quoting is safe.
func ftsQuery(pattern string) string {
	parts := sampleTrigrams(pattern)
	if parts == nil {
		return `"` + pattern + `"`
	}
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, " AND ")
}

// sqliteCandidates selects columns of the indexed entries (search_docs d)
// of kind in scope whose document holds the pattern (at least one trigram
// long: ftsPattern), driven from the FTS5 trigram index within the kind's
// rowids: CROSS JOIN keeps SQLite from starting at search_docs instead.
func sqliteCandidates(args *sqlArgs, columns, pattern string, kind payd.SearchKind, scope string) string {
	lo, hi := kindSeqs(kind)
	return `SELECT ` + columns + ` FROM search_fts CROSS JOIN search_docs d ON d.seq = search_fts.rowid
		WHERE search_fts MATCH ` + args.add(ftsQuery(pattern)) + ` AND search_fts.rowid BETWEEN ` + args.add(lo) + ` AND ` + args.add(hi) +
		` AND d.doc LIKE ` + args.add("%"+pattern+"%") + ` AND ` + scope
}
