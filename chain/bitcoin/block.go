package bitcoin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"payd"
	"payd/money"
)

// Tip is the node's best block. upstream_unavailable when the node cannot
// be asked.
func (n *Node) Tip(ctx context.Context) (payd.BlockRef, error) {
	var info struct {
		Blocks        int64  `json:"blocks"`
		BestBlockHash string `json:"bestblockhash"`
	}
	if err := n.rpc.Call(ctx, "getblockchaininfo", &info); err != nil {
		return payd.BlockRef{}, err
	}
	if len(info.BestBlockHash) != 64 {
		return payd.BlockRef{}, n.unavailable("answered getblockchaininfo without a best block hash")
	}
	return payd.BlockRef{Height: info.Blocks, Hash: info.BestBlockHash}, nil
}

// BlockAt reads the block at height on the node's best chain, raw, and
// reports its outputs to the scripts in w. not_found when the chain has
// no block at height (it may have just been reorganised away);
// upstream_unavailable when the node cannot be asked.
//
// A Transfer's From stays "": naming the sender would take a lookup of
// every input's previous output (a txindex on the node), and payd
// neither shows nor needs it to count a payment.
func (n *Node) BlockAt(ctx context.Context, height int64, w payd.Watched) (payd.Block, error) {
	var hash string
	if err := n.rpc.Call(ctx, "getblockhash", &hash, height); err != nil {
		if c := rpcCode(err); c == codeInvalidParam || c == codeOutOfRange {
			return payd.Block{}, payd.Errorf(payd.ErrNotFound, "the bitcoin node has no block at height %d", height)
		}
		return payd.Block{}, err
	}
	msg, err := n.rawBlock(ctx, hash)
	if err != nil {
		return payd.Block{}, err
	}
	b := payd.Block{
		BlockRef: payd.BlockRef{Height: height, Hash: hash},
		Parent:   msg.Header.PrevBlock.String(),
	}
	for _, tx := range msg.Transactions {
		b.Transfers = append(b.Transfers, n.match(tx, w)...)
	}
	return b, nil
}

// rawBlock fetches and decodes the block named hash and checks that it is
// that block.
func (n *Node) rawBlock(ctx context.Context, hash string) (*wire.MsgBlock, error) {
	var raw json.RawMessage
	if err := n.rpc.Call(ctx, "getblock", &raw, hash, 0); err != nil {
		if rpcCode(err) == codeNotFound {
			return nil, payd.Errorf(payd.ErrNotFound, "the bitcoin node has no block %s", hash)
		}
		return nil, err
	}
	msg, err := decodeBlock(raw)
	if err != nil {
		return nil, n.unavailable("answered getblock %s with %v", hash, err)
	}
	if got := msg.BlockHash().String(); got != hash {
		return nil, n.unavailable("answered getblock %s with block %s", hash, got)
	}
	return msg, nil
}

// match returns tx's outputs to scripts in w as transfers; only those get
// an address encoded and the txid hashed. It passes over outputs of no
// value (nothing was paid; a zero output to a deposit is spam, not a
// payment) and every output of a coinbase transaction: a miner's reward
// cannot be spent for 100 blocks and vanishes if a reorg orphans its
// block, so it is no payment a merchant can take.
func (n *Node) match(tx *wire.MsgTx, w payd.Watched) []payd.Transfer {
	if isCoinbase(tx) {
		return nil
	}
	var out []payd.Transfer
	var txid string
	for i, o := range tx.TxOut {
		if o.Value <= 0 || !w.Has(string(o.PkScript)) {
			continue
		}
		to, ok := scriptAddress(o.PkScript, n.hrp)
		if !ok {
			continue
		}
		if txid == "" {
			txid = tx.TxHash().String()
		}
		out = append(out, payd.Transfer{TxHash: txid, Index: i, To: to, Amount: money.NewCoinAmount(money.BTC, o.Value)})
	}
	return out
}

// isCoinbase reports whether tx is a block's coinbase: one input, spending
// no previous output (a zero hash and index 0xffffffff).
func isCoinbase(tx *wire.MsgTx) bool {
	if len(tx.TxIn) != 1 {
		return false
	}
	prev := tx.TxIn[0].PreviousOutPoint
	return prev.Index == wire.MaxPrevOutIndex && prev.Hash == (chainhash.Hash{})
}

// decodeBlock decodes a block as getblock HASH 0 answers it: a JSON string
// of the block's hex serialization (with witnesses).
func decodeBlock(raw json.RawMessage) (*wire.MsgBlock, error) {
	b, err := unhex(raw)
	if err != nil {
		return nil, err
	}
	var msg wire.MsgBlock
	r := bytes.NewReader(b)
	if err := msg.Deserialize(r); err != nil {
		return nil, fmt.Errorf("a block that does not decode: %w", err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("a block followed by %d more bytes", r.Len())
	}
	return &msg, nil
}

// decodeTx decodes a transaction as getrawtransaction TXID 0 answers it.
func decodeTx(raw json.RawMessage) (*wire.MsgTx, error) {
	b, err := unhex(raw)
	if err != nil {
		return nil, err
	}
	var tx wire.MsgTx
	r := bytes.NewReader(b)
	if err := tx.Deserialize(r); err != nil {
		return nil, fmt.Errorf("a transaction that does not decode: %w", err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("a transaction followed by %d more bytes", r.Len())
	}
	return &tx, nil
}

// unhex decodes a JSON string of hex digits without going through a Go
// string: a full block is megabytes, and hex needs no unescaping.
func unhex(raw json.RawMessage) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, fmt.Errorf("a result that is not a hex string")
	}
	s := raw[1 : len(raw)-1]
	b := make([]byte, hex.DecodedLen(len(s)))
	if _, err := hex.Decode(b, s); err != nil {
		return nil, fmt.Errorf("a result that is not a hex string")
	}
	return b, nil
}
