package store

// SetSearchWindow sets how many newest entries a search segment scans
// before it turns to the trigram index, and returns the previous value.
func SetSearchWindow(n int64) int64 { return searchWindow.Swap(n) }

// SetMaxIndexCandidates sets how many trigram candidates a search reads
// into memory before segments query the index one by one, and returns the
// previous value.
func SetMaxIndexCandidates(n int64) int64 { return maxIndexCandidates.Swap(n) }
