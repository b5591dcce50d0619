package store

import "strings"

// sqliteIndexed drives a segment from the FTS5 trigram index: a phrase of
// the pattern's trigrams finds every entry holding it, of any business or
// kind, and the conditions of the segment filter them. CROSS JOIN keeps
// SQLite from starting at search_docs instead. The pattern holds only
// letters, digits and spaces, so quoting it as one phrase is safe.
func (b *segmentSQL) sqliteIndexed(pattern string) string {
	return `SELECT d.id, d.created_at FROM search_fts CROSS JOIN search_docs d ON d.seq = search_fts.rowid
		WHERE search_fts MATCH ` + b.args.add(`"`+pattern+`"`) + ` AND ` +
		strings.Join(append(b.scope, b.match...), " AND ") + segmentOrder + b.limit
}
