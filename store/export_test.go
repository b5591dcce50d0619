package store

// SetSearchWindow sets how many newest entries a search segment scans
// before it turns to the trigram index, and returns the previous value.
func SetSearchWindow(n int64) int64 { return searchWindow.Swap(n) }
