// Package devnet simulates every network payd serves (bitcoin, ethereum,
// polygon, solana, tron) in-process, for `payd serve --dev` and for tests
// (DESIGN §4). Each network has real address formats, transaction hashes
// that pass the network's own checks, a mempool and numbered blocks; the
// devnet routes of CONTRACT.md (and `payd devnet pay|mine|reorg`) send
// coins, mine blocks and reorganise the chain, and each network is a
// payd.Network that the chain watcher reads like a real one.
//
// Every operation is appended to a log in the database before it is
// acknowledged, and New replays that log, so the simulated chains survive
// a crash of the process like the rest of payd's state. Operations are
// serialised by one mutex: the devnet lives in one process, and two
// processes must not drive one devnet log (docs/devnet.md).
package devnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"payd"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// Log is where the devnet keeps its operations; store.DB implements it
// with a table. The devnet is its only writer.
type Log interface {
	// AppendDevnetOp adds op at the end of the log and returns once it is
	// durable: the devnet acknowledges nothing before. Any error leaves
	// the op out.
	AppendDevnetOp(ctx context.Context, op []byte) error
	// DevnetOps returns every op appended, oldest first.
	DevnetOps(ctx context.Context) ([][]byte, error)
}

// Devnet is the simulated networks. It is safe for concurrent use.
type Devnet struct {
	log          Log
	clock        clock.Clock
	explorerBase string
	// opMu serialises operations from validation through the log append
	// to the change, so the log's order is the order of the changes.
	opMu sync.Mutex
	// mu guards the ledgers; readers take it briefly and never wait for
	// the database.
	mu      sync.RWMutex
	ledgers map[money.Network]*ledger
	chains  map[money.Network]*Chain
	// keys keeps the wallets' parsed account keys for Chain.Deposit.
	keys *hd.KeyCache
}

// maxCachedKeys bounds the parsed account keys kept: one per wallet and
// network in use.
const maxCachedKeys = 4096

// New rebuilds the devnet from log and returns it. clk stamps the
// operations; explorerBase is the API base URL under which
// GET /devnet/transactions/{network}/{hash} serves a transaction
// (http://127.0.0.1:8080/api/v1), the explorer every ExplorerURL points
// to. A log entry that does not decode or apply stops New with an error:
// a devnet that silently dropped it would disagree with what was
// acknowledged.
func New(ctx context.Context, log Log, clk clock.Clock, explorerBase string) (*Devnet, error) {
	if log == nil || clk == nil {
		return nil, errors.New("devnet.New: a log and a clock are required")
	}
	d := &Devnet{log: log, clock: clk, explorerBase: strings.TrimRight(explorerBase, "/"),
		ledgers: map[money.Network]*ledger{}, chains: map[money.Network]*Chain{}, keys: hd.NewKeyCache(maxCachedKeys)}
	for _, n := range money.Networks {
		d.ledgers[n] = newLedger(n)
		d.chains[n] = &Chain{d: d, n: n}
	}
	ops, err := log.DevnetOps(ctx)
	if err != nil {
		return nil, fmt.Errorf("devnet.New: reading the log: %w", err)
	}
	for i, b := range ops {
		o, err := decodeOp(b)
		if err == nil {
			err = d.ledgers[o.Network].allows(o)
		}
		if err != nil {
			return nil, fmt.Errorf("devnet.New: replaying op %d: %w", i+1, err)
		}
		d.ledgers[o.Network].apply(o)
	}
	return d, nil
}

// Network returns the simulated network n as a payd.Network (a *Chain),
// or nil when n is not one payd serves.
func (d *Devnet) Network(n money.Network) payd.Network {
	if c := d.chains[n]; c != nil {
		return c
	}
	return nil
}

// Chain returns the simulated network n, or nil when n is not one payd
// serves.
func (d *Devnet) Chain(n money.Network) *Chain { return d.chains[n] }

// Changed returns a channel that is closed at the next change of network
// n (a transfer, mined blocks, a reorg), so a watcher wakes at once
// instead of polling. Take the channel before reading the network: a
// change in between then still wakes the reader. Each change brings a new
// channel. For a network payd does not serve it is nil, which blocks
// forever.
func (d *Devnet) Changed(n money.Network) <-chan struct{} {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if l := d.ledgers[n]; l != nil {
		return l.changed
	}
	return nil
}

// Height returns the height of network n's last block: 0 before any is
// mined, and for a network payd does not serve.
func (d *Devnet) Height(n money.Network) int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if l := d.ledgers[n]; l != nil {
		return l.tip
	}
	return 0
}

// Mine adds count blocks (1 to 1000) to network, the first of them taking
// every transaction in the mempool, and returns the new height. Errors:
// invalid_request naming network or count; any other error is the log's.
func (d *Devnet) Mine(ctx context.Context, network string, count int) (height int, err error) {
	n, err := parseNetwork(network)
	if err != nil {
		return 0, err
	}
	if count < 1 || count > maxBlocks {
		return 0, payd.FieldError("count", "count must be from 1 to %d", maxBlocks)
	}
	return d.commit(ctx, op{Kind: opMine, Network: n, Count: count})
}

// Reorg orphans the last depth blocks of network and returns the new
// height. Their transactions go back to the mempool, with 0
// confirmations, until blocks are mined again. Errors: invalid_request
// naming network or depth (1 to the current height); any other error is
// the log's.
func (d *Devnet) Reorg(ctx context.Context, network string, depth int) (height int, err error) {
	n, err := parseNetwork(network)
	if err != nil {
		return 0, err
	}
	if depth < 1 {
		return 0, payd.FieldError("depth", "depth must be at least 1")
	}
	return d.commit(ctx, op{Kind: opReorg, Network: n, Depth: depth})
}

// Transfer sends a coin to an address on a simulated network: the
// transaction waits in the mempool (0 confirmations) until a block is
// mined. It returns the transaction's hash. Errors: invalid_request naming
// the field at fault (network, asset, to, amount, from, reference); any
// other error is the log's.
func (d *Devnet) Transfer(ctx context.Context, req TransferRequest) (txHash string, err error) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	o, err := d.transferOp(req)
	if err != nil {
		return "", err
	}
	if _, err := d.commitLocked(ctx, o); err != nil {
		return "", err
	}
	return o.TxHash, nil
}

// Transaction returns what the devnet knows of one transaction: the
// transfer as a watcher sees it now. not_found when network holds no
// transaction by that hash.
func (d *Devnet) Transaction(network, txHash string) (payd.Transfer, error) {
	n, _ := money.ParseNetwork(network)
	d.mu.RLock()
	defer d.mu.RUnlock()
	if l := d.ledgers[n]; l != nil {
		if t := l.byHash[l.hashKey(txHash)]; t != nil {
			return l.transfer(t, t.to), nil
		}
	}
	return payd.Transfer{}, payd.Errorf(payd.ErrNotFound, "no transaction %q on the %s devnet", txHash, network)
}

// commit runs one mine or reorg op under the operation lock.
func (d *Devnet) commit(ctx context.Context, o op) (int, error) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	return d.commitLocked(ctx, o)
}

// commitLocked stamps o, checks it against the state, makes it durable in
// the log, then applies it, and returns the network's height after it.
// The caller holds opMu, so the state it checked is the state it changes.
func (d *Devnet) commitLocked(ctx context.Context, o op) (int, error) {
	o.V = opVersion
	o.At = d.clock.Now().UnixMicro()
	l := d.ledgers[o.Network]
	if err := o.check(); err != nil {
		return 0, fmt.Errorf("devnet: refusing an op it built: %w", err)
	}
	if err := l.allows(o); err != nil {
		return 0, err
	}
	if err := d.log.AppendDevnetOp(ctx, o.encode()); err != nil {
		return 0, fmt.Errorf("devnet: logging a %s op: %w", o.Kind, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	l.apply(o)
	return l.tip, nil
}

// parseNetwork reads a network name from a request.
func parseNetwork(s string) (money.Network, error) {
	n, ok := money.ParseNetwork(s)
	if !ok {
		return "", payd.FieldError("network", "network must be one of bitcoin, ethereum, polygon, solana, tron")
	}
	return n, nil
}
