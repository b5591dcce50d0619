package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"slices"
	"time"

	"payd"
	"payd/money"
)

// The followers' tables (migration 17); see payd.ChainStore and
// docs/networks.md.

// ChainHead returns the last block processed on n; see payd.ChainStore.
func (q *queries) ChainHead(ctx context.Context, n money.Network) (_ payd.Block, err error) {
	defer fail(&err, "chain block", "store.ChainHead(%s)", n)
	return scanBlock(q.ex.QueryRowContext(ctx, `SELECT height, hash, parent FROM chain_blocks
		WHERE network = $1 ORDER BY height DESC LIMIT 1`, string(n)))
}

// ChainBlock returns the processed block at height; see payd.ChainStore.
func (q *queries) ChainBlock(ctx context.Context, n money.Network, height int64) (_ payd.Block, err error) {
	defer fail(&err, "chain block", "store.ChainBlock(%s, %d)", n, height)
	return scanBlock(q.ex.QueryRowContext(ctx, `SELECT height, hash, parent FROM chain_blocks
		WHERE network = $1 AND height = $2`, string(n), height))
}

func scanBlock(row rowScanner) (payd.Block, error) {
	var b payd.Block
	err := row.Scan(&b.Height, &b.Hash, &b.Parent)
	return b, err
}

// AddChainBlock stores b and its transfers as confirmed in it; see
// payd.ChainStore. A transfer stored while it waited takes the block. The
// block must connect: conflict when a block is stored at the height below
// and is not b's parent, so two followers racing (a lease lost mid-run)
// can never leave an orphan buried under a block that does connect.
func (q *queries) AddChainBlock(ctx context.Context, n money.Network, b payd.Block, now time.Time) (err error) {
	defer fail(&err, "chain block", "store.AddChainBlock(%s, %d)", n, b.Height)
	var below string
	err = q.ex.QueryRowContext(ctx, `SELECT hash FROM chain_blocks WHERE network = $1 AND height = $2`+q.lockRow(),
		string(n), b.Height-1).Scan(&below)
	switch {
	case err == nil && below != b.Parent:
		return payd.Errorf(payd.ErrConflict, "block %s at %d does not connect to the stored block %s below it",
			b.Hash, b.Height, below)
	case err != nil && err != sql.ErrNoRows:
		return err
	}
	if _, err := q.ex.ExecContext(ctx, `INSERT INTO chain_blocks (network, height, hash, parent, stored_at)
		VALUES ($1, $2, $3, $4, $5)`, string(n), b.Height, b.Hash, b.Parent, micros(now)); err != nil {
		return err
	}
	for _, t := range b.Transfers {
		if _, err := q.ex.ExecContext(ctx, insertChainTransfer+`
			ON CONFLICT (network, tx_hash, idx) DO UPDATE SET height = excluded.height, block_hash = excluded.block_hash`,
			chainTransferArgs(n, t, b.Height, b.Hash, now)...); err != nil {
			return err
		}
	}
	return nil
}

const insertChainTransfer = `INSERT INTO chain_transfers (network, tx_hash, idx, address, reference, from_address,
	asset, amount, height, block_hash, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

// chainTransferArgs are insertChainTransfer's arguments; height 0 stores
// an unconfirmed transfer (NULL height and block).
func chainTransferArgs(n money.Network, t payd.Transfer, height int64, hash string, now time.Time) []any {
	amount := "0"
	if t.Amount.Units != nil {
		amount = t.Amount.Units.String()
	}
	var h, bh any
	if height > 0 {
		h, bh = height, hash
	}
	return []any{string(n), t.TxHash, t.Index, t.To, t.Reference, t.From, string(t.Amount.Asset), amount, h, bh,
		micros(now)}
}

// UnwindChainBlock forgets an orphaned block; see payd.ChainStore. It
// names the block by height and hash: not_found when another block is
// stored there now (another follower moved on), which changes nothing.
func (q *queries) UnwindChainBlock(ctx context.Context, n money.Network, b payd.BlockRef) (err error) {
	defer fail(&err, "chain block", "store.UnwindChainBlock(%s, %d)", n, b.Height)
	if err := affected(q.ex.ExecContext(ctx, `DELETE FROM chain_blocks WHERE network = $1 AND height = $2 AND hash = $3`,
		string(n), b.Height, b.Hash)); err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `UPDATE chain_transfers SET height = NULL, block_hash = NULL
		WHERE network = $1 AND block_hash = $2`, string(n), b.Hash)
	return err
}

// AddPendingTransfers stores waiting transfers; see payd.ChainStore.
func (q *queries) AddPendingTransfers(ctx context.Context, n money.Network, ts []payd.Transfer, now time.Time) (err error) {
	defer fail(&err, "chain transfer", "store.AddPendingTransfers(%s)", n)
	for _, t := range ts {
		if _, err := q.ex.ExecContext(ctx, insertChainTransfer+` ON CONFLICT (network, tx_hash, idx) DO NOTHING`,
			chainTransferArgs(n, t, 0, "", now)...); err != nil {
			return err
		}
	}
	return nil
}

// UnconfirmedTxs lists the transactions of unconfirmed transfers; see
// payd.ChainStore.
func (q *queries) UnconfirmedTxs(ctx context.Context, n money.Network) (_ []string, err error) {
	defer fail(&err, "chain transfer", "store.UnconfirmedTxs(%s)", n)
	all, err := queryAll(ctx, q.ex, scanString, `SELECT tx_hash FROM chain_transfers
		WHERE network = $1 AND block_hash IS NULL`, string(n))
	slices.Sort(all)
	return slices.Compact(all), err
}

// DropUnconfirmed deletes the unconfirmed transfers of txs; see
// payd.ChainStore.
func (q *queries) DropUnconfirmed(ctx context.Context, n money.Network, txs []string) (err error) {
	defer fail(&err, "chain transfer", "store.DropUnconfirmed(%s)", n)
	for _, tx := range txs {
		if _, err := q.ex.ExecContext(ctx, `DELETE FROM chain_transfers
			WHERE network = $1 AND tx_hash = $2 AND block_hash IS NULL`, string(n), tx); err != nil {
			return err
		}
	}
	return nil
}

// ChainTransfers returns the stored transfers into the deposits; see
// payd.ChainStore. It asks for their addresses and their references apart
// (what pairs them up is the caller's): off solana the reference is
// always "", and on solana one wallet address holds every checkout, so
// chain_transfers_deposit finds the references of the deposits asked for
// instead of every transfer the wallet ever received.
func (q *queries) ChainTransfers(ctx context.Context, n money.Network, deposits []payd.Deposit) (_ []payd.ChainTransfer, err error) {
	defer fail(&err, "chain transfer", "store.ChainTransfers(%s, %d deposits)", n, len(deposits))
	if len(deposits) == 0 {
		return nil, nil
	}
	addrs, refs := map[string]bool{}, map[string]bool{}
	args := []any{string(n)}
	for _, d := range deposits {
		if !addrs[d.Address] {
			addrs[d.Address] = true
			args = append(args, d.Address)
		}
	}
	for _, d := range deposits {
		if !refs[d.Reference] {
			refs[d.Reference] = true
			args = append(args, d.Reference)
		}
	}
	return queryAll(ctx, q.ex, scanChainTransfer, `SELECT tx_hash, idx, address, reference, from_address, asset,
		amount, height FROM chain_transfers WHERE network = $1 AND address IN (`+placeholders(2, len(addrs))+`)
		AND reference IN (`+placeholders(2+len(addrs), len(refs))+`) ORDER BY seen_at, tx_hash, idx`, args...)
}

func scanChainTransfer(row rowScanner) (payd.ChainTransfer, error) {
	var t payd.ChainTransfer
	var asset, amount string
	var height sql.NullInt64
	if err := row.Scan(&t.TxHash, &t.Index, &t.To, &t.Reference, &t.From, &asset, &amount, &height); err != nil {
		return t, err
	}
	units, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		return t, fmt.Errorf("stored chain amount %q is not an integer", amount)
	}
	t.Amount, t.Height = money.CoinAmount{Asset: money.Asset(asset), Units: units}, height.Int64
	return t, nil
}

// PruneChainBlocks deletes processed blocks below height; see
// payd.ChainStore.
func (q *queries) PruneChainBlocks(ctx context.Context, n money.Network, below int64) (err error) {
	defer fail(&err, "chain block", "store.PruneChainBlocks(%s, %d)", n, below)
	_, err = q.ex.ExecContext(ctx, `DELETE FROM chain_blocks WHERE network = $1 AND height < $2`, string(n), below)
	return err
}

// WatchedDeposits returns the deposits of n's watched checkouts created
// since; see payd.ChainStore. From the zero time it reads the watched
// range of checkouts_watched; later the newest rows of
// checkouts_network_created.
func (q *queries) WatchedDeposits(ctx context.Context, n money.Network, now, since time.Time) (_ []payd.Deposit, err error) {
	defer fail(&err, "checkout", "store.WatchedDeposits(%s)", n)
	if since.IsZero() {
		return queryAll(ctx, q.ex, scanDeposit, `SELECT address, reference FROM checkouts
			WHERE network = $1 AND watch_until > $2`, string(n), micros(now))
	}
	// +watch_until keeps SQLite, which has no statistics, on
	// checkouts_network_created: the range of the last minute, not every
	// watched checkout.
	return queryAll(ctx, q.ex, scanDeposit, `SELECT address, reference FROM checkouts
		WHERE network = $1 AND created_at >= $2 AND +watch_until > $3`, string(n), micros(since), micros(now))
}

func scanDeposit(row rowScanner) (payd.Deposit, error) {
	var d payd.Deposit
	err := row.Scan(&d.Address, &d.Reference)
	return d, err
}

// SaveChainStatus stores a network's status; see payd.ChainStore.
func (q *queries) SaveChainStatus(ctx context.Context, s payd.ChainStatus) (err error) {
	defer fail(&err, "chain status", "store.SaveChainStatus(%s)", s.Network)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO chain_status (network, chain, tip_height, tip_hash, head_height,
		head_hash, error, checked_at, failing_since) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (network) DO UPDATE SET
		chain = CASE WHEN excluded.chain = '' THEN chain_status.chain ELSE excluded.chain END, tip_height = excluded.tip_height,
		tip_hash = excluded.tip_hash, head_height = excluded.head_height, head_hash = excluded.head_hash,
		error = excluded.error, checked_at = excluded.checked_at, failing_since = excluded.failing_since`,
		string(s.Network), s.Chain, s.Tip.Height, s.Tip.Hash, s.Head.Height, s.Head.Hash, s.Error,
		micros(s.CheckedAt), nullMicros(s.FailingSince))
	return err
}

// ChainStatuses returns every network's status; see payd.ChainStore.
func (q *queries) ChainStatuses(ctx context.Context) (_ []payd.ChainStatus, err error) {
	defer fail(&err, "chain status", "store.ChainStatuses")
	return queryAll(ctx, q.ex, func(row rowScanner) (payd.ChainStatus, error) {
		var s payd.ChainStatus
		var checked int64
		var failing sql.NullInt64
		err := row.Scan(&s.Network, &s.Chain, &s.Tip.Height, &s.Tip.Hash, &s.Head.Height, &s.Head.Hash, &s.Error,
			&checked, &failing)
		s.CheckedAt, s.FailingSince = fromMicros(checked), fromNullMicros(failing)
		return s, err
	}, `SELECT network, chain, tip_height, tip_hash, head_height, head_hash, error, checked_at, failing_since
		FROM chain_status ORDER BY network`)
}

// The DB's methods run each query on the read pool or as one write (the
// block and its transfers in one transaction).

// ChainHead returns the last block processed on n; see payd.ChainStore.
func (db *DB) ChainHead(ctx context.Context, n money.Network) (payd.Block, error) {
	return db.reader(ctx).ChainHead(ctx, n)
}

// ChainBlock returns the processed block at height; see payd.ChainStore.
func (db *DB) ChainBlock(ctx context.Context, n money.Network, height int64) (payd.Block, error) {
	return db.reader(ctx).ChainBlock(ctx, n, height)
}

// AddChainBlock stores b and its transfers in one transaction; see
// payd.ChainStore.
func (db *DB) AddChainBlock(ctx context.Context, n money.Network, b payd.Block, now time.Time) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.AddChainBlock(ctx, n, b, now) })
}

// UnwindChainBlock forgets an orphaned block in one transaction; see
// payd.ChainStore.
func (db *DB) UnwindChainBlock(ctx context.Context, n money.Network, b payd.BlockRef) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.UnwindChainBlock(ctx, n, b) })
}

// AddPendingTransfers stores waiting transfers; see payd.ChainStore.
func (db *DB) AddPendingTransfers(ctx context.Context, n money.Network, ts []payd.Transfer, now time.Time) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.AddPendingTransfers(ctx, n, ts, now) })
}

// UnconfirmedTxs lists the transactions of unconfirmed transfers; see
// payd.ChainStore.
func (db *DB) UnconfirmedTxs(ctx context.Context, n money.Network) ([]string, error) {
	return db.reader(ctx).UnconfirmedTxs(ctx, n)
}

// DropUnconfirmed deletes the unconfirmed transfers of txs; see
// payd.ChainStore.
func (db *DB) DropUnconfirmed(ctx context.Context, n money.Network, txs []string) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.DropUnconfirmed(ctx, n, txs) })
}

// ChainTransfers returns the stored transfers into the deposits; see
// payd.ChainStore.
func (db *DB) ChainTransfers(ctx context.Context, n money.Network, deposits []payd.Deposit) ([]payd.ChainTransfer, error) {
	return db.reader(ctx).ChainTransfers(ctx, n, deposits)
}

// PruneChainBlocks deletes processed blocks below height; see
// payd.ChainStore.
func (db *DB) PruneChainBlocks(ctx context.Context, n money.Network, below int64) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.PruneChainBlocks(ctx, n, below) })
}

// WatchedDeposits returns the deposits of n's watched checkouts; see
// payd.ChainStore.
func (db *DB) WatchedDeposits(ctx context.Context, n money.Network, now, since time.Time) ([]payd.Deposit, error) {
	return db.reader(ctx).WatchedDeposits(ctx, n, now, since)
}

// SaveChainStatus stores a network's status; see payd.ChainStore.
func (db *DB) SaveChainStatus(ctx context.Context, s payd.ChainStatus) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveChainStatus(ctx, s) })
}

// ChainStatuses returns every network's status; see payd.ChainStore.
func (db *DB) ChainStatuses(ctx context.Context) ([]payd.ChainStatus, error) {
	return db.reader(ctx).ChainStatuses(ctx)
}
