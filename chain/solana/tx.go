package solana

import (
	"encoding/json"
	"math/big"
	"slices"
	"sync"

	"payd"
	"payd/money"
)

// signatureInfo is one entry of getSignaturesForAddress.
type signatureInfo struct {
	Signature          string          `json:"signature"`
	Slot               int64           `json:"slot"`
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus string          `json:"confirmationStatus"`
}

// failed reports whether the transaction failed: err is set and not null.
func failed(err json.RawMessage) bool { return len(err) > 0 && string(err) != "null" }

// final reports whether the entry's slot is finalized.
func (s signatureInfo) final() bool { return s.ConfirmationStatus == "finalized" }

// signatureStatus is one entry of getSignatureStatuses' value; null for a
// signature the node does not know.
type signatureStatus struct {
	Slot               int64           `json:"slot"`
	Err                json.RawMessage `json:"err"`
	ConfirmationStatus string          `json:"confirmationStatus"`
}

// statuses is the result of getSignatureStatuses.
type statuses struct {
	Value []*signatureStatus `json:"value"`
}

// transaction is the result of getTransaction with encoding json: only
// what Scan reads of it.
type transaction struct {
	Slot        int64 `json:"slot"`
	Transaction struct {
		Message struct {
			AccountKeys []string `json:"accountKeys"`
		} `json:"message"`
	} `json:"transaction"`
	Meta *struct {
		Err               json.RawMessage `json:"err"`
		PreBalances       []int64         `json:"preBalances"`
		PostBalances      []int64         `json:"postBalances"`
		PreTokenBalances  []tokenBalance  `json:"preTokenBalances"`
		PostTokenBalances []tokenBalance  `json:"postTokenBalances"`
		LoadedAddresses   *struct {
			Writable []string `json:"writable"`
			Readonly []string `json:"readonly"`
		} `json:"loadedAddresses"`
	} `json:"meta"`
}

// tokenBalance is one entry of a transaction's pre- or postTokenBalances.
type tokenBalance struct {
	AccountIndex  int    `json:"accountIndex"`
	Mint          string `json:"mint"`
	Owner         string `json:"owner"`
	UITokenAmount struct {
		Amount string `json:"amount"`
	} `json:"uiTokenAmount"`
}

// txInfo is what a transaction says for Scan, decoded once and cached: its
// account keys in order (static, then loaded writable, then loaded
// read-only, the order balances index them by), its fee payer, and each
// account's lamport and token balance changes.
type txInfo struct {
	ok     bool // succeeded, with metadata
	keys   []string
	lamps  map[string]int64 // account → postBalance − preBalance
	tokens []tokenDelta
}

// tokenDelta is one token account's change in a transaction: the
// account's index in the transaction's account keys, its mint, and what
// it gained.
type tokenDelta struct {
	index int
	mint  string
	delta *big.Int
}

// info decodes what Scan needs of t.
func (t *transaction) info() *txInfo {
	in := &txInfo{keys: t.Transaction.Message.AccountKeys, lamps: map[string]int64{}}
	m := t.Meta
	if m == nil || failed(m.Err) {
		return in
	}
	in.ok = true
	if m.LoadedAddresses != nil {
		in.keys = append(append(append([]string(nil), in.keys...), m.LoadedAddresses.Writable...),
			m.LoadedAddresses.Readonly...)
	}
	for i, k := range in.keys {
		if i < len(m.PreBalances) && i < len(m.PostBalances) {
			in.lamps[k] += m.PostBalances[i] - m.PreBalances[i]
		}
	}
	pre := map[int]*big.Int{}
	for _, b := range m.PreTokenBalances {
		if v, ok := new(big.Int).SetString(b.UITokenAmount.Amount, 10); ok {
			pre[b.AccountIndex] = v
		}
	}
	for _, b := range m.PostTokenBalances {
		post, ok := new(big.Int).SetString(b.UITokenAmount.Amount, 10)
		if !ok {
			continue
		}
		// No balance before: the token account was created in this
		// transaction, as a wallet does for a payee's first token.
		if before := pre[b.AccountIndex]; before != nil {
			post.Sub(post, before)
		}
		in.tokens = append(in.tokens, tokenDelta{b.AccountIndex, b.Mint, post})
	}
	return in
}

// reference is the watched reference of refs the transaction credits:
// the one at the lowest index of its account keys, so that the choice
// does not depend on the order of a map; many is true when it carries
// more than one (a payer's mistake the follower logs). "" when it has
// none.
func (in *txInfo) reference(refs map[string]bool) (ref string, many bool) {
	for _, k := range in.keys {
		if !refs[k] {
			continue
		}
		if ref != "" {
			return ref, true
		}
		ref = k
	}
	return ref, false
}

// transfers are what the transaction pays owner, when one of its accounts
// is one of refs (owner's watched references, the credited one chosen by
// reference): the SOL the owner's account gained and, for each token
// account of atas (owner's associated token account of each configured
// mint, and its asset), what it gained. Any other token account, even
// one owner holds, is not a deposit. Each transfer's Index is the
// credited account's index in the transaction's account keys: the same
// at every read, and one per account, so that two payees of one
// transaction never share a key. A failed transaction, or one with no
// watched reference, pays nothing.
func (in *txInfo) transfers(sig, owner string, refs map[string]bool, atas map[string]tokenAccount) []payd.Transfer {
	if !in.ok || len(in.keys) == 0 {
		return nil
	}
	ref, _ := in.reference(refs)
	if ref == "" {
		return nil
	}
	t := payd.Transfer{TxHash: sig, From: in.keys[0], To: owner, Reference: ref}
	var out []payd.Transfer
	if d := in.lamps[owner]; d > 0 {
		t.Index, t.Amount = slices.Index(in.keys, owner), money.NewCoinAmount(money.SOL, d)
		out = append(out, t)
	}
	for _, d := range in.tokens {
		if d.index < 0 || d.index >= len(in.keys) || d.delta.Sign() <= 0 {
			continue
		}
		ta, ok := atas[in.keys[d.index]]
		if !ok || d.mint != ta.mint {
			continue
		}
		t.Index, t.Amount = d.index, money.CoinAmount{Asset: ta.asset, Units: new(big.Int).Set(d.delta)}
		out = append(out, t)
	}
	return out
}

// tokenAccount is an associated token account of a wallet: its mint and
// the asset the mint is.
type tokenAccount struct {
	mint  string
	asset money.Asset
}

// maxCachedTxs bounds the decoded transactions kept: a wallet's busiest
// minutes between two final slots, many times over.
const maxCachedTxs = 20_000

// txCache keeps decoded transactions by signature, so a transaction seen
// while it is confirmed is not fetched again when it is final. A
// transaction's content never changes under its signature. When full it
// forgets the oldest entries.
type txCache struct {
	mu    sync.Mutex
	max   int
	byKey map[string]*txInfo
	order []string
}

// newTxCache is an empty cache of at most max transactions.
func newTxCache(max int) *txCache { return &txCache{max: max, byKey: map[string]*txInfo{}} }

// get is the decoded transaction of sig, and false when it is not kept.
func (c *txCache) get(sig string) (*txInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in, ok := c.byKey[sig]
	return in, ok
}

// put keeps in as sig's decoded transaction, forgetting the oldest when
// the cache is full. Only a transaction with its metadata is to be kept:
// its content never changes after.
func (c *txCache) put(sig string, in *txInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[sig]; ok {
		return
	}
	for len(c.order) >= c.max {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	c.byKey[sig] = in
	c.order = append(c.order, sig)
}
