package solana_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"payd"
	"payd/chain/solana"
	"payd/chain/solana/solanatest"
)

// nullTransactions is a proxy to c that answers the getTransaction
// requests with null (a load-balanced provider's backend that has not the
// transaction yet) while on is set.
func nullTransactions(t *testing.T, c *solanatest.Chain, on *atomic.Bool) string {
	t.Helper()
	target, err := url.Parse(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if on.Load() && strings.Contains(string(body), "getTransaction") {
			var reqs []map[string]any
			if json.Unmarshal(body, &reqs) != nil {
				var q map[string]any
				_ = json.Unmarshal(body, &q)
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": nil})
				return
			}
			out := []map[string]any{}
			for _, q := range reqs {
				out = append(out, map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": nil})
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestScanNotThereYet: a finalized transaction listed at or under the tip
// that the node does not return is not_found, so that the follower does
// not store the tip past it; the next run finds it. Lists and fetches ask
// for the tip as minContextSlot.
func TestScanNotThereYet(t *testing.T) {
	c := solanatest.New(t)
	var on atomic.Bool
	n := mustNode(t, nullTransactions(t, c, &on), solana.Options{Price: solPrice, MaxRPS: 1_000_000})
	ctx := context.Background()
	owner, payer, r := wallet(t), wallet(t), ref(t)
	w := watched{}
	w.add(owner, r)
	head, err := n.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sig := c.Transfer(payer, owner, solanatest.USDC, 25_000_000, r)
	c.Advance(40)
	tip, err := n.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	if _, _, err := n.Scan(ctx, head, tip, w, nil); !payd.IsNotFound(err) {
		t.Fatalf("a listed final transaction the node does not return: %v", err)
	}
	on.Store(false)
	// A backend behind the tip refuses the lists (-32016): the same.
	c.SetBehind(45)
	if _, _, err := n.Scan(ctx, head, tip, w, nil); !payd.IsNotFound(err) {
		t.Fatalf("a backend behind the tip: %v", err)
	}
	c.SetBehind(0)
	blocks, _, err := n.Scan(ctx, head, tip, w, nil)
	if err != nil || len(blocks) != 2 || len(blocks[0].Transfers) != 1 || blocks[0].Transfers[0].TxHash != sig {
		t.Fatalf("the next run: %+v, %v", blocks, err)
	}
}

// TestScanStaleAlive: a transaction stored waiting whose checkout stops
// being watched before it is final is not alive once final (the follower
// drops it after DropAfter) rather than waiting for ever.
func TestScanStaleAlive(t *testing.T) {
	b := setup(t)
	owner, payer, r, other := wallet(t), wallet(t), ref(t), ref(t)
	w := watched{}
	w.add(owner, r)
	w.add(owner, other)
	head := b.c.Finalized()
	sig := b.c.Transfer(payer, owner, "", 10, r)
	if _, p := b.scan(t, head, w); len(p.Transfers) != 1 {
		t.Fatalf("pending = %+v", p.Transfers)
	}
	delete(w, owner+"/"+r) // the checkout's watch ended
	b.c.Advance(40)
	blocks, p := b.scan(t, head, w, sig)
	if !p.Alive[sig] || len(blocks) != 1 || len(blocks[0].Transfers) != 0 {
		t.Errorf("final after head, in this scan's range: alive %v, blocks %+v", p.Alive[sig], blocks)
	}
	head = b.c.Finalized()
	b.c.Advance(1)
	if _, p := b.scan(t, head, w, sig); p.Alive[sig] {
		t.Error("a final transaction that pays no watched deposit stays alive")
	}
}

// TestScanSpam: a wallet whose address receives 4,000 unrelated transfers
// (dust spam) while one checkout is open is asked by its reference: a
// few calls, not a getTransaction each.
func TestScanSpam(t *testing.T) {
	b := setup(t)
	owner, payer, r := wallet(t), wallet(t), ref(t)
	w := watched{}
	w.add(owner, r)
	head := b.c.Finalized()
	b.c.Noise(owner, 2_000)
	sig := b.c.Transfer(payer, owner, solanatest.USDC, 25_000_000, r)
	b.c.Noise(owner, 2_000)
	b.c.ResetCalls()
	_, p := b.scan(t, head, w)
	if len(p.Transfers) != 1 || p.Transfers[0].TxHash != sig {
		t.Fatalf("pending = %+v", p.Transfers)
	}
	calls := b.c.Calls()
	t.Logf("4,000 spam transfers, one open checkout: %v", calls)
	// 5 pages of the address (4,001 signatures), 1 of each ATA, 1 of the
	// reference; the payment's transaction alone.
	if calls["getTransaction"] != 1 || calls["getSignaturesForAddress"] != 8 {
		t.Errorf("calls = %v", calls)
	}
}

// TestScanFetchCap: more new transactions than a run fetches (payments
// into more checkouts than that) are read over several runs, oldest
// first, the blocks of a run ending before the first not fetched.
func TestScanFetchCap(t *testing.T) {
	b := setup(t)
	owner, payer := wallet(t), wallet(t)
	w := watched{}
	head := b.c.Finalized()
	want := map[string]bool{}
	for range 120 {
		r := ref(t)
		w.add(owner, r)
		want[b.c.Transfer(payer, owner, "", 10, r)] = true
		b.c.Advance(1)
	}
	b.c.Advance(40)
	got := map[string]bool{}
	for run := 0; len(got) < len(want); run++ {
		if run == 5 {
			t.Fatalf("%d of %d payments after 5 runs", len(got), len(want))
		}
		b.c.ResetCalls()
		blocks, _ := b.scan(t, head, w)
		if n := b.c.Calls()["getTransaction"]; n > 50 {
			t.Errorf("run %d fetched %d transactions", run, n)
		}
		for _, bl := range blocks {
			for _, tr := range bl.Transfers {
				if got[tr.TxHash] {
					t.Errorf("%s in two runs' blocks", tr.TxHash)
				}
				got[tr.TxHash] = true
			}
		}
		if len(blocks) == 0 {
			t.Fatalf("run %d: no block", run)
		}
		head = blocks[len(blocks)-1].Height
	}
}

// TestRedirectRefused: a node that redirects is not followed (the API key
// in the URL would go along): the call fails naming where it pointed.
func TestRedirectRefused(t *testing.T) {
	c := solanatest.New(t)
	srv := httptest.NewServer(http.RedirectHandler(c.URL()+"/elsewhere", http.StatusTemporaryRedirect))
	defer srv.Close()
	_, err := solana.New(context.Background(), srv.URL+"/?api-key=SECRET", solana.Options{Price: solPrice})
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "redirect") ||
		strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a redirect: %v", err)
	}
}

// TestScanBusyReference: a reference asked in the per-reference look-up
// whose first page is full (someone sent it more than 20 transactions)
// is paged back to the head, so the payment under them is found.
func TestScanBusyReference(t *testing.T) {
	b := setup(t)
	owner, payer, r := wallet(t), wallet(t), ref(t)
	w := watched{}
	w.add(owner, r)
	head := b.c.Finalized()
	sig := b.c.Transfer(payer, owner, "", 10, r)
	b.c.Noise(r, 30)
	b.c.Noise(owner, 10) // more new signatures than references: asked by reference
	b.c.ResetCalls()
	_, p := b.scan(t, head, w)
	if len(p.Transfers) != 1 || p.Transfers[0].TxHash != sig {
		t.Fatalf("pending = %+v", p.Transfers)
	}
	// The 3 accounts, the reference's first page and one more.
	if got := b.c.Calls()["getSignaturesForAddress"]; got != 5 {
		t.Errorf("getSignaturesForAddress calls = %d, want 5", got)
	}
}
