package bitcoin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

// The RPC client's error paths, against a local HTTP server answering as a
// misbehaving or unreachable node would. The happy paths run against btcd
// in node_test.go.

const secret = "s3cret-pass"

// server serves handler and returns a node URL with credentials for it.
func server(t testing.TB, handler http.HandlerFunc) string {
	t.Helper()
	s := httptest.NewServer(handler)
	t.Cleanup(s.Close)
	return strings.Replace(s.URL, "http://", "http://user:"+secret+"@", 1)
}

// answer serves a fixed status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		code    string // payd error code, or "" for an *RPCError
		rpc     int
	}{
		{"unauthorized", answer(401, ""), payd.ErrUpstreamUnavailable, 0},
		{"forbidden", answer(403, "forbidden"), payd.ErrUpstreamUnavailable, 0},
		{"work queue full", answer(503, "Work queue depth exceeded"), payd.ErrUpstreamUnavailable, 0},
		{"not json", answer(200, "<html>proxy error</html>"), payd.ErrUpstreamUnavailable, 0},
		{"gateway html", answer(502, "<html>bad gateway</html>"), payd.ErrUpstreamUnavailable, 0},
		{"truncated json", answer(200, `{"result":"00`), payd.ErrUpstreamUnavailable, 0},
		{"warming up", answer(500, `{"result":null,"error":{"code":-28,"message":"Loading block index..."},"id":1}`), payd.ErrUpstreamUnavailable, 0},
		// Bitcoin Core answers RPC errors with HTTP 500 or 404 and a body.
		{"rpc error 500", answer(500, `{"result":null,"error":{"code":-8,"message":"Block height out of range"},"id":1}`), "", -8},
		{"method not found 404", answer(404, `{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":1}`), "", -32601},
		// btcd answers them with HTTP 200.
		{"rpc error 200", answer(200, `{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`), "", -5},
		{"wrong result type", answer(200, `{"result":{"a":1},"error":null,"id":1}`), payd.ErrUpstreamUnavailable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewClient(server(t, tt.handler), nil)
			if err != nil {
				t.Fatal(err)
			}
			var s string
			err = c.Call(context.Background(), "getblockhash", &s, 1)
			checkErr(t, err, tt.code, tt.rpc)
		})
	}
}

// checkErr checks err's payd code or RPC code, and that it keeps the
// password to itself.
func checkErr(t *testing.T, err error, code string, rpc int) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatal("no error")
	case strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "user:"):
		t.Errorf("error %q shows the credentials", err)
	case code == "" && rpcCode(err) != rpc:
		t.Errorf("error %v; want RPC error %d", err, rpc)
	case code != "" && payd.ErrorCode(err) != code:
		t.Errorf("error %v; want %s", err, code)
	}
}

func TestClientSendsAuthAndJSONRPC(t *testing.T) {
	t.Parallel()
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		body, _ := io.ReadAll(r.Body)
		if !ok || u != "user" || p != secret || r.Method != http.MethodPost ||
			!strings.Contains(string(body), `"jsonrpc":"1.0"`) || !strings.Contains(string(body), `"method":"getblockcount"`) {
			w.WriteHeader(401)
			return
		}
		_, _ = io.WriteString(w, `{"result":42,"error":null,"id":1}`)
	})
	c, err := NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.Call(context.Background(), "getblockcount", &n); err != nil || n != 42 {
		t.Fatalf("Call = %d, %v", n, err)
	}
}

func TestClientTimeout(t *testing.T) {
	t.Parallel()
	// The handler reads the body first: only then does the server notice
	// the client hanging up and end the request's context.
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done()
	})
	c, err := NewClient(url, &http.Client{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Real{}.Now()
	err = c.Call(context.Background(), "getblockcount", nil)
	if d := (clock.Real{}).Now().Sub(start); d > 5*time.Second {
		t.Errorf("a hung node held the call for %v", d)
	}
	checkErr(t, err, payd.ErrUpstreamUnavailable, 0)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checkErr(t, c.Call(ctx, "getblockcount", nil), payd.ErrUpstreamUnavailable, 0)
}

func TestClientUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := NewClient("http://user:"+secret+"@"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkErr(t, c.Call(context.Background(), "getblockcount", nil), payd.ErrUpstreamUnavailable, 0)
	_, err = New(context.Background(), "http://user:"+secret+"@"+addr, Options{})
	checkErr(t, err, payd.ErrUpstreamUnavailable, 0)
}

func TestNewClientRefusesURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "127.0.0.1:8332", "ftp://user:" + secret + "@host", "http://user:" + secret + "@host:%zz", "http:///x", "user:" + secret + "@host"} {
		_, err := NewClient(u, nil)
		checkErr(t, err, payd.ErrInvalidRequest, 0)
	}
}

func TestNewRefusesUnknownChains(t *testing.T) {
	t.Parallel()
	url := server(t, answer(200, `{"result":{"chain":"simnet"},"error":null,"id":1}`))
	_, err := New(context.Background(), url, Options{})
	checkErr(t, err, payd.ErrInvalidRequest, 0)
}

// TestNewRefusesOtherCoins answers as a Litecoin node does: its chain is
// "main" too, its genesis block is not bitcoin's.
func TestNewRefusesOtherCoins(t *testing.T) {
	t.Parallel()
	const litecoin = "12a765e31ffd4059bada1e25190f6e98c99d9714d334efa41a195a7e7e04bfe2"
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(400)
			return
		}
		result := `{"chain":"main"}`
		if req.Method == "getblockhash" {
			result = `"` + litecoin + `"`
		}
		_, _ = fmt.Fprintf(w, `{"result":%s,"error":null,"id":%d}`, result, req.ID)
	})
	_, err := New(context.Background(), url, Options{})
	checkErr(t, err, payd.ErrInvalidRequest, 0)
	if err == nil || !strings.Contains(err.Error(), "genesis") {
		t.Errorf("New = %v, want it to name the genesis block", err)
	}
}

func TestBatchErrors(t *testing.T) {
	t.Parallel()
	// One call of two answered with an error, the other with a result, in
	// reverse order as a node may.
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasPrefix(string(body), "[") {
			w.WriteHeader(400)
			return
		}
		_, _ = io.WriteString(w, `[{"result":null,"error":{"code":-5,"message":"No such mempool transaction"},"id":2},{"result":"ab","error":null,"id":1}]`)
	})
	c, err := NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a, b string
	calls := []Call{{Method: "getrawtransaction", Result: &a}, {Method: "getrawtransaction", Result: &b}}
	if err := c.Batch(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	if a != "ab" || calls[0].Err != nil || rpcCode(calls[1].Err) != codeNotFound {
		t.Errorf("batch: %q %v, %q %v", a, calls[0].Err, b, calls[1].Err)
	}

	// A batch answered in part is the node's fault.
	url = server(t, answer(200, `[{"result":"ab","error":null,"id":1}]`))
	c, err = NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls = []Call{{Method: "getrawtransaction"}, {Method: "getrawtransaction"}}
	checkErr(t, c.Batch(context.Background(), calls), payd.ErrUpstreamUnavailable, 0)
	var e *RPCError
	if errors.As(calls[0].Err, &e) {
		t.Error("a batch answered in part filled in an RPC error")
	}
}
