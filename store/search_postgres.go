package store

import "strings"

// pgTrigramLikes is the condition that selects a pattern's candidates
// through the pg_trgm GIN index: the whole pattern. (Naming only some of
// a long pattern's trigrams, as ftsQuery does, was measured slower here:
// the planner then estimates one row and joins badly, 1 s for a mid term.)
func pgTrigramLikes(args *sqlArgs, pattern string) string {
	return "doc LIKE " + args.add("%"+pattern+"%")
}

// postgresCandidates selects the business's indexed entries whose document
// holds the pattern, driven from the pg_trgm GIN index. The CTE is
// materialized and its only condition is the LIKE, so the planner
// cannot prefer a newest-first scan of search_docs_created that would read
// every entry of the business for a rare pattern.
func postgresCandidates(args *sqlArgs, tier, pattern, scope string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE ` + pgTrigramLikes(args, pattern) + `)
		SELECT d.kind, d.id, d.created_at, ` + tier + ` FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` + scope
}

// postgresIndexed drives one segment from the pg_trgm GIN index, for a
// pattern with too many candidates to read; the segment's own LIKEs are
// the exact check.
func (b *segmentSQL) postgresIndexed(pattern string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE ` + pgTrigramLikes(&b.args, pattern) + `)
		SELECT d.id, d.created_at FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` +
		strings.Join(append(b.scope, b.match...), " AND ") + segmentOrder + b.limit
}
