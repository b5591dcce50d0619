package store

// postgresCandidates selects columns of the indexed entries (search_docs
// d) in scope whose document holds the pattern, driven from the pg_trgm
// GIN index. The CTE is materialized and its only condition is the LIKE,
// so the planner cannot prefer a newest-first scan of search_docs_created
// that would read every entry of the business for a rare pattern. (Naming only some of a
// long pattern's trigrams, as ftsQuery does for FTS5, was measured slower
// here: the planner then estimated one candidate and joined badly.)
func postgresCandidates(args *sqlArgs, columns, pattern, scope string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE doc LIKE ` + args.add("%"+pattern+"%") + `)
		SELECT ` + columns + ` FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` + scope
}
