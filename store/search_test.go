package store_test

import (
	"os"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestSearchThroughIndex runs the search suites with no window of newest
// entries, so that every tier 2 and 3 segment of the small fixtures is
// answered by the trigram index (FTS5, pg_trgm) as a rare term at scale
// is, on both databases.
// Then again with no candidates read into memory, so that every such
// segment queries the index itself, as for a very common word; and so
// with the window of newest entries, which then answers the fixtures.
func TestSearchThroughIndex(t *testing.T) {
	old := store.SetSearchWindow(0)
	t.Cleanup(func() { store.SetSearchWindow(old) })
	t.Run("Candidates", runSearchSuites)
	oldMax := store.SetMaxIndexCandidates(0)
	t.Cleanup(func() { store.SetMaxIndexCandidates(oldMax) })
	t.Run("SegmentBySegment", runSearchSuites)
	store.SetSearchWindow(old)
	t.Run("NewestWindow", runSearchSuites)
}

func runSearchSuites(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		storetest.RunSearch(t, func(t *testing.T) payd.Store { return storetest.OpenSQLite(t) })
	})
	t.Run("Postgres", func(t *testing.T) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			t.Skipf("%s is not set", storetest.PostgresEnv)
		}
		storetest.RunSearch(t, func(t *testing.T) payd.Store { return storetest.OpenPostgres(t) })
	})
}
