package evm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"payd"
	"payd/clock"
	"payd/money"
)

// These tests answer the node's part over a local websocket server, for
// what go-ethereum's websocket server does not do on demand: drop the
// connection mid-call, push a notification or a stale answer before the
// answer, send too much, say nothing. A real node over websocket is tested
// in node_test.go (overEach).

// wsRequest is one request a wsNode read.
type wsRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// wsNode is a JSON-RPC server over websocket: each message read goes to
// its handler with the connection it came on.
type wsNode struct {
	*httptest.Server
	conns atomic.Int32 // connections upgraded so far
}

// wsHandler answers (or not) one message of requests on conn, the conns-th
// connection; batch is whether they came as an array.
type wsHandler func(conn *websocket.Conn, conns int, reqs []wsRequest, batch bool)

// serveWS starts a wsNode. It takes only the credentials of secretWSURL
// when auth is set.
func serveWS(t *testing.T, auth bool, h wsHandler) *wsNode {
	t.Helper()
	f := &wsNode{}
	up := websocket.Upgrader{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:hunter2"))
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth && (r.Header.Get("Authorization") != want || r.URL.Path != "/v3/KEYinPATH" || r.URL.Query().Get("apikey") != "KEYinQUERY") {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		n := int(f.conns.Add(1))
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var reqs []wsRequest
			batch := strings.HasPrefix(string(msg), "[")
			if !batch {
				msg = []byte("[" + string(msg) + "]")
			}
			if err := json.Unmarshal(msg, &reqs); err != nil {
				t.Errorf("the node read %s: %v", msg, err)
				return
			}
			h(conn, n, reqs, batch)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// wsURL is the node's ws:// URL with credentials of every kind providers
// use: userinfo, an API key in the path and one in the query.
func (f *wsNode) wsURL() string {
	return strings.Replace(f.URL, "http://", "ws://alice:hunter2@", 1) + "/v3/KEYinPATH?apikey=KEYinQUERY"
}

// tipHash is the hash of the tip answerAll gives.
var tipHash = "0x" + strings.Repeat("5a", 32)

// answerAll answers reqs as a node on chain 1337 at height 5 would, with
// the answers in reverse order for a batch (JSON-RPC allows any order).
func answerAll(conn *websocket.Conn, reqs []wsRequest, batch bool) {
	var out []map[string]any
	for i := len(reqs) - 1; i >= 0; i-- {
		q := reqs[i]
		m := map[string]any{"jsonrpc": "2.0", "id": q.ID}
		switch q.Method {
		case "eth_chainId":
			m["result"] = "0x539"
		case "eth_getBlockByNumber":
			m["result"] = map[string]string{"number": "0x5", "hash": tipHash, "parentHash": "0x" + strings.Repeat("44", 32)}
		default:
			m["result"] = nil
		}
		out = append(out, m)
	}
	if batch {
		conn.WriteJSON(out)
	} else {
		conn.WriteJSON(out[0])
	}
}

// wsNodeAt is New over ws against f, or the test's end.
func wsNodeAt(t *testing.T, f *wsNode) *Node {
	t.Helper()
	n := newNode(t, money.Ethereum, f.wsURL(), Options{})
	t.Cleanup(func() { n.Close() })
	return n
}

// checkTip reads the tip, which must be answerAll's.
func checkTip(t *testing.T, n *Node) {
	t.Helper()
	tip, err := n.Tip(context.Background())
	if err != nil || tip.Height != 5 || tip.Hash != tipHash {
		t.Fatalf("Tip = %+v, %v; want height 5", tip, err)
	}
}

// checkUpstream fails unless err is upstream_unavailable, saying want,
// naming the endpoint and repeating no credential.
func checkUpstream(t *testing.T, err error, want string) {
	t.Helper()
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Fatalf("%v, want upstream_unavailable", err)
	}
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ws://127.0.0.1:") {
		t.Errorf("%v, want %q and the endpoint", err, want)
	}
	checkNoSecret(t, err)
}

// TestWSAnswer has the node push a subscription notification, an answer
// to an unknown id and a message with no id before each answer: they are
// skipped, for one call and for a batch alike. The node's handshake takes
// the URL's credentials (Basic authorization, path and query), and calls
// from many goroutines take turns on the one connection.
func TestWSAnswer(t *testing.T) {
	f := serveWS(t, true, func(conn *websocket.Conn, _ int, reqs []wsRequest, batch bool) {
		conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":{}}}`))
		conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":4242424242,"result":"0xdead"}`))
		conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":null,"result":"0x1"}`))
		answerAll(conn, reqs, batch)
	})
	n := wsNodeAt(t, f)
	if n.ChainID() != 1337 {
		t.Fatalf("chain id %d", n.ChainID())
	}
	checkTip(t, n)
	asked := []string{tipHash, "0x" + strings.Repeat("01", 32), "0x" + strings.Repeat("02", 32)}
	p, err := n.Pending(context.Background(), watchedSet{}, asked, 5)
	if err != nil || len(p.Alive) != 0 {
		t.Fatalf("Pending = %+v, %v", p, err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if tip, err := n.Tip(context.Background()); err != nil || tip.Height != 5 {
				t.Errorf("Tip = %+v, %v", tip, err)
			}
		})
	}
	wg.Wait()
	if got := f.conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
}

// TestWSRefusal reads a node's error object with a null id, its answer to
// a message it could not read, as the answer.
func TestWSRefusal(t *testing.T) {
	f := serveWS(t, false, func(conn *websocket.Conn, _ int, reqs []wsRequest, batch bool) {
		if reqs[0].Method == "eth_chainId" {
			answerAll(conn, reqs, batch)
			return
		}
		conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`))
	})
	n := wsNodeAt(t, f)
	_, err := n.Tip(context.Background())
	checkUpstream(t, err, "refused: invalid request")
	asked := []string{tipHash, "0x" + strings.Repeat("01", 32)}
	_, err = n.Pending(context.Background(), watchedSet{}, asked, 5)
	checkUpstream(t, err, "batch refused: invalid request")
}

// TestWSDropped has the node close the connection in the middle of a call
// on its first connection: the call fails, and the next one dials again.
func TestWSDropped(t *testing.T) {
	f := serveWS(t, true, func(conn *websocket.Conn, conns int, reqs []wsRequest, batch bool) {
		switch {
		case conns == 1 && reqs[0].Method == "eth_getBlockByNumber":
			conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"))
			conn.Close()
		case conns == 2 && reqs[0].Method == "eth_getBlockByNumber":
			conn.UnderlyingConn().Close() // no close message at all
		default:
			answerAll(conn, reqs, batch)
		}
	})
	n := wsNodeAt(t, f)
	_, err := n.Tip(context.Background())
	checkUpstream(t, err, "the node closed the connection (1001 bye)")
	_, err = n.Tip(context.Background())
	checkUpstream(t, err, "reading the answer")
	checkTip(t, n)
	if got := f.conns.Load(); got != 3 {
		t.Errorf("%d connections, want 3: one per failure, then one that lasts", got)
	}
	// Close lets go of the connection; a later call dials again.
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	checkTip(t, n)
	if got := f.conns.Load(); got != 4 {
		t.Errorf("%d connections after Close, want 4", got)
	}
}

// TestWSTooLarge has the node send an answer over maxResponse: it is
// refused once the bound is read, and the next call dials again.
func TestWSTooLarge(t *testing.T) {
	f := serveWS(t, false, func(conn *websocket.Conn, conns int, reqs []wsRequest, batch bool) {
		if conns > 1 || reqs[0].Method == "eth_chainId" {
			answerAll(conn, reqs, batch)
			return
		}
		w, err := conn.NextWriter(websocket.TextMessage)
		if err != nil {
			return
		}
		chunk := []byte(strings.Repeat(" ", 1<<20))
		w.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":"`))
		for range maxResponse>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`"}`))
		w.Close()
	})
	n := wsNodeAt(t, f)
	_, err := n.Tip(context.Background())
	checkUpstream(t, err, "the answer is over 64 MiB")
	checkTip(t, n)
}

// TestWSTimeout has the node read a call and never answer: the call ends
// at its context's deadline, or when its context is canceled, and the next
// one dials again.
func TestWSTimeout(t *testing.T) {
	var silent atomic.Int32
	silent.Store(2)
	f := serveWS(t, true, func(conn *websocket.Conn, _ int, reqs []wsRequest, batch bool) {
		if reqs[0].Method == "eth_getBlockByNumber" && silent.Add(-1) >= 0 {
			return
		}
		answerAll(conn, reqs, batch)
	})
	n := wsNodeAt(t, f)
	clk := clock.Real{}
	start := clk.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := n.Tip(ctx)
	checkUpstream(t, err, "timed out")
	if d := clk.Now().Sub(start); d > 5*time.Second {
		t.Errorf("the call took %s past its 300 ms deadline", d)
	}
	ctx, cancel = context.WithCancel(context.Background())
	tm := clk.NewTimer(100 * time.Millisecond)
	defer tm.Stop()
	go func() { <-tm.C(); cancel() }()
	_, err = n.Tip(ctx)
	checkUpstream(t, err, "canceled")
	checkTip(t, n)
	if got := f.conns.Load(); got != 3 {
		t.Errorf("%d connections, want 3", got)
	}
}

// TestWSConnectErrors: a handshake the node refuses, a node that is not
// there and a server that does not speak websocket fail New without
// repeating the URL's credentials.
func TestWSConnectErrors(t *testing.T) {
	f := serveWS(t, true, func(conn *websocket.Conn, _ int, reqs []wsRequest, batch bool) { answerAll(conn, reqs, batch) })
	wrong := strings.Replace(f.wsURL(), "hunter2", "hunter3", 1)
	_, err := New(context.Background(), money.Ethereum, wrong, Options{Price: fixedPrice})
	checkUpstream(t, err, "connecting: HTTP 401")
	plain := serve(t, "0x539", nil)
	_, err = New(context.Background(), money.Ethereum, strings.Replace(secretURL(plain.URL), "http://", "ws://", 1), Options{Price: fixedPrice})
	checkUpstream(t, err, "connecting: HTTP 400")
	gone := serveWS(t, true, nil)
	gone.Close()
	_, err = New(context.Background(), money.Ethereum, gone.wsURL(), Options{Price: fixedPrice})
	checkUpstream(t, err, "connecting: dial tcp")
	if f.conns.Load() != 0 {
		t.Errorf("the node took a connection with the wrong password")
	}
}
