package evm

import (
	"cmp"
	"context"
	"math/big"
	"slices"

	"payd"
	"payd/hd"
	"payd/money"
)

// transferTopic is topics[0] of an ERC-20 Transfer(address indexed from,
// address indexed to, uint256 value) log: keccak256 of the event's
// signature.
var transferTopic = hash32{
	0xdd, 0xf2, 0x52, 0xad, 0x1b, 0xe2, 0xc8, 0x9b, 0x69, 0xc2, 0xb0, 0x68, 0xfc, 0x37, 0x8d, 0xaa,
	0x95, 0x2b, 0xa7, 0xf1, 0x63, 0xc4, 0xa1, 0x16, 0x28, 0xf5, 0x5a, 0x4d, 0xf5, 0x23, 0xb3, 0xef,
}

// NativeIndex is the Transfer.Index of a transaction's own value, the ether
// it sends its recipient. A token transfer's Index is never negative (see
// tokenTransfers), so (TxHash, Index) names one transfer even when a
// transaction both pays ether and emits logs.
const NativeIndex = -1

// maxLogIndex bounds a log's index: a block holds far fewer logs, and an
// index that does not fit an int32 is a node answering nonsense.
const maxLogIndex = 1<<31 - 1

// rpcBlock is what BlockAt reads of eth_getBlockByNumber.
type rpcBlock struct {
	Number       quantity `json:"number"`
	Hash         hash32   `json:"hash"`
	ParentHash   hash32   `json:"parentHash"`
	Transactions []rpcTx  `json:"transactions"`
}

// rpcHeader is a block read without its transactions (they come as
// hashes, which it leaves out).
type rpcHeader struct {
	Number     quantity `json:"number"`
	Hash       hash32   `json:"hash"`
	ParentHash hash32   `json:"parentHash"`
}

// rpcTx is what BlockAt reads of a transaction: To is nil for a contract
// creation.
type rpcTx struct {
	Hash  hash32      `json:"hash"`
	From  account     `json:"from"`
	To    *account    `json:"to"`
	Value bigQuantity `json:"value"`
}

// rpcReceipt is what BlockAt reads of a receipt: Status is 1 for success
// and 0 for a reverted transaction. Receipts from before the Byzantium fork
// (2017) have no status; payd reads no such block.
type rpcReceipt struct {
	BlockHash hash32    `json:"blockHash"`
	Status    *quantity `json:"status"`
}

// rpcLog is one log of eth_getLogs.
type rpcLog struct {
	Address   account  `json:"address"`
	Topics    []hash32 `json:"topics"`
	Data      data     `json:"data"`
	BlockHash hash32   `json:"blockHash"`
	TxHash    hash32   `json:"transactionHash"`
	LogIndex  quantity `json:"logIndex"`
	Removed   bool     `json:"removed"`
}

// Tip is the node's latest block, read with one call so that its height and
// hash belong together.
func (n *Node) Tip(ctx context.Context) (payd.BlockRef, error) {
	var h *rpcHeader
	if err := n.rpc.call(ctx, &h, "eth_getBlockByNumber", "latest", false); err != nil {
		return payd.BlockRef{}, err
	}
	if h == nil {
		return payd.BlockRef{}, n.rpc.fail("eth_getBlockByNumber: no latest block")
	}
	return payd.BlockRef{Height: int64(h.Number), Hash: h.Hash.String()}, nil
}

// BlockAt reads the block at height on the node's best chain and the
// transfers in it to the addresses in w: transactions whose recipient is
// watched and whose value is positive, when they succeeded (on ethereum;
// polygon's native POL is no payd coin), and the Transfer logs of the
// configured tokens whose recipient is watched, with a positive amount.
// The logs are asked by the block's hash (EIP-234), so they are the logs
// of the block read even if the chain reorganizes meanwhile; a receipt
// from another block means it did, and BlockAt fails rather than mix two
// blocks. upstream_unavailable when the node has no block at height or
// cannot be read.
func (n *Node) BlockAt(ctx context.Context, height int64, w payd.Watched) (payd.Block, error) {
	if height < 0 {
		return payd.Block{}, payd.Errorf(payd.ErrInternal, "evm: BlockAt(%d): negative height", height)
	}
	b, err := n.block(ctx, height)
	if err != nil {
		return payd.Block{}, err
	}
	block := payd.Block{BlockRef: payd.BlockRef{Height: height, Hash: b.Hash.String()}, Parent: b.ParentHash.String()}
	native, err := n.nativeTransfers(ctx, b, w)
	if err != nil {
		return payd.Block{}, err
	}
	tokens, err := n.tokenTransfers(ctx, b.Hash, w)
	if err != nil {
		return payd.Block{}, err
	}
	block.Transfers = append(native, tokens...)
	return block, nil
}

// block reads the block at height: with its transactions in full where
// the native coin is a payd coin (ethereum), else without them (polygon).
func (n *Node) block(ctx context.Context, height int64) (*rpcBlock, error) {
	num := hexQuantity(uint64(height))
	var b *rpcBlock
	var err error
	if n.network.Native() != "" {
		err = n.rpc.call(ctx, &b, "eth_getBlockByNumber", num, true)
	} else {
		var h *rpcHeader
		err = n.rpc.call(ctx, &h, "eth_getBlockByNumber", num, false)
		if h != nil {
			b = &rpcBlock{Number: h.Number, Hash: h.Hash, ParentHash: h.ParentHash}
		}
	}
	if err != nil {
		return nil, err
	}
	if b == nil || int64(b.Number) != height {
		return nil, n.rpc.fail("eth_getBlockByNumber: no block at height %d", height)
	}
	return b, nil
}

// nativeTransfers are b's successful transactions paying ether to a
// watched address.
func (n *Node) nativeTransfers(ctx context.Context, b *rpcBlock, w payd.Watched) ([]payd.Transfer, error) {
	var matched []rpcTx
	for _, tx := range b.Transactions {
		if tx.To != nil && tx.Value.Sign() > 0 && w.Has(string(tx.To[:])) {
			matched = append(matched, tx)
		}
	}
	if len(matched) == 0 {
		return nil, nil
	}
	receipts := make([]*rpcReceipt, len(matched))
	calls := make([]rpcCall, len(matched))
	for i, tx := range matched {
		calls[i] = rpcCall{"eth_getTransactionReceipt", []any{tx.Hash.String()}, &receipts[i]}
	}
	if err := n.rpc.batch(ctx, calls); err != nil {
		return nil, err
	}
	var out []payd.Transfer
	for i, tx := range matched {
		r := receipts[i]
		if r == nil || r.BlockHash != b.Hash {
			return nil, n.rpc.fail("the receipt of %s is not in block %s: the chain moved while it was read", tx.Hash, b.Hash)
		}
		if r.Status != nil && *r.Status == 0 {
			continue // reverted: no ether moved
		}
		out = append(out, payd.Transfer{
			TxHash: tx.Hash.String(), Index: NativeIndex, From: addressOf(tx.From), To: addressOf(*tx.To),
			Amount: money.CoinAmount{Asset: money.ETH, Units: new(big.Int).Set(&tx.Value.Int)},
		})
	}
	return out, nil
}

// tokenTransfers are the Transfer logs of the configured tokens in the
// block hash to watched addresses.
//
// A transfer's Index is the log's position among the logs the filter
// matched in its own transaction (0, 1, 2… in logIndex order), not the
// log's logIndex: logIndex numbers the logs of the whole block, so a
// transaction that a reorg mines again at another place in a block, or in
// a block with other logs before it, gets other logIndexes, and the store,
// which keys transfers by (TxHash, Index), would see a second transfer
// beside the first. The position within the transaction is the same in
// every block the transaction lands in. It depends on the configured
// contracts, which a restart may change: a transaction paying two
// configured tokens keeps its indexes only while both stay configured.
func (n *Node) tokenTransfers(ctx context.Context, hash hash32, w payd.Watched) ([]payd.Transfer, error) {
	if len(n.byToken) == 0 {
		return nil, nil
	}
	contracts := make([]string, 0, len(n.byToken))
	for acc := range n.byToken {
		contracts = append(contracts, addressOf(acc))
	}
	filter := map[string]any{
		"blockHash": hash.String(),
		"address":   contracts,
		"topics":    []any{[]string{transferTopic.String()}},
	}
	var logs []rpcLog
	if err := n.rpc.call(ctx, &logs, "eth_getLogs", filter); err != nil {
		return nil, err
	}
	for _, l := range logs {
		if l.BlockHash != hash {
			return nil, n.rpc.fail("eth_getLogs: a log of block %s answered for %s", l.BlockHash, hash)
		}
	}
	// A node answers the logs in logIndex order; sorting keeps the indexes
	// stable with one that does not.
	slices.SortStableFunc(logs, func(a, b rpcLog) int { return cmp.Compare(a.LogIndex, b.LogIndex) })
	var out []payd.Transfer
	pos := map[hash32]int{}
	for _, l := range logs {
		if !n.matches(l) {
			continue // not what the filter asked: no place to take
		}
		i := pos[l.TxHash]
		pos[l.TxHash] = i + 1
		if t, ok := n.tokenTransfer(l, i, w); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// tokenTransfer reads one log as a transfer to a watched address: an
// ERC-20 Transfer of a configured token, not removed by a reorg, with
// three topics (an ERC-721 Transfer has four), a 32-byte amount above
// zero (zero transfers are how address-poisoning spam looks like a
// payment), a recipient topic that is a 20-byte address and a log index a
// block can hold. index is the log's place in its transaction.
func (n *Node) tokenTransfer(l rpcLog, index int, w payd.Watched) (payd.Transfer, bool) {
	asset, ok := n.byToken[l.Address]
	if !ok || l.Removed || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 || l.LogIndex > maxLogIndex {
		return payd.Transfer{}, false
	}
	to, ok := topicAccount(l.Topics[2])
	if !ok || !w.Has(string(to[:])) {
		return payd.Transfer{}, false
	}
	from, ok := topicAccount(l.Topics[1])
	if !ok {
		return payd.Transfer{}, false
	}
	amount := new(big.Int).SetBytes(l.Data)
	if amount.Sign() == 0 {
		return payd.Transfer{}, false
	}
	return payd.Transfer{
		TxHash: l.TxHash.String(), Index: index, From: addressOf(from), To: addressOf(to),
		Amount: money.CoinAmount{Asset: asset, Units: amount},
	}, true
}

// matches reports whether l is what tokenTransfers' filter asks for: a log
// of a configured contract whose first topic is Transfer's, not removed.
func (n *Node) matches(l rpcLog) bool {
	_, ok := n.byToken[l.Address]
	return ok && !l.Removed && len(l.Topics) > 0 && l.Topics[0] == transferTopic
}

// topicAccount is the address in an indexed address topic: 12 zero bytes
// and the 20 of the account.
func topicAccount(t hash32) (account, bool) {
	var acc account
	for _, b := range t[:12] {
		if b != 0 {
			return acc, false
		}
	}
	copy(acc[:], t[12:])
	return acc, true
}

// Pending tells which of the unconfirmed transactions are alive: still
// waiting in the node's pool (eth_getTransactionByHash answers them with
// no block), or mined in a block above processed, which the follower has
// yet to read. A transaction mined at or below that height is not alive
// even though the node knows it: the follower read that block (or the
// branch that replaced it) and took its transfers from there, so a
// transfer of it still unconfirmed is one a reorg left behind. Hashes are
// asked in batches; a malformed hash is not alive. It
// reads no mempool for transfers (Transfers is nil): a payment counts from
// its first block, and on ethereum and polygon that comes within seconds.
// upstream_unavailable when the node cannot be read.
func (n *Node) Pending(ctx context.Context, w payd.Watched, unconfirmed []string, processed int64) (payd.Pending, error) {
	p := payd.Pending{Alive: map[string]bool{}}
	if len(unconfirmed) == 0 {
		return p, nil
	}
	found := make([]*struct {
		BlockHash   *hash32   `json:"blockHash"`
		BlockNumber *quantity `json:"blockNumber"`
	}, len(unconfirmed))
	calls := make([]rpcCall, 0, len(unconfirmed))
	for i, h := range unconfirmed {
		if hd.ValidTxHash(n.network, h) == nil { // a node would refuse the whole batch
			calls = append(calls, rpcCall{"eth_getTransactionByHash", []any{h}, &found[i]})
		}
	}
	if err := n.rpc.batch(ctx, calls); err != nil {
		return payd.Pending{}, err
	}
	for i, tx := range found {
		switch {
		case tx == nil:
		case tx.BlockHash == nil || tx.BlockNumber == nil: // waiting in the pool
			p.Alive[unconfirmed[i]] = true
		case int64(*tx.BlockNumber) > processed:
			p.Alive[unconfirmed[i]] = true
		}
	}
	return p, nil
}
