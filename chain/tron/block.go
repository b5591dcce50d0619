package tron

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"payd"
	"payd/chain"
	"payd/hd"
	"payd/money"
)

// The node's answers write hashes, ids, addresses, topics and log data as
// hex without 0x, and numbers as JSON numbers; a field at its zero value
// is left out (protobuf's JSON), so block 0 has no number and a
// successful transaction no top-level result
// (https://developers.tron.network/reference/getblock,
// https://developers.tron.network/reference/gettransactioninfobyblocknum).
// These types decode them and refuse anything else: a node that answers
// out of shape is not believed.

// transferTopic is topics[0] of a TRC-20 (as of an ERC-20)
// Transfer(address indexed from, address indexed to, uint256 value) log.
const transferTopic = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// hash32 is a 32-byte block id or transaction id.
type hash32 [32]byte

// UnmarshalJSON reads a string of 64 hex digits, either case.
func (h *hash32) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("tron: a hash must be a JSON string")
	}
	if len(s) != 64 {
		return errors.New("tron: a hash is 64 hex digits")
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return errors.New("tron: a hash is 64 hex digits")
	}
	return nil
}

// String is the hash as tron writes it: 64 lower-case hex digits.
func (h hash32) String() string { return hex.EncodeToString(h[:]) }

// header is what payd reads of a block from /wallet/getblock: its id,
// its raw_data's number, parent and timestamp and, asked with detail
// true, the ids of its transactions (left out when it has none). An empty
// answer ({}) is no block.
type header struct {
	BlockID     *hash32 `json:"blockID"`
	BlockHeader struct {
		RawData struct {
			Number     int64   `json:"number"`
			ParentHash *hash32 `json:"parentHash"`
			Timestamp  int64   `json:"timestamp"`
		} `json:"raw_data"`
	} `json:"block_header"`
	Transactions []struct {
		TxID hash32 `json:"txID"`
	} `json:"transactions"`
}

// txInfo is what BlockAt reads of one transaction's info: the block it
// was read from (number and timestamp), Result "FAILED" for a failed
// transaction (left out on success), and the receipt's result "SUCCESS"
// for a contract call that succeeded ("REVERT", "OUT_OF_ENERGY"…
// otherwise).
type txInfo struct {
	ID             hash32 `json:"id"`
	BlockNumber    int64  `json:"blockNumber"`
	BlockTimeStamp int64  `json:"blockTimeStamp"`
	Result         string `json:"result"`
	Receipt        struct {
		Result string `json:"result"`
	} `json:"receipt"`
	Log []txLog `json:"log"`
}

// txLog is one log of a transaction's info: the contract's 20-byte
// address and the topics and data in hex.
type txLog struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data"`
}

// Tip is the node's latest block, read with one call so that its height
// and hash belong together.
func (n *Node) Tip(ctx context.Context) (payd.BlockRef, error) {
	var h header
	if err := n.api.post(ctx, "/wallet/getblock", map[string]any{"detail": false}, &h); err != nil {
		return payd.BlockRef{}, err
	}
	if h.BlockID == nil {
		return payd.BlockRef{}, n.api.fail("/wallet/getblock: no latest block")
	}
	return payd.BlockRef{Height: h.BlockHeader.RawData.Number, Hash: h.BlockID.String()}, nil
}

// header reads the block at height, without its transactions.
// upstream_unavailable when the node has none there.
func (n *Node) header(ctx context.Context, height int64) (header, error) {
	h, found, err := n.readBlock(ctx, height, false)
	if err == nil && !found {
		err = n.api.fail("/wallet/getblock: no block at height %d", height)
	}
	return h, err
}

// readBlock reads the block at height, with the ids of its transactions
// when detail is true (/wallet/getblock {id_or_num, detail}); found is
// false when the node has no block there ({}). A block of another height,
// or above 0 without a parent, is a malformed answer.
func (n *Node) readBlock(ctx context.Context, height int64, detail bool) (h header, found bool, err error) {
	req := map[string]any{"id_or_num": strconv.FormatInt(height, 10), "detail": detail}
	if err := n.api.post(ctx, "/wallet/getblock", req, &h); err != nil {
		return header{}, false, err
	}
	if h.BlockID == nil {
		return header{}, false, nil
	}
	if h.BlockHeader.RawData.Number != height || (height > 0 && h.BlockHeader.RawData.ParentHash == nil) {
		return header{}, false, n.api.fail("/wallet/getblock: malformed answer: not a block at height %d", height)
	}
	return h, true, nil
}

// BlockAt reads the block at height on the node's best chain and the
// TRC-20 Transfer logs of the configured tokens in it whose recipient is
// watched, with a positive amount, in transactions that succeeded.
//
// It makes two calls, which a provider's load balancer (TronGrid) may
// send to two backends that disagree: the block with its transactions'
// ids (/wallet/getblock with detail), then their infos
// (/wallet/gettransactioninfobyblocknum), which are asked by height and
// name no block. The infos count only when they are exactly those of the
// block read, by id, at its height and timestamp; infos of a competing
// block at that height would otherwise be stored under this block's hash,
// and never unwound. With no token configured only the header is read.
//
// not_found when the node has no block at height yet, or no infos for
// the transactions of the block it has there: a backend behind the one
// that answered Tip, which the follower reads again on its next run.
// upstream_unavailable when the infos are another block's (the chain
// moved while it was read), or the node cannot be read.
func (n *Node) BlockAt(ctx context.Context, height int64, w payd.Watched) (payd.Block, error) {
	if height < 0 {
		return payd.Block{}, payd.Errorf(payd.ErrInternal, "tron: BlockAt(%d): negative height", height)
	}
	detail := len(n.byToken) > 0
	h, found, err := n.readBlock(ctx, height, detail)
	if err != nil {
		return payd.Block{}, err
	}
	if !found {
		return payd.Block{}, payd.Errorf(payd.ErrNotFound, "tron node %s: no block at height %d yet", n.api.endpoint, height)
	}
	block := payd.Block{BlockRef: payd.BlockRef{Height: height, Hash: h.BlockID.String()}}
	if h.BlockHeader.RawData.ParentHash != nil {
		block.Parent = h.BlockHeader.RawData.ParentHash.String()
	}
	if !detail {
		return block, nil
	}
	var raw json.RawMessage
	if err := n.api.post(ctx, "/wallet/gettransactioninfobyblocknum", map[string]any{"num": height}, &raw); err != nil {
		return payd.Block{}, err
	}
	infos, err := decodeInfos(raw)
	if err != nil {
		return payd.Block{}, n.api.fail("/wallet/gettransactioninfobyblocknum: malformed answer: %s", err)
	}
	if len(infos) == 0 && len(h.Transactions) > 0 {
		return payd.Block{}, payd.Errorf(payd.ErrNotFound, "tron node %s: no transaction infos of block %d yet",
			n.api.endpoint, height)
	}
	if why := otherBlock(h, infos); why != "" {
		return payd.Block{}, n.api.fail("block %d (%s) changed while it was read: %s", height, h.BlockID, why)
	}
	for _, info := range infos {
		block.Transfers = append(block.Transfers, n.transfers(info, w)...)
	}
	return block, nil
}

// otherBlock says why infos are not those of block h, "" when they are:
// one info for each of its transactions, by id, each of its height and
// timestamp. A competing block at the same height has other transactions
// (or, with the same ones, another producer's time slot).
func otherBlock(h header, infos []txInfo) string {
	raw := h.BlockHeader.RawData
	ids := make(map[hash32]int, len(h.Transactions))
	for _, tx := range h.Transactions {
		ids[tx.TxID]++
	}
	for _, info := range infos {
		switch {
		case info.BlockNumber != raw.Number:
			return fmt.Sprintf("the info of %s is of block %d", info.ID, info.BlockNumber)
		case info.BlockTimeStamp != raw.Timestamp:
			return fmt.Sprintf("the info of %s has the time %d, the block %d", info.ID, info.BlockTimeStamp, raw.Timestamp)
		case ids[info.ID] == 0:
			return fmt.Sprintf("the info of %s is of a transaction the block does not hold", info.ID)
		}
		ids[info.ID]--
	}
	if len(infos) != len(h.Transactions) {
		return fmt.Sprintf("%d infos for %d transactions", len(infos), len(h.Transactions))
	}
	return ""
}

// decodeInfos reads gettransactioninfobyblocknum's answer: an array of
// transaction infos, or an empty object for a block without transactions,
// which some versions of the node answer.
func decodeInfos(raw json.RawMessage) ([]txInfo, error) {
	if t := bytes.TrimSpace(raw); bytes.Equal(t, []byte("{}")) || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var infos []txInfo
	if err := json.Unmarshal(raw, &infos); err != nil {
		return nil, errors.New(chain.Clip(err.Error()))
	}
	return infos, nil
}

// transfers are the Transfer logs of the configured tokens in one
// successful transaction to watched addresses.
//
// A transfer's Index is the log's place among the transaction's Transfer
// logs of the configured contracts (0, 1, 2…), as on EVM chains: it stays
// the same when a reorg mines the transaction again in another block.
func (n *Node) transfers(info txInfo, w payd.Watched) []payd.Transfer {
	// The top-level code's success is spelled SUCESS in java-tron's
	// protobuf, and is left out as its zero value.
	if info.Result != "" && info.Result != "SUCESS" || info.Receipt.Result != "SUCCESS" {
		return nil // failed or reverted: no token moved, whatever its logs say
	}
	var out []payd.Transfer
	pos := 0
	for _, l := range info.Log {
		asset, ok := n.matches(l)
		if !ok {
			continue
		}
		i := pos
		pos++
		if t, ok := tokenTransfer(l, w); ok {
			t.TxHash, t.Index, t.Amount.Asset = info.ID.String(), i, asset
			out = append(out, t)
		}
	}
	return out
}

// matches reports whether l is a Transfer log of a configured contract,
// and of which token.
func (n *Node) matches(l txLog) (money.Asset, bool) {
	acc, ok := logAccount(l.Address)
	if !ok || len(l.Topics) == 0 || l.Topics[0] != transferTopic {
		return "", false
	}
	a, ok := n.byToken[acc]
	return a, ok
}

// tokenTransfer reads a Transfer log as a transfer to a watched address:
// three topics (a TRC-721 Transfer has four), 32 bytes of amount above
// zero (zero transfers are how address-poisoning spam looks like a
// payment), and topics that hold 20-byte addresses. The caller sets the
// transaction, index and asset.
func tokenTransfer(l txLog, w payd.Watched) (payd.Transfer, bool) {
	if len(l.Topics) != 3 || len(l.Data) != 64 {
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
	data, err := hex.DecodeString(l.Data)
	if err != nil {
		return payd.Transfer{}, false
	}
	amount := new(big.Int).SetBytes(data)
	if amount.Sign() == 0 {
		return payd.Transfer{}, false
	}
	return payd.Transfer{From: addressOf(from), To: addressOf(to), Amount: money.CoinAmount{Units: amount}}, true
}

// logAccount reads a log's contract address: 40 hex digits, or 42 with
// the 41 prefix.
func logAccount(s string) (account, bool) {
	var acc account
	if len(s) == 42 {
		if s[:2] != "41" {
			return acc, false
		}
		s = s[2:]
	}
	if len(s) != 40 {
		return acc, false
	}
	_, err := hex.Decode(acc[:], []byte(s))
	return acc, err == nil
}

// topicAccount is the address in an indexed address topic: 64 hex digits,
// 12 zero bytes and the 20 of the account. The TVM writes the account
// without its 41 prefix, as the EVM would.
func topicAccount(t string) (account, bool) {
	var acc account
	var word [32]byte
	if len(t) != 64 {
		return acc, false
	}
	if _, err := hex.Decode(word[:], []byte(t)); err != nil {
		return acc, false
	}
	for _, b := range word[:12] {
		if b != 0 {
			return acc, false
		}
	}
	copy(acc[:], word[12:])
	return acc, true
}

// Pending tells which of the unconfirmed transactions are alive: mined in
// a block above processed, which the follower has yet to read
// (/wallet/gettransactioninfobyid answers their block number). A
// transaction mined at or below that height is not alive even though the
// node knows it: the follower read that block (or the branch that
// replaced it) and took its transfers from there. It reads no pool for
// transfers (Transfers is nil), and does not tell a transaction waiting
// in the node's pool alive: a tron transaction is mined in the next block
// or expires (a wallet gives it a minute), so one put back in the pool by
// a reorg is mined again, and seen in its block, long before the follower
// drops it (--drop-after, 10 minutes). A malformed hash is not alive.
// upstream_unavailable when the node cannot be read.
func (n *Node) Pending(ctx context.Context, w payd.Watched, unconfirmed []string, processed int64) (payd.Pending, error) {
	p := payd.Pending{Alive: map[string]bool{}}
	for _, h := range unconfirmed {
		if hd.ValidTxHash(money.Tron, h) != nil {
			continue
		}
		var info struct {
			ID          *hash32 `json:"id"`
			BlockNumber int64   `json:"blockNumber"`
		}
		if err := n.api.post(ctx, "/wallet/gettransactioninfobyid", map[string]string{"value": h}, &info); err != nil {
			return payd.Pending{}, err
		}
		if info.ID != nil && info.BlockNumber > processed {
			p.Alive[h] = true
		}
	}
	return p, nil
}
