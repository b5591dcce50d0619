package bitcoin

// PoolSize is how many mempool transactions n remembers, for tests of
// Pending's forgetting.
func PoolSize(n *Node) int {
	n.pool.mu.Lock()
	defer n.pool.mu.Unlock()
	return len(n.pool.seen)
}
