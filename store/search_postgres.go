package store

import "strings"

// pgTrigramLikes is the condition that selects a pattern's candidates
// through the pg_trgm GIN index. For a long pattern it names only
// ftsMaxTrigrams of its trigrams (see ftsQuery): pg_trgm otherwise reads
// the posting list of every trigram of it, each common among transaction
// hashes. The caller keeps a LIKE of the whole pattern as the exact check.
func pgTrigramLikes(args *sqlArgs, pattern string) string {
	parts := sampleTrigrams(pattern)
	if parts == nil {
		return "doc LIKE " + args.add("%"+pattern+"%")
	}
	for i, p := range parts {
		parts[i] = "doc LIKE " + args.add("%"+p+"%")
	}
	return strings.Join(parts, " AND ")
}

// postgresCandidates selects the business's indexed entries whose document
// holds the pattern, driven from the pg_trgm GIN index. The CTE is
// materialized and its only conditions are the trigrams, so the planner
// cannot prefer a newest-first scan of search_docs_created that would read
// every entry of the business for a rare pattern.
func postgresCandidates(args *sqlArgs, tier, pattern, scope string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE ` + pgTrigramLikes(args, pattern) + `)
		SELECT d.kind, d.id, d.created_at, ` + tier + ` FROM m JOIN search_docs d ON d.seq = m.seq
		WHERE d.doc LIKE ` + args.add("%"+pattern+"%") + ` AND ` + scope
}

// postgresIndexed drives one segment from the pg_trgm GIN index, for a
// pattern with too many candidates to read; the segment's own LIKEs are
// the exact check.
func (b *segmentSQL) postgresIndexed(pattern string) string {
	return `WITH m AS MATERIALIZED (SELECT seq FROM search_docs WHERE ` + pgTrigramLikes(&b.args, pattern) + `)
		SELECT d.id, d.created_at FROM m JOIN search_docs d ON d.seq = m.seq WHERE ` +
		strings.Join(append(b.scope, b.match...), " AND ") + segmentOrder + b.limit
}
