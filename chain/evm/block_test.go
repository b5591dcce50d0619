package evm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"payd"
	"payd/money"
)

// watchedSet is a payd.Watched of WatchKeys.
type watchedSet map[string]bool

func (w watchedSet) Has(key string) bool { return w[key] }

// Addresses and hashes of the hand-written answers below.
const (
	deposit  = "0x9858effd232b4033e47d90003d41ec34ecaeda94"
	sender   = "0x1111111111111111111111111111111111111111"
	contract = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" // mainnet USDC
)

// hashOf is a 32-byte hash made of b.
func hashOf(b byte) string { return fmt.Sprintf("0x%064x", b) }

// topic is an address as an indexed topic.
func topic(addr string) string { return "0x" + strings.Repeat("0", 24) + addr[2:] }

// TestReceiptOfAnotherBlock answers a receipt from another block, as a
// node does when the chain reorganizes between two calls: BlockAt fails
// rather than mix two blocks.
func TestReceiptOfAnotherBlock(t *testing.T) {
	f := serve(t, "0x539", func(method string, _ []json.RawMessage) (any, *rpcError) {
		switch method {
		case "eth_getBlockByNumber":
			return map[string]any{"number": "0x5", "hash": hashOf(5), "parentHash": hashOf(4),
				"transactions": []any{map[string]any{"hash": hashOf(0xaa), "from": sender, "to": deposit, "value": "0x1"}}}, nil
		case "eth_getTransactionReceipt":
			return map[string]any{"blockHash": hashOf(0x55), "status": "0x1"}, nil
		}
		return []any{}, nil
	})
	n := newNode(t, money.Ethereum, f.URL, Options{})
	key, _ := n.WatchKey(deposit)
	_, err := n.BlockAt(context.Background(), 5, watchedSet{key: true})
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "moved") {
		t.Errorf("BlockAt = %v, want upstream_unavailable: the chain moved", err)
	}
}

// TestLogFilter answers eth_getLogs with every kind of log BlockAt must
// pass over, and one it must count.
func TestLogFilter(t *testing.T) {
	transfer := transferTopic.String()
	amount := fmt.Sprintf("0x%064x", 12_500_000)
	log := func(i int, addr string, topics []string, data string, removed bool) map[string]any {
		return map[string]any{"address": addr, "topics": topics, "data": data, "blockHash": hashOf(5),
			"transactionHash": hashOf(0xbb), "logIndex": fmt.Sprintf("0x%x", i), "removed": removed}
	}
	dirty := "0x" + strings.Repeat("0", 23) + "1" + deposit[2:]
	logs := []any{
		log(0, contract, []string{transfer, topic(sender), topic(deposit)}, amount, true),                                     // removed
		log(1, sender, []string{transfer, topic(sender), topic(deposit)}, amount, false),                                      // another contract
		log(2, contract, []string{transfer, topic(sender), topic(deposit), hashOf(1)}, "0x", false),                           // ERC-721
		log(3, contract, []string{hashOf(9), topic(sender), topic(deposit)}, amount, false),                                   // another event
		log(4, contract, []string{transfer, topic(sender), topic(deposit)}, "0x"+strings.Repeat("0", 64), false),              // zero
		log(5, contract, []string{transfer, topic(sender), dirty}, amount, false),                                             // not an address
		log(6, contract, []string{transfer, topic(sender), topic(sender)}, amount, false),                                     // not watched
		log(7, contract, []string{transfer, topic(sender), topic(deposit)}, amount+"00", false),                               // 33 bytes
		log(8, contract, []string{transfer, topic(sender), topic(strings.ToUpper(deposit[:2]) + deposit[2:])}, amount, false), // counted
	}
	var filter map[string]any
	f := serve(t, "0x1", func(method string, params []json.RawMessage) (any, *rpcError) {
		switch method {
		case "eth_getBlockByNumber":
			return map[string]any{"number": "0x5", "hash": hashOf(5), "parentHash": hashOf(4), "transactions": []any{}}, nil
		case "eth_getLogs":
			json.Unmarshal(params[0], &filter)
			return logs, nil
		}
		return nil, &rpcError{-32601, "no such method"}
	})
	n := newNode(t, money.Ethereum, f.URL, Options{})
	key, _ := n.WatchKey(deposit)
	b, err := n.BlockAt(context.Background(), 5, watchedSet{key: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != hashOf(5) || b.Parent != hashOf(4) || b.Height != 5 {
		t.Errorf("block %+v", b.BlockRef)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers %+v, want the one of log 8", b.Transfers)
	}
	// Its Index is its place among the transaction's logs the filter
	// matched (logs 2 and 4 to 8), not its logIndex.
	got := b.Transfers[0]
	if got.Index != 5 || got.TxHash != hashOf(0xbb) || got.To != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" ||
		got.From != "0x1111111111111111111111111111111111111111" || got.Amount.Cmp(money.NewCoinAmount(money.USDC, 12_500_000)) != 0 ||
		got.Amount.Asset != money.USDC {
		t.Errorf("transfer %+v", got)
	}
	if filter["blockHash"] != hashOf(5) || len(filter["address"].([]any)) != 2 {
		t.Errorf("eth_getLogs filter %v, want the block's hash and the two mainnet contracts", filter)
	}
}

// TestPolygonReadsNoTransactions checks that on polygon, whose native coin
// payd does not take, BlockAt asks for the block without its transactions.
func TestPolygonReadsNoTransactions(t *testing.T) {
	var full string
	f := serve(t, "0x89", func(method string, params []json.RawMessage) (any, *rpcError) {
		if method == "eth_getBlockByNumber" {
			full = string(params[1])
			return map[string]any{"number": "0x5", "hash": hashOf(5), "parentHash": hashOf(4),
				"transactions": []string{hashOf(7)}}, nil
		}
		if method == "eth_getLogs" {
			return []any{}, nil
		}
		return nil, nil
	})
	n := newNode(t, money.Polygon, f.URL, Options{})
	if _, err := n.BlockAt(context.Background(), 5, watchedSet{}); err != nil || full != "false" {
		t.Errorf("BlockAt: %v; full transactions %s", err, full)
	}
}
