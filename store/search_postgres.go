package store

import "payd"

// postgresCandidates selects columns of the indexed entries (search_docs
// d) of one kind in scope whose document holds the pattern, driven from
// that kind's pg_trgm GIN index (migration 00013: one partial index per
// kind, which the kind's literal in the CTE selects). The CTE is
// materialized and its only conditions are the LIKE and the kind, so the
// planner cannot prefer a newest-first scan of search_docs_created that
// would read every entry of the business for a rare pattern. (Naming only
// some of a long pattern's trigrams, as ftsQuery does for FTS5, was
// measured slower here: the planner then estimated one candidate and joined
// badly.)
func postgresCandidates(args *sqlArgs, columns, pattern string, kind payd.SearchKind, scope string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE kind = '` + string(kind) + `' AND doc LIKE ` + args.add("%"+pattern+"%") + `)
		SELECT ` + columns + ` FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` + scope
}
