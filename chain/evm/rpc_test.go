package evm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"payd"
	"payd/chain"
	"payd/money"
)

// These tests answer the node's part with a local HTTP server, for what
// go-ethereum does not do on demand: fail, answer out of shape, sit on a
// main chain. What a real node does is tested against go-ethereum
// (node_test.go).

// handler answers one JSON-RPC call: a result, or an error object.
type handler func(method string, params []json.RawMessage) (any, *rpcError)

// fakeNode is a JSON-RPC server over httptest that answers with h and
// counts the calls by method.
type fakeNode struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string]int
	// reverse answers batches in reverse order, as JSON-RPC allows.
	reverse bool
}

// serve starts a fakeNode; it answers eth_chainId with chainID unless h
// answers it.
func serve(t *testing.T, chainID string, h handler) *fakeNode {
	t.Helper()
	f := &fakeNode{calls: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var reqs []struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		batch := strings.HasPrefix(string(raw), "[")
		if !batch {
			raw = json.RawMessage("[" + string(raw) + "]")
		}
		if err := json.Unmarshal(raw, &reqs); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var out []map[string]any
		for _, q := range reqs {
			f.mu.Lock()
			f.calls[q.Method]++
			f.mu.Unlock()
			res, rerr := any(nil), (*rpcError)(nil)
			if q.Method == "eth_chainId" {
				res = chainID
			}
			if h != nil && (q.Method != "eth_chainId" || chainID == "") {
				res, rerr = h(q.Method, q.Params)
			}
			if q.Method == "eth_call" && res == nil && (rerr == nil || rerr.Code == -32601) { // decimals() of a token, unless h answers
				res, rerr = decimals(6), nil
			}
			m := map[string]any{"jsonrpc": "2.0", "id": q.ID}
			if rerr != nil {
				m["error"] = rerr
			} else {
				m["result"] = res
			}
			out = append(out, m)
		}
		if f.reverse {
			slices.Reverse(out)
		}
		w.Header().Set("Content-Type", "application/json")
		if batch {
			json.NewEncoder(w).Encode(out)
		} else {
			json.NewEncoder(w).Encode(out[0])
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// decimals is the answer of an ERC-20's decimals().
func decimals(n int) string { return fmt.Sprintf("0x%064x", n) }

// count is how many calls of method the node had.
func (f *fakeNode) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// fixedPrice is an ETH price of $3,200.
func fixedPrice(context.Context, money.Asset) (int64, error) { return 320_000, nil }

// newNode is New against url, or the test's end.
func newNode(t *testing.T, n money.Network, url string, opts Options) *Node {
	t.Helper()
	if opts.Price == nil {
		opts.Price = fixedPrice
	}
	node, err := New(context.Background(), n, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// secretURL puts credentials of every kind providers use into a URL of
// the server at base: userinfo, an API key in the path and one in the
// query.
func secretURL(base string) string {
	return strings.Replace(base, "http://", "http://alice:hunter2@", 1) + "/v3/KEYinPATH?apikey=KEYinQUERY"
}

// checkNoSecret fails when err repeats a credential of secretURL.
func checkNoSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{"alice", "hunter2", "KEYinPATH", "KEYinQUERY"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error repeats the credential %q: %v", s, err)
		}
	}
}

func TestUpstreamErrors(t *testing.T) {
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", code) }
	}
	body := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, s) }
	}
	for name, h := range map[string]http.HandlerFunc{
		"401":          status(http.StatusUnauthorized),
		"429":          status(http.StatusTooManyRequests),
		"502":          status(http.StatusBadGateway),
		"html":         body("<html>hello</html>"),
		"rpc error":    body(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"invalid apikey"}}`),
		"no result":    body(`{"jsonrpc":"2.0","id":1}`),
		"other id":     body(`{"jsonrpc":"2.0","id":99,"result":"0x1"}`),
		"not hex":      body(`{"jsonrpc":"2.0","id":1,"result":"1"}`),
		"too long hex": body(`{"jsonrpc":"2.0","id":1,"result":"0x10000000000000000"}`),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := New(context.Background(), money.Ethereum, secretURL(srv.URL), Options{Price: fixedPrice})
			if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
				t.Fatalf("New: %v, want upstream_unavailable", err)
			}
			checkNoSecret(t, err)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(body(""))
		srv.Close()
		_, err := New(context.Background(), money.Ethereum, secretURL(srv.URL), Options{Price: fixedPrice})
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("New: %v, want upstream_unavailable", err)
		}
		checkNoSecret(t, err)
	})
	t.Run("canceled", func(t *testing.T) {
		f := serve(t, "0x1", nil)
		n := newNode(t, money.Ethereum, secretURL(f.URL), Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := n.Tip(ctx)
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("Tip: %v, want upstream_unavailable", err)
		}
		checkNoSecret(t, err)
	})
}

// TestNodeErrors makes a node that answered eth_chainId fail each later
// call, with credentials in its URL.
func TestNodeErrors(t *testing.T) {
	f := serve(t, "0x539", func(method string, _ []json.RawMessage) (any, *rpcError) {
		return nil, &rpcError{-32000, "header not found for KEYinPATH? no: the node never saw it"}
	})
	n := newNode(t, money.Ethereum, secretURL(f.URL), Options{})
	ctx := context.Background()
	_, errTip := n.Tip(ctx)
	_, errBlock := n.BlockAt(ctx, 5, watchedSet{})
	_, errPending := n.Pending(ctx, watchedSet{}, []string{"0x" + strings.Repeat("ab", 32)}, 5)
	_, errFee := n.FeeEstimateUSD(ctx, money.ETH)
	for _, err := range []error{errTip, errBlock, errPending, errFee} {
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Errorf("%v, want upstream_unavailable", err)
		}
	}
	if !strings.Contains(errTip.Error(), "header not found") || !strings.Contains(errTip.Error(), "http://127.0.0.1") {
		t.Errorf("Tip: %v, want the node's message and its endpoint", errTip)
	}
}

// TestNewAccepts takes the test and development chains of each network.
func TestNewAccepts(t *testing.T) {
	for _, c := range []struct {
		n  money.Network
		id string
	}{{money.Ethereum, "0xaa36a7"}, {money.Ethereum, "0x4268"}, {money.Ethereum, "0x88bb0"}, {money.Ethereum, "0x539"},
		{money.Ethereum, "0x7a69"}, {money.Polygon, "0x13882"}, {money.Polygon, "0x539"}, {money.Polygon, "0x7a69"}} {
		n := newNode(t, c.n, serve(t, c.id, nil).URL, Options{})
		if len(n.Assets()) > 1 {
			t.Errorf("%s on %s took the mainnet tokens: %v", c.n, n.Chain(), n.Assets())
		}
	}
}

func TestNewRefuses(t *testing.T) {
	eth := serve(t, "0x1", nil)
	poly := serve(t, "0x89", nil)
	for name, c := range map[string]struct {
		n    money.Network
		url  string
		opts Options
	}{
		"bitcoin":             {money.Bitcoin, eth.URL, Options{}},
		"no price":            {money.Ethereum, eth.URL, Options{Price: nil}},
		"ftp":                 {money.Ethereum, "ftp://alice:hunter2@127.0.0.1/KEYinPATH", Options{Price: fixedPrice}},
		"no host":             {money.Ethereum, "http:///KEYinPATH", Options{Price: fixedPrice}},
		"polygon as ethereum": {money.Ethereum, poly.URL, Options{Price: fixedPrice}},
		"ethereum as polygon": {money.Polygon, eth.URL, Options{}},
		"BSC as ethereum":     {money.Ethereum, serve(t, "0x38", nil).URL, Options{Price: fixedPrice}},
		"Sepolia as polygon":  {money.Polygon, serve(t, "0xaa36a7", nil).URL, Options{}},
		"Gnosis as ethereum":  {money.Ethereum, serve(t, "0x64", nil).URL, Options{Price: fixedPrice}},
		"bad contract": {money.Ethereum, eth.URL, Options{Price: fixedPrice,
			Tokens: map[money.Asset]string{money.USDC: "0x1234"}}},
		"USDT on polygon": {money.Polygon, poly.URL, Options{
			Tokens: map[money.Asset]string{money.USDT: "0xc2132D05D31c914a87C6611C10748AEb04B58e8F"}}},
		"ETH as a token": {money.Ethereum, eth.URL, Options{Price: fixedPrice,
			Tokens: map[money.Asset]string{money.ETH: "0xc2132D05D31c914a87C6611C10748AEb04B58e8F"}}},
		"one contract twice": {money.Ethereum, eth.URL, Options{Price: fixedPrice,
			Tokens: map[money.Asset]string{money.USDT: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"}}},
	} {
		t.Run(name, func(t *testing.T) {
			n, err := New(context.Background(), c.n, c.url, c.opts)
			if err == nil {
				t.Fatalf("New took it: %s", n.Chain())
			}
			checkNoSecret(t, err)
			if (strings.HasSuffix(name, " as ethereum") || strings.HasSuffix(name, " as polygon")) && !strings.Contains(err.Error(), "chain id") {
				t.Errorf("the error does not name the chain id: %v", err)
			}
		})
	}
}

// TestMainnet checks the defaults on the main chains: the mainnet token
// contracts, the explorers, and payment URIs equal to package chain's.
func TestMainnet(t *testing.T) {
	eth := newNode(t, money.Ethereum, serve(t, "0x1", nil).URL, Options{})
	poly := newNode(t, money.Polygon, serve(t, "0x89", nil).URL, Options{})
	if got := eth.Assets(); !slices.Equal(got, []money.Asset{money.USDC, money.USDT, money.ETH}) {
		t.Errorf("ethereum Assets = %v", got)
	}
	if got := poly.Assets(); !slices.Equal(got, []money.Asset{money.USDC}) {
		t.Errorf("polygon Assets = %v", got)
	}
	if eth.Chain() != "chain 1" || poly.Chain() != "chain 137" {
		t.Errorf("Chain = %q, %q", eth.Chain(), poly.Chain())
	}
	const tx = "0x" + "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
	if got := eth.ExplorerURL(tx); got != "https://etherscan.io/tx/"+tx {
		t.Errorf("ethereum explorer %s", got)
	}
	if got := poly.ExplorerURL(tx); got != "https://polygonscan.com/tx/"+tx {
		t.Errorf("polygon explorer %s", got)
	}
	const addr = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	for _, n := range []*Node{eth, poly} {
		for _, a := range money.Assets {
			req := payd.PaymentRequest{Deposit: payd.Deposit{Address: addr}, Amount: money.NewCoinAmount(a, 1234)}
			if got, want := n.PaymentURI(req), chain.PaymentURI(n.Name(), req); got != want {
				t.Errorf("%s %s: PaymentURI = %q, package chain's %q", n.Name(), a, got, want)
			}
		}
	}
	// Configured contracts and explorer win; an empty contract removes a token.
	own := newNode(t, money.Ethereum, serve(t, "0x1", nil).URL, Options{Explorer: "https://eth.blockscout.com/",
		Tokens: map[money.Asset]string{money.USDT: "", money.USDC: "0xc2132d05d31c914a87c6611c10748aeb04b58e8f"}})
	if got := own.Assets(); !slices.Equal(got, []money.Asset{money.USDC, money.ETH}) {
		t.Errorf("configured Assets = %v", got)
	}
	if c, _ := own.TokenContract(money.USDC); c != "0xc2132D05D31c914a87C6611C10748AEb04B58e8F" {
		t.Errorf("configured USDC contract %s, want it EIP-55 spelled", c)
	}
	if got := own.ExplorerURL(tx); got != "https://eth.blockscout.com/tx/"+tx {
		t.Errorf("configured explorer %s", got)
	}
}

// TestTokenDecimals refuses a token contract whose decimals() are not its
// asset's: an 18-decimal contract given for USDC, or one that answers
// nothing. The error names the contract.
func TestTokenDecimals(t *testing.T) {
	const contract = "0xc2132D05D31c914a87C6611C10748AEb04B58e8F"
	for name, answer := range map[string]any{"18 decimals": decimals(18), "no code": "0x"} {
		t.Run(name, func(t *testing.T) {
			var asked map[string]string
			f := serve(t, "0x539", func(method string, params []json.RawMessage) (any, *rpcError) {
				if method == "eth_call" {
					json.Unmarshal(params[0], &asked)
					return answer, nil
				}
				return nil, &rpcError{-32601, "no such method"}
			})
			_, err := New(context.Background(), money.Ethereum, f.URL,
				Options{Price: fixedPrice, Tokens: map[money.Asset]string{money.USDC: contract}})
			if err == nil || !strings.Contains(err.Error(), contract) {
				t.Errorf("New = %v, want an error naming %s", err, contract)
			}
			if !strings.EqualFold(asked["to"], contract) || asked["data"] != "0x313ce567" {
				t.Errorf("eth_call %v, want decimals() of %s", asked, contract)
			}
		})
	}
	// A node that cannot answer is the node's failure, to retry.
	f := serve(t, "0x539", func(method string, params []json.RawMessage) (any, *rpcError) {
		return nil, &rpcError{-32000, "busy"}
	})
	_, err := New(context.Background(), money.Ethereum, f.URL,
		Options{Price: fixedPrice, Tokens: map[money.Asset]string{money.USDC: contract}})
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("New on a failing node = %v, want upstream_unavailable", err)
	}
}

// TestBatchOrder answers a batch in reverse order: each answer goes to its
// call by id.
func TestBatchOrder(t *testing.T) {
	alive := "0x" + strings.Repeat("11", 32)
	f := serve(t, "0x539", func(method string, params []json.RawMessage) (any, *rpcError) {
		if method == "eth_getBlockByNumber" {
			return map[string]any{"number": "0x5", "hash": hashOf(5), "parentHash": hashOf(4)}, nil
		}
		if string(params[0]) == `"`+alive+`"` {
			return map[string]any{"hash": alive, "blockHash": nil, "blockNumber": nil}, nil
		}
		return nil, nil
	})
	f.reverse = true
	n := newNode(t, money.Ethereum, f.URL, Options{})
	var asked []string
	for i := range 7 {
		asked = append(asked, fmt.Sprintf("0x%064x", i))
	}
	asked = append(asked, alive)
	p, err := n.Pending(context.Background(), watchedSet{}, asked, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Alive) != 1 || !p.Alive[alive] {
		t.Errorf("Alive = %v, want only %s", p.Alive, alive)
	}
	if got := f.count("eth_getTransactionByHash"); got != len(asked) {
		t.Errorf("%d calls, want %d", got, len(asked))
	}
}
