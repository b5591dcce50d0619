package store

import "strings"

// postgresIndexed drives a segment from the pg_trgm GIN index. The
// candidates are taken from the trigram index alone (the CTE is
// materialized, and its only condition is the LIKE), so the planner cannot
// prefer a newest-first scan of search_docs_created that would read every
// entry of the kind for a rare term.
func (b *segmentSQL) postgresIndexed(pattern string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE doc LIKE ` + b.args.add("%"+pattern+"%") + `)
		SELECT d.id, d.created_at FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` +
		strings.Join(append(b.scope, b.match...), " AND ") + segmentOrder + b.limit
}
