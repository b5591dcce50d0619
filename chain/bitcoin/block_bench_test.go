package bitcoin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"payd"
)

// The block-matching goal of issue 16: a block of 5,000 transactions
// matched against 100,000 watched addresses in under 50 ms.
const (
	benchTxs     = 5000
	benchWatched = 100_000
	benchPaid    = 300 // outputs of the block that pay a watched address
)

// benchSet is a payd.Watched as the follower keeps it: a map of
// WatchKeys.
type benchSet map[string]struct{}

func (s benchSet) Has(key string) bool { _, ok := s[key]; return ok }

// p2wpkh is the output script of a random 20-byte key hash.
func p2wpkh(r *rand.Rand) []byte {
	s := make([]byte, 22)
	s[0], s[1] = op0, 20
	for i := 2; i < 22; i++ {
		s[i] = byte(r.Uint32())
	}
	return s
}

// benchBlock builds a block as a busy mainnet block looks to the adapter:
// a coinbase, then benchTxs-1 segwit spends of one input (a 72-byte
// signature and a 33-byte key as witness) paying two or three P2WPKH
// outputs, benchPaid of which pay watched scripts. It returns the block's
// serialization with witnesses and the watched set, benchWatched scripts
// that include the paid ones.
func benchBlock(tb testing.TB) ([]byte, benchSet) {
	tb.Helper()
	r := rand.New(rand.NewPCG(16, 5000))
	watched := make([][]byte, benchWatched)
	set := make(benchSet, benchWatched)
	for i := range watched {
		watched[i] = p2wpkh(r)
		set[string(watched[i])] = struct{}{}
	}
	blk := wire.MsgBlock{Header: wire.BlockHeader{Version: 0x20000000, Bits: 0x207fffff, Nonce: 1}}
	cb := wire.NewMsgTx(2)
	cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 0xffffffff}, SignatureScript: []byte{3, 1, 2, 3},
		Sequence: 0xffffffff, Witness: wire.TxWitness{make([]byte, 32)}})
	cb.AddTxOut(wire.NewTxOut(312_500_000, p2wpkh(r)))
	blk.AddTransaction(cb)
	paid := 0
	for i := 1; i < benchTxs; i++ {
		tx := wire.NewMsgTx(2)
		var prev chainhash.Hash
		for j := range prev {
			prev[j] = byte(r.Uint32())
		}
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Hash: prev, Index: r.Uint32N(4)}, Sequence: 0xfffffffd,
			Witness: wire.TxWitness{make([]byte, 72), make([]byte, 33)}})
		for k := range 2 + r.IntN(2) {
			script := p2wpkh(r)
			if k == 0 && i%(benchTxs/benchPaid) == 0 && paid < benchPaid {
				script = watched[r.IntN(len(watched))]
				paid++
			}
			tx.AddTxOut(wire.NewTxOut(int64(1000+r.IntN(10_000_000)), script))
		}
		blk.AddTransaction(tx)
	}
	var sb strings.Builder
	if err := blk.Serialize(&sb); err != nil {
		tb.Fatal(err)
	}
	return []byte(sb.String()), set
}

// blockServer answers getblockchaininfo, getblockhash and getblock (raw)
// for one block as btcd and bitcoind do, from answers encoded once; the
// block is at every height but 0, where bitcoin's genesis is.
func blockServer(tb testing.TB, raw []byte) (*httptest.Server, string) {
	tb.Helper()
	var msg wire.MsgBlock
	if err := msg.Deserialize(strings.NewReader(string(raw))); err != nil {
		tb.Fatal(err)
	}
	hash := msg.BlockHash().String()
	answers := map[string][]byte{
		"getblockchaininfo": []byte(`{"chain":"main","blocks":1,"bestblockhash":"` + hash + `"}`),
		"getblockhash":      []byte(`"` + hash + `"`),
		"getblock":          []byte(`"` + hex.EncodeToString(raw) + `"`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"result":`))
		if req.Method == "getblockhash" && len(req.Params) == 1 && req.Params[0] == float64(0) {
			_, _ = w.Write([]byte(`"` + genesisMain + `"`))
		} else {
			_, _ = w.Write(answers[req.Method])
		}
		_, _ = w.Write([]byte(`,"error":null,"id":` + strconv.FormatUint(req.ID, 10) + `}`))
	}))
	tb.Cleanup(srv.Close)
	return srv, hash
}

// BenchmarkBlockAt5000x100k reads a 5,000-transaction block through
// BlockAt from a local node stand-in answering raw hex, as a follower
// does: the RPC round trip, hex and wire decoding, and matching against
// 100,000 watched scripts.
func BenchmarkBlockAt5000x100k(b *testing.B) {
	raw, set := benchBlock(b)
	srv, hash := blockServer(b, raw)
	n, err := New(context.Background(), srv.URL, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	var blk payd.Block
	for b.Loop() {
		if blk, err = n.BlockAt(context.Background(), 1, set); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if blk.Hash != hash || len(blk.Transfers) != benchPaid {
		b.Fatalf("block %s with %d transfers, want %s with %d", blk.Hash, len(blk.Transfers), hash, benchPaid)
	}
}

// BenchmarkDecodeMatch5000x100k is BlockAt without the round trip: the
// getblock result (a JSON string of hex) decoded and matched.
func BenchmarkDecodeMatch5000x100k(b *testing.B) {
	raw, set := benchBlock(b)
	result := json.RawMessage(`"` + hex.EncodeToString(raw) + `"`)
	n := &Node{hrp: "bc"}
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	var matched int
	for b.Loop() {
		msg, err := decodeBlock(result)
		if err != nil {
			b.Fatal(err)
		}
		matched = 0
		for _, tx := range msg.Transactions {
			matched += len(n.match(tx, set))
		}
	}
	b.StopTimer()
	if matched != benchPaid {
		b.Fatalf("%d transfers, want %d", matched, benchPaid)
	}
}

// BenchmarkWatchKey is the cost of one address of the follower's
// rebuild of its watched set: a mainnet P2WPKH deposit to its script.
func BenchmarkWatchKey(b *testing.B) {
	n := &Node{hrp: "bc"}
	const addr = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" // BIP84's first, as hd derives it
	for b.Loop() {
		if _, ok := n.WatchKey(addr); !ok {
			b.Fatal("refused")
		}
	}
}
