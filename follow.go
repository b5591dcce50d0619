package payd

import (
	"context"
	"time"

	"payd/money"
)

// ChainTransfer is a transfer a follower stored: in a block of the chain
// it follows (Height > 0) or waiting unconfirmed (Height 0).
type ChainTransfer struct {
	Transfer
	Height int64
}

// ChainStatus is how the follower of one real network last found its node,
// for operators (payd networks) and for the API, which offers no new
// checkout on a network whose node cannot be read.
type ChainStatus struct {
	Network money.Network
	// Chain is which chain the node follows (payd.Node.Chain).
	Chain string
	// Tip is the node's best block when last read; Head the last block
	// the follower processed.
	Tip, Head BlockRef
	// Error is the last read's failure, "" when it succeeded.
	Error string
	// CheckedAt is when the follower last read the node; FailingSince
	// when its reads began to fail (nil while they succeed).
	CheckedAt    time.Time
	FailingSince *time.Time
}

// Lag is how many blocks the follower is behind the node's tip.
func (s ChainStatus) Lag() int64 { return max(0, s.Tip.Height-s.Head.Height) }

// ChainStore keeps what the followers of real networks read and write
// (DESIGN §4): the blocks processed, with their hashes to find reorgs by;
// the transfers into watched deposits; each network's status.
type ChainStore interface {
	// ChainHead returns the last block processed on n; not_found before any.
	ChainHead(ctx context.Context, n money.Network) (Block, error)
	// ChainBlock returns the processed block of n at height; not_found
	// when there is none.
	ChainBlock(ctx context.Context, n money.Network, height int64) (Block, error)
	// AddChainBlock stores b as processed, and its transfers as confirmed
	// in it (those stored while they waited included). conflict when the
	// block stored at the height below is not b's parent.
	AddChainBlock(ctx context.Context, n money.Network, b Block, now time.Time) error
	// UnwindChainBlock forgets the processed block b of n, orphaned by a
	// reorg: its transfers are unconfirmed again. not_found when b is not
	// the block stored at its height.
	UnwindChainBlock(ctx context.Context, n money.Network, b BlockRef) error
	// AddPendingTransfers stores transfers waiting unconfirmed; those
	// stored already are left as they are.
	AddPendingTransfers(ctx context.Context, n money.Network, ts []Transfer, now time.Time) error
	// UnconfirmedTxs lists the transactions of n's unconfirmed transfers.
	UnconfirmedTxs(ctx context.Context, n money.Network) ([]string, error)
	// DropUnconfirmed deletes the unconfirmed transfers of the
	// transactions: replaced, double-spent, or orphaned and gone.
	DropUnconfirmed(ctx context.Context, n money.Network, txs []string) error
	// ChainTransfers returns the stored transfers of n into the deposits:
	// to one of their addresses with one of their references (on solana,
	// where one wallet address takes every checkout, the reference tells
	// them apart). It may return more; the caller matches each to its
	// deposit.
	ChainTransfers(ctx context.Context, n money.Network, deposits []Deposit) ([]ChainTransfer, error)
	// PruneChainBlocks deletes the processed blocks of n below height;
	// the transfers stay.
	PruneChainBlocks(ctx context.Context, n money.Network, below int64) error
	// WatchedDeposits returns the deposits of the checkouts on n watched
	// at now (taking funds, or late ones) created at or after since.
	WatchedDeposits(ctx context.Context, n money.Network, now, since time.Time) ([]Deposit, error)
	// SaveChainStatus stores the network's status; an empty Chain keeps the
	// stored one.
	SaveChainStatus(ctx context.Context, s ChainStatus) error
	// ChainStatuses returns every network's status, by network.
	ChainStatuses(ctx context.Context) ([]ChainStatus, error)
}
