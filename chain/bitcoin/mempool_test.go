package bitcoin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"payd/money"
)

// The mempool's error paths, against a local HTTP server answering as a
// node whose mempool holds what a real one will not readily hold: a
// transaction whose batch answers more than the client reads, one that
// does not decode. The happy paths run against btcd in node_test.go.

// poolServer is a regtest node stand-in serving a mempool of txs (raw
// serializations by txid). A batch asking for big is answered with more
// than maxResponse; bad is answered with bytes that are no transaction.
type poolServer struct {
	mu      sync.Mutex
	txs     map[string]string // txid → hex
	order   []string
	big     string
	bad     string
	fetched map[string]int // getrawtransaction calls by txid
}

func (s *poolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	batch := bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	var reqs []request
	if !batch {
		body = append(append([]byte("["), body...), ']')
	}
	if err := json.Unmarshal(body, &reqs); err != nil {
		w.WriteHeader(400)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, q := range reqs {
		result := "null"
		switch q.Method {
		case "getblockchaininfo":
			result = `{"chain":"regtest","blocks":100,"bestblockhash":"` + strings.Repeat("ab", 32) + `"}`
		case "getblockhash":
			result = `"` + genesisRegtest + `"`
		case "getrawmempool":
			ids, _ := json.Marshal(s.order)
			result = string(ids)
		case "getrawtransaction":
			id := q.Params[0].(string)
			s.fetched[id]++
			if batch && id == s.big {
				_, _ = w.Write([]byte("[" + strings.Repeat(" ", maxResponse) + "]"))
				return
			}
			result = `"` + s.txs[id] + `"`
			if id == s.bad {
				result = `"00"`
			}
		}
		out = append(out, fmt.Sprintf(`{"result":%s,"error":null,"id":%d}`, result, q.ID))
	}
	if batch {
		_, _ = io.WriteString(w, "["+strings.Join(out, ",")+"]")
	} else {
		_, _ = io.WriteString(w, out[0])
	}
}

// poolSetup starts a poolServer with count transactions, each paying
// 1,000 + i sat to script, and a Node on it that has read block 100.
func poolSetup(t *testing.T, count int, script []byte) (*poolServer, *Node) {
	t.Helper()
	s := &poolServer{txs: map[string]string{}, fetched: map[string]int{}}
	for i := range count {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{byte(i), byte(i >> 8), 1}, Index: 0}, nil, nil))
		tx.AddTxOut(wire.NewTxOut(int64(1_000+i), script))
		var b bytes.Buffer
		if err := tx.Serialize(&b); err != nil {
			t.Fatal(err)
		}
		id := tx.TxHash().String()
		s.txs[id] = hex.EncodeToString(b.Bytes())
		s.order = append(s.order, id)
	}
	url := server(t, s.ServeHTTP)
	n, err := New(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, n
}

// TestPendingSkipsUnreadable serves a mempool in which one transaction
// makes its batch's answer too large (it is read alone) and another does
// not decode (it is skipped): Pending reads every other one, reports their
// transfers, and asks none of them again.
func TestPendingSkipsUnreadable(t *testing.T) {
	script := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{7}, 20)...)
	s, n := poolSetup(t, 60, script)
	s.big, s.bad = s.order[3], s.order[40]
	w := watchedScripts{string(script): true}
	for round := range 2 {
		p, err := n.Pending(context.Background(), w, nil, 100)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(p.Transfers) != 59 {
			t.Errorf("round %d: %d transfers, want 59", round, len(p.Transfers))
		}
		for _, tr := range p.Transfers {
			if tr.TxHash == s.bad || tr.Amount.Asset != money.BTC {
				t.Errorf("round %d: transfer %+v", round, tr)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range []string{s.big, s.bad, s.order[0]} {
		if s.fetched[id] > 2 {
			t.Errorf("%s asked %d times", id, s.fetched[id])
		}
	}
	if got := s.fetched[s.order[59]]; got != 1 {
		t.Errorf("a transaction of a good batch asked %d times, want 1", got)
	}
}

// TestPendingRemembersAll fills what Pending remembers with 500,000
// transactions, as a congested mainnet mempool does: every transaction it
// reads is remembered still, so the next call reads none again.
func TestPendingRemembersAll(t *testing.T) {
	s, n := poolSetup(t, 10, []byte{0x51})
	for i := range 500_000 {
		n.pool.seen[txKey{byte(i), byte(i >> 8), byte(i >> 16), 0xff}] = n.pool.gen
	}
	for range 2 {
		if _, err := n.Pending(context.Background(), watchedScripts{}, nil, 100); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.order {
		if s.fetched[id] != 1 {
			t.Errorf("%s read %d times, want once", id, s.fetched[id])
		}
	}
}

// watchedScripts is a payd.Watched of output scripts.
type watchedScripts map[string]bool

func (w watchedScripts) Has(key string) bool { return w[key] }
