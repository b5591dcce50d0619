package devnet

import (
	"fmt"
	"math/big"
	"strings"

	"payd"
	"payd/money"
)

// maxBlocks bounds one mine op.
const maxBlocks = 1000

// tx is one simulated transaction: one transfer of a coin.
type tx struct {
	hash      string
	amount    money.CoinAmount
	to, from  string
	reference string
	// height is the block that includes the transaction, or 0 while it
	// waits in the mempool.
	height int
}

// ledger is the state of one simulated network. Blocks start at height 1;
// only the transactions are kept, each knowing its block, since a block
// holds nothing else here.
type ledger struct {
	network money.Network
	tip     int
	mempool []*tx
	mined   []*tx // in block order, heights ascending
	// byKey indexes transactions by the deposit they pay (depositKey), so
	// that Transfers costs one map read per deposit however long the chain.
	byKey  map[string][]*tx
	byHash map[string]*tx
	// changed is closed and replaced on every change (see Devnet.Changed).
	changed chan struct{}
}

func newLedger(n money.Network) *ledger {
	return &ledger{network: n, byKey: map[string][]*tx{}, byHash: map[string]*tx{}, changed: make(chan struct{})}
}

// addressKey is how an address is indexed: ethereum and polygon hex and
// bitcoin bech32 are case-insensitive, so they are lower-cased; base58
// (legacy bitcoin, tron, solana) is not, so it is kept.
func (l *ledger) addressKey(s string) string {
	switch l.network {
	case money.Ethereum, money.Polygon:
		return strings.ToLower(s)
	case money.Bitcoin:
		if lower := strings.ToLower(s); strings.HasPrefix(lower, "bc1") {
			return lower
		}
	}
	return s
}

// depositKey is the index key of a deposit: its Solana Pay reference on
// solana (a Solana deposit is the wallet's one address, told apart by
// reference), its address elsewhere. It is "" for a Solana deposit
// without a reference, which nothing can pay.
func (l *ledger) depositKey(d payd.Deposit) string {
	if l.network == money.Solana {
		return d.Reference
	}
	return l.addressKey(d.Address)
}

// txKey is the index key of a transaction, matching depositKey.
func (l *ledger) txKey(t *tx) string {
	return l.depositKey(payd.Deposit{Address: t.to, Reference: t.reference})
}

// hashKey is how a transaction hash is indexed: hex in either case names
// one transaction; a Solana signature is base58 and case-sensitive.
func (l *ledger) hashKey(h string) string {
	if l.network == money.Solana {
		return h
	}
	return strings.ToLower(h)
}

// allows reports why o cannot be applied to the current state, or nil.
func (l *ledger) allows(o op) error {
	switch o.Kind {
	case opTransfer:
		if l.byHash[l.hashKey(o.TxHash)] != nil {
			return fmt.Errorf("devnet: transaction %s already exists on %s", o.TxHash, l.network)
		}
	case opReorg:
		if o.Depth > l.tip {
			return reorgTooDeep(l.tip)
		}
	}
	return nil
}

// reorgTooDeep is the error of a reorg deeper than the chain.
func reorgTooDeep(tip int) error {
	if tip == 0 {
		return payd.FieldError("depth", "there are no blocks to orphan yet: mine some first")
	}
	return payd.FieldError("depth", "depth must be from 1 to the current height, %d", tip)
}

// apply changes the state by o, which check and allows have passed, and
// wakes whoever waits on changed.
func (l *ledger) apply(o op) {
	switch o.Kind {
	case opTransfer:
		l.add(&tx{hash: o.TxHash, amount: o.amount(), to: o.To, from: o.From, reference: o.Reference})
	case opMine:
		l.mine(o.Count)
	case opReorg:
		l.reorg(o.Depth)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// add puts a new transaction in the mempool.
func (l *ledger) add(t *tx) {
	l.mempool = append(l.mempool, t)
	l.byHash[l.hashKey(t.hash)] = t
	if k := l.txKey(t); k != "" {
		l.byKey[k] = append(l.byKey[k], t)
	}
}

// mine adds count blocks: the first takes the whole mempool, the others
// are empty.
func (l *ledger) mine(count int) {
	for _, t := range l.mempool {
		t.height = l.tip + 1
	}
	l.mined = append(l.mined, l.mempool...)
	l.mempool = nil
	l.tip += count
}

// reorg orphans the last depth blocks. Their transactions go back to the
// mempool in block order, ahead of those that arrived after them.
func (l *ledger) reorg(depth int) {
	l.tip -= depth
	i := len(l.mined)
	for i > 0 && l.mined[i-1].height > l.tip {
		i--
	}
	orphans := append([]*tx(nil), l.mined[i:]...)
	for _, t := range orphans {
		t.height = 0
	}
	l.mined = l.mined[:i]
	l.mempool = append(orphans, l.mempool...)
}

// confirmations is 0 in the mempool, 1 in the tip block, and one more for
// every block on top.
func (l *ledger) confirmations(t *tx) int {
	if t.height == 0 {
		return 0
	}
	return l.tip - t.height + 1
}

// transfer reports t as payd sees it. Off solana, To is the deposit's own
// spelling of the address, which the sender may have written in another
// case.
func (l *ledger) transfer(t *tx, to string) payd.Transfer {
	return payd.Transfer{
		TxHash: t.hash, From: t.from, To: to, Reference: t.reference,
		Amount:        money.CoinAmount{Asset: t.amount.Asset, Units: new(big.Int).Set(t.amount.Units)},
		Confirmations: l.confirmations(t),
	}
}
