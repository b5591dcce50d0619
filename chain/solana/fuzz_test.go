package solana

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"payd"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

type fuzzWatched map[string]bool

func (w fuzzWatched) Has(k string) bool      { return w[k] }
func (w fuzzWatched) Keys() iter.Seq[string] { return maps.Keys(w) }

// FuzzAnswers feeds arbitrary results, and arbitrary whole bodies, to every
// decoder of the adapter through a node that answers them to every call:
// Tip, Scan (signature lists, transactions, statuses), the mint check and
// the fee estimate must fail cleanly, never panic.
func FuzzAnswers(f *testing.F) {
	for _, name := range []string{"getSlot.json", "getSignaturesForAddress.json", "getTransaction.json",
		"getSignatureStatuses.json", "getTokenSupply.json", "getRecentPrioritizationFees.json", "tokenBalance.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		var doc struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(b, &doc)
		f.Add(string(doc.Result), false)
		f.Add(string(b), true)
	}
	f.Add(`{"meta":{"err":null,"preBalances":[1],"postBalances":[5,6],"postTokenBalances":[{"accountIndex":9,`+
		`"mint":"m","owner":"o","uiTokenAmount":{"amount":"-12"}}],"loadedAddresses":{"readonly":["R"]}},`+
		`"transaction":{"message":{"accountKeys":["A","O"]}}}`, false)
	f.Add(`[{"signature":"s","slot":9e99,"err":null,"confirmationStatus":"finalized"}]`, false)
	// One server answers every input: a server per input leaves each
	// one's connections behind.
	var mu sync.Mutex
	var answer string
	var whole bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		answer, whole := answer, whole
		mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		if whole {
			_, _ = io.WriteString(w, answer)
			return
		}
		var reqs []struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &reqs) != nil {
			var one struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(body, &one)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(one.ID)+`,"result":`+answer+`}`)
			return
		}
		_, _ = io.WriteString(w, "[")
		for i, r := range reqs {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(r.ID)+`,"result":`+answer+`}`)
		}
		_, _ = io.WriteString(w, "]")
	}))
	defer srv.Close()
	f.Fuzz(func(t *testing.T, in string, all bool) {
		mu.Lock()
		answer, whole = in, all
		mu.Unlock()
		rpc, err := newClient(srv.URL, srv.Client(), clock.Real{}, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		n := &Node{cluster: "mainnet-beta", rpc: rpc, clock: clock.Real{}, keys: hd.NewKeyCache(1), txs: newTxCache(10),
			price: func(context.Context, money.Asset) (int64, error) { return 15_000, nil }}
		if err := n.setTokens(nil); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, _ = n.Tip(ctx)
		_ = n.checkDecimals(ctx)
		_, _ = n.FeeEstimateUSD(ctx, money.SOL)
		owner, ref := "3h1zGmCwsRJnVk5BuRNMLsPaQu1y2aqXqXDWYCgrp5UG", "5d21Nx19eZBThbExCn1ESAk3RGmE8Rdp9PKMWZ2VedSK"
		w := fuzzWatched{owner + "/" + ref: true, "A/O": true, "bad": true}
		_, _, _ = n.Scan(ctx, payd.BlockRef{Height: 1, Hash: "1"}, payd.BlockRef{Height: 5, Hash: "5"}, w,
			[]string{"s", "t"})

		// The transaction decoder alone, on the answer as a transaction.
		var tx transaction
		if json.Unmarshal([]byte(in), &tx) == nil {
			tx.info().transfers("s", "O", map[string]bool{"R": true, "A": true}, map[string]tokenAccount{"A": {mint: "m", asset: money.USDC}})
		}
	})
}
