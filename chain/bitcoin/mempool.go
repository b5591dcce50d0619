package bitcoin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"

	"payd"
)

// Bounds on what Pending does per call.
const (
	// maxFetch bounds the transactions read in one Pending call, so that
	// the first call on a full mainnet mempool does not read it all at
	// once; the rest are read on the following calls.
	maxFetch = 5_000
	// fetchBatch is how many getrawtransaction calls go in one request:
	// few enough that their answer stays far below the client's 64 MB
	// bound even with large transactions (a standard one is at most
	// 400,000 vbytes, 800 KB of hex; 25 of them are 20 MB).
	fetchBatch = 25
	// aliveScan is how many blocks above the last one BlockAt read Pending
	// searches for an asked transaction that left the mempool.
	aliveScan = 6
)

// txKey is a txid as its 32 bytes in display order.
type txKey [32]byte

// parseTxKey parses a txid of 64 hex digits.
func parseTxKey(s string) (txKey, bool) {
	var k txKey
	if len(s) != 64 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(s))
	return k, err == nil
}

// pooled is one matched output of a mempool transaction and its key in the
// Watched set.
type pooled struct {
	t   payd.Transfer
	key string
}

// mempool is what Pending remembers of the node's mempool between calls:
// which transactions it has read (by the generation of the last listing
// that held them) and the outputs among them that matched a watched
// script. Every transaction read is remembered, also one that could not
// be read (the node failed to answer it alone, or answered something that
// does not decode), so that it is never asked again while it waits and
// never keeps the others from being read. seen holds only transactions of
// the last listing (forget drops the others), so it is bounded as the
// listing is: about 40 bytes a txid, where the listing itself costs the
// client 67 bytes a txid to read, and the client's 64 MB answer bound
// caps it at about a million. Only the matches are kept, not every output: a follower watches
// a deposit before any customer is shown it, so no payment to it can have
// entered the mempool before it was watched.
type mempool struct {
	mu      sync.Mutex // one Pending at a time
	gen     uint32
	seen    map[txKey]uint32
	matched map[txKey][]pooled
}

func (p *mempool) init() {
	p.seen = map[txKey]uint32{}
	p.matched = map[txKey][]pooled{}
}

// Pending reads the node's mempool (getrawmempool), reads the transactions
// not read before (getrawtransaction TXID 0, which needs no txindex for a
// mempool transaction), forgets those that left, and returns the waiting
// transfers to scripts in w and, for each of unconfirmed still alive, an
// Alive entry. An asked transaction is alive while in the mempool or in a
// block above processed (mined since the follower last read the chain);
// when that is more than aliveScan blocks, every asked transaction is
// reported alive, since a missing one cannot be told from a mined one
// cheaply and the blocks will tell. upstream_unavailable when the node
// cannot be asked.
func (n *Node) Pending(ctx context.Context, w payd.Watched, unconfirmed []string, processed int64) (payd.Pending, error) {
	p := &n.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	if err := n.rpc.Call(ctx, "getrawmempool", &ids); err != nil {
		return payd.Pending{}, err
	}
	p.gen++
	asked := map[txKey]bool{}
	for _, id := range unconfirmed {
		if k, ok := parseTxKey(strings.ToLower(id)); ok {
			asked[k] = false
		}
	}
	var fresh []string
	for _, id := range ids {
		k, ok := parseTxKey(id)
		if !ok {
			return payd.Pending{}, n.unavailable("answered getrawmempool with %q, which is not a txid", truncate(id))
		}
		if _, ok := asked[k]; ok {
			asked[k] = true
		}
		if _, ok := p.seen[k]; ok {
			p.seen[k] = p.gen
		} else if len(fresh) < maxFetch {
			fresh = append(fresh, id)
		}
	}
	if err := n.fetch(ctx, w, fresh); err != nil {
		return payd.Pending{}, err
	}
	p.forget()
	alive, err := n.alive(ctx, unconfirmed, asked, processed)
	if err != nil {
		return payd.Pending{}, err
	}
	out := payd.Pending{Alive: alive}
	for _, ms := range p.matched {
		for _, m := range ms {
			if w.Has(m.key) {
				out.Transfers = append(out.Transfers, m.t)
			}
		}
	}
	return out, nil
}

// fetch reads the transactions ids in batches and remembers them and their
// matches. A transaction the node answers with an error (it left the
// mempool since the listing) or with something that is not it is
// remembered as read and skipped. A batch whose answer fails as a whole,
// too large or out of shape, is asked again one call at a time; only a
// node that fails then too (unreachable, busy) fails fetch.
func (n *Node) fetch(ctx context.Context, w payd.Watched, ids []string) error {
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), fetchBatch)]
		ids = ids[len(chunk):]
		calls := make([]Call, len(chunk))
		raws := make([]json.RawMessage, len(chunk))
		for i, id := range chunk {
			calls[i] = Call{Method: "getrawtransaction", Params: []any{id, 0}, Result: &raws[i]}
		}
		if err := n.rpc.Batch(ctx, calls); err != nil {
			if ctx.Err() != nil {
				return err
			}
			for i, id := range chunk {
				err := n.rpc.Call(ctx, "getrawtransaction", &raws[i], id, 0)
				if err != nil && rpcCode(err) == 0 && !tooLarge(err) {
					return err
				}
				calls[i].Err = err
			}
		}
		for i, id := range chunk {
			n.remember(id, raws[i], calls[i].Err, w)
		}
	}
	return nil
}

// remember notes the transaction id as read, and its outputs to scripts
// in w, from the node's answer raw (or the error of asking it).
func (n *Node) remember(id string, raw json.RawMessage, err error, w payd.Watched) {
	p := &n.pool
	k, _ := parseTxKey(id)
	p.seen[k] = p.gen
	if err != nil {
		return
	}
	tx, err := decodeTx(raw)
	if err != nil || tx.TxHash().String() != id {
		return // not the transaction asked: never counted, never asked again
	}
	for _, t := range n.match(tx, w) {
		key, _ := addressScript(t.To)
		p.matched[k] = append(p.matched[k], pooled{t, string(key)})
	}
}

// forget drops the transactions the last listing did not hold.
func (p *mempool) forget() {
	for k, g := range p.seen {
		if g != p.gen {
			delete(p.seen, k)
		}
	}
	for k := range p.matched {
		if p.seen[k] != p.gen {
			delete(p.matched, k)
		}
	}
}

// alive answers Pending's Alive for the asked txids (see Pending), given
// which of them the mempool listing held.
func (n *Node) alive(ctx context.Context, unconfirmed []string, listed map[txKey]bool, processed int64) (map[string]bool, error) {
	alive := map[string]bool{}
	var missing []string
	for _, id := range unconfirmed {
		k, ok := parseTxKey(strings.ToLower(id))
		switch {
		case !ok:
		case listed[k]:
			alive[id] = true
		default:
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return alive, nil
	}
	// The tip is read after the mempool listing, so a transaction mined
	// before the listing is in a block at or below it.
	tip, err := n.Tip(ctx)
	if err != nil {
		return nil, err
	}
	from := processed + 1
	if from < tip.Height-aliveScan+1 {
		for _, id := range missing {
			alive[id] = true
		}
		return alive, nil
	}
	for h := from; h <= tip.Height; h++ {
		var hash string
		if err := n.rpc.Call(ctx, "getblockhash", &hash, h); err != nil {
			return nil, err
		}
		msg, err := n.rawBlock(ctx, hash)
		if err != nil {
			return nil, err
		}
		mined := map[txKey]bool{}
		for _, tx := range msg.Transactions {
			mined[txKey(tx.TxHash())] = true
		}
		for _, id := range missing {
			if k, _ := parseTxKey(strings.ToLower(id)); mined[reverse(k)] {
				alive[id] = true
			}
		}
	}
	return alive, nil
}

// reverse turns a txid's display-order bytes into chainhash's internal
// order.
func reverse(k txKey) txKey {
	for i, j := 0, len(k)-1; i < j; i, j = i+1, j-1 {
		k[i], k[j] = k[j], k[i]
	}
	return k
}

// truncate shortens a node's answer for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
