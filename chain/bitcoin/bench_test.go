package bitcoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"
)

// set is a payd.Watched.
type set map[string]bool

func (s set) Has(k string) bool { return s[k] }

// bigBlock builds a block of txs transactions, each spending one segwit
// input to two P2WPKH outputs, and watched P2WPKH scripts of which every
// hundredth transaction pays one.
func bigBlock(txs, watchedCount int) (*wire.MsgBlock, set) {
	script := func(i uint32) []byte {
		s := make([]byte, 22)
		s[1] = 20
		binary.BigEndian.PutUint32(s[2:], i)
		return s
	}
	w := set{}
	for i := range uint32(watchedCount) {
		w[string(script(1<<31|i))] = true
	}
	var b wire.MsgBlock
	for i := range uint32(txs) {
		tx := wire.NewMsgTx(2)
		in := wire.NewTxIn(&wire.OutPoint{Index: i}, nil, [][]byte{make([]byte, 72), make([]byte, 33)})
		tx.AddTxIn(in)
		to := script(i)
		if i%100 == 0 {
			to = script(1<<31 | i)
		}
		tx.AddTxOut(wire.NewTxOut(int64(10_000+i), to))
		tx.AddTxOut(wire.NewTxOut(5_000, script(1<<30|i)))
		_ = b.AddTransaction(tx)
	}
	return &b, w
}

// blockServer serves getblockchaininfo, getblockhash and getblock for one
// block, as a node would over HTTP.
func blockServer(tb testing.TB, b *wire.MsgBlock) string {
	var buf bytes.Buffer
	if err := b.Serialize(&buf); err != nil {
		tb.Fatal(err)
	}
	hash := b.BlockHash().String()
	answers := map[string][]byte{}
	for method, result := range map[string]any{
		"getblockchaininfo": map[string]any{"chain": "regtest", "blocks": 1, "bestblockhash": hash},
		"getblockhash":      hash,
		"getblock":          hex.EncodeToString(buf.Bytes()),
	} {
		r, _ := json.Marshal(result)
		answers[method], _ = json.Marshal(response{Result: r, ID: 1})
	}
	return server(tb, func(w http.ResponseWriter, r *http.Request) {
		var req request
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		_, _ = w.Write(answers[req.Method])
	})
}

// BenchmarkBlockAt reads a 5,000-transaction block from a local HTTP
// server and matches it against 100,000 watched scripts: the follower's
// work per block, end to end but for the node.
func BenchmarkBlockAt(b *testing.B) {
	blk, w := bigBlock(5_000, 100_000)
	n, err := New(context.Background(), blockServer(b, blk), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := n.BlockAt(context.Background(), 1, w)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Transfers) != 50 {
			b.Fatalf("%d transfers; want 50", len(got.Transfers))
		}
	}
}
