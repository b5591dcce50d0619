package api

import (
	"sync"

	"payd"
	"payd/money"
)

// aheadWindow is how many indexes past the last one handed out the
// requests derive ahead: at least as many as checkouts can be in flight,
// so that each finds its deposit ready (the writer's largest batch).
const aheadWindow = 256

// maxAheadChains bounds the account keys derived ahead for: one per wallet
// and network in use.
const maxAheadChains = 1024

// depositsAhead derives deposits before the transaction that hands out
// their index. The index must be taken in the checkout's transaction (two
// checkouts never share one and a rolled-back checkout leaves no gap, which
// keeps the wallet's addresses within the gap limit its app scans), but
// the derivation, a secp256k1 point multiplication, need not run there: on
// SQLite every transaction runs on the store's one writer goroutine, where
// it was an eighth of each checkout's time. So each request derives, on
// its own goroutine before its transaction, the deposit of the first index
// past the last one handed out that no other request has claimed, and the
// transaction takes the deposit of the index it got, deriving it only when
// none is ready. A deposit is taken once: on solana it carries a random
// reference that must not be shared. It is safe for concurrent use.
type depositsAhead struct {
	networks map[money.Network]payd.Network

	mu     sync.Mutex
	chains map[aheadKey]*aheadChain
}

// aheadKey is one account key of one network.
type aheadKey struct {
	network money.Network
	key     string
}

// aheadChain is what has been derived ahead for one account key.
type aheadChain struct {
	// next is the index after the one handed out last: the first to derive.
	next uint32
	// slots holds the indexes claimed for derivation; a nil deposit is
	// still being derived.
	slots map[uint32]*payd.Deposit
}

func newDepositsAhead(networks map[money.Network]payd.Network) *depositsAhead {
	return &depositsAhead{networks: networks, chains: map[aheadKey]*aheadChain{}}
}

// prepare derives the next unclaimed deposit of the key, if an index has
// been handed out for it before (else there is no telling where to start)
// and the window is not full. A failure is left for take to meet.
func (a *depositsAhead) prepare(n money.Network, key string) {
	k := aheadKey{n, key}
	a.mu.Lock()
	c, idx, ok := a.chains[k], uint32(0), false
	if c != nil {
		idx, ok = c.claim()
	}
	a.mu.Unlock()
	if !ok {
		return
	}
	d, err := a.networks[n].Deposit(key, idx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if slot, held := c.slots[idx]; held && slot == nil && a.chains[k] == c {
		if err != nil {
			delete(c.slots, idx)
			return
		}
		c.slots[idx] = &d
	}
}

// claim returns the first index from next on that no request has claimed.
func (c *aheadChain) claim() (uint32, bool) {
	for i := c.next; i < c.next+aheadWindow && i >= c.next; i++ {
		if _, held := c.slots[i]; !held {
			c.slots[i] = nil
			return i, true
		}
	}
	return 0, false
}

// take returns the deposit at index idx of the key, just handed out in a
// transaction: the one derived ahead if ready, else derived now.
func (a *depositsAhead) take(n money.Network, key string, idx uint32) (payd.Deposit, error) {
	if d := a.taken(aheadKey{n, key}, idx); d != nil {
		return *d, nil
	}
	return a.networks[n].Deposit(key, idx)
}

// taken records that idx was handed out and removes its deposit, if ready.
func (a *depositsAhead) taken(k aheadKey, idx uint32) *payd.Deposit {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chains[k]
	if c == nil {
		if len(a.chains) >= maxAheadChains {
			clear(a.chains)
		}
		c = &aheadChain{slots: map[uint32]*payd.Deposit{}}
		a.chains[k] = c
	}
	c.next = idx + 1
	d := c.slots[idx]
	delete(c.slots, idx)
	if len(c.slots) > 2*aheadWindow {
		c.prune()
	}
	return d
}

// prune drops the slots outside the window: indexes handed out elsewhere
// (another process, or a transaction that ran again and derived its own).
func (c *aheadChain) prune() {
	for i := range c.slots {
		if i < c.next || i >= c.next+aheadWindow {
			delete(c.slots, i)
		}
	}
}
