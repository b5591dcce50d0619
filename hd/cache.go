package hd

import (
	"sync"

	"payd/money"
)

// KeyCache keeps parsed account keys, so that a caller deriving an address
// per checkout parses each wallet's key once: parsing an extended key
// decompresses a secp256k1 point, about as dear as the derivation itself,
// and every checkout's derivation runs on the store's single writer. It is
// safe for concurrent use.
type KeyCache struct {
	mu   sync.Mutex
	max  int
	keys map[cachedKey]AccountKey
}

// cachedKey is a key as given, with the network it was parsed for.
type cachedKey struct {
	network money.Network
	s       string
}

// NewKeyCache returns a cache of at most max keys. Past that it starts
// over empty rather than tracking use: a deployment's wallets are few, and
// a key parsed again costs only what it cost before the cache.
func NewKeyCache(max int) *KeyCache {
	return &KeyCache{max: max, keys: map[cachedKey]AccountKey{}}
}

// Parse is ParseAccountKey, answered from the cache when s was parsed for
// n before. Refused keys are not kept.
func (c *KeyCache) Parse(n money.Network, s string) (AccountKey, error) {
	ck := cachedKey{n, s}
	c.mu.Lock()
	k, ok := c.keys[ck]
	c.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := ParseAccountKey(n, s)
	if err != nil {
		return k, err
	}
	c.mu.Lock()
	if len(c.keys) >= c.max {
		clear(c.keys)
	}
	c.keys[ck] = k
	c.mu.Unlock()
	return k, nil
}
