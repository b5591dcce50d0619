package evm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"payd"
	"payd/chain"
)

// Bounds of one exchange with the node.
const (
	// maxResponse bounds a response body: a mainnet block with every
	// transaction in full is a few MB; the bound keeps a broken or hostile
	// endpoint from filling memory.
	maxResponse = 64 << 20
	// maxBatch is how many calls go in one JSON-RPC batch: hosted
	// providers refuse larger batches (some at 100, some at 1,000).
	maxBatch = 100
	// requestTimeout bounds one exchange (and a websocket's dial) when the
	// caller's context has no earlier deadline, so a node that stops
	// answering mid-response cannot hold a follower forever.
	requestTimeout = 30 * time.Second
)

// client speaks JSON-RPC 2.0 to one node, over HTTP POST or a websocket
// (transport.go). It never puts the node's URL in an error: hosted
// providers carry the API key in its path or query, and a self-hosted node
// its password in the userinfo. Errors name the endpoint as scheme://host
// only.
type client struct {
	endpoint string // scheme://host, safe to show
	network  string // for messages: "ethereum node"
	tr       transport
	id       atomic.Uint64
}

// newClient checks rawURL (http, https, ws or wss, with a host) and returns
// a client for it; hc makes the requests to an http(s) node. The error
// never repeats the URL.
func newClient(network, rawURL string, hc *http.Client) (*client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("evm: the %s node URL does not parse", network)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("evm: the %s node URL has no host", network)
	}
	c := &client{endpoint: u.Scheme + "://" + u.Host, network: network + " node"}
	switch u.Scheme {
	case "http", "https":
		if hc == nil {
			hc = &http.Client{Timeout: requestTimeout}
		}
		c.tr = &httpTransport{url: rawURL, http: hc}
	case "ws", "wss":
		c.tr = newWSTransport(u)
	default:
		return nil, fmt.Errorf("evm: the %s node URL must be http://, https://, ws:// or wss://", network)
	}
	return c, nil
}

// close lets go of the node's connection, if its transport keeps one.
func (c *client) close() error { return c.tr.close() }

// request is one JSON-RPC 2.0 call.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// response is one JSON-RPC 2.0 answer: a result or an error.
type response struct {
	ID json.RawMessage `json:"id"`
	// Method is set in a websocket node's subscription notification,
	// never in an answer.
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is the error object of a JSON-RPC answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpcCall is one method call to make, and where its result goes.
type rpcCall struct {
	method string
	params []any
	result any // a pointer json.Unmarshal fills
}

// call makes one call and decodes its result into result. A JSON null
// result leaves result untouched (pointers stay nil).
func (c *client) call(ctx context.Context, result any, method string, params ...any) error {
	return c.batch(ctx, []rpcCall{{method, params, result}})
}

// batch makes calls as JSON-RPC batch arrays of at most maxBatch, one
// round trip each, and decodes each result into its call's result. One
// call alone goes as a plain request, which every node takes. Every
// failure, whether reaching the node, an HTTP status, a malformed answer
// or an error the node returns for one call, is upstream_unavailable: the
// node cannot give what the caller needs now, and the follower tries again.
func (c *client) batch(ctx context.Context, calls []rpcCall) error {
	for len(calls) > 0 {
		n := min(len(calls), maxBatch)
		if err := c.round(ctx, calls[:n]); err != nil {
			return err
		}
		calls = calls[n:]
	}
	return nil
}

// round makes one exchange for calls.
func (c *client) round(ctx context.Context, calls []rpcCall) error {
	reqs := make([]request, len(calls))
	byID := make(map[string]int, len(calls))
	for i, cl := range calls {
		params := cl.params
		if params == nil {
			params = []any{}
		}
		reqs[i] = request{"2.0", c.id.Add(1), cl.method, params}
		byID[strconv.FormatUint(reqs[i].ID, 10)] = i
	}
	var body any = reqs
	if len(reqs) == 1 {
		body = reqs[0]
	}
	resps, err := c.exchange(ctx, calls[0].method, body, byID)
	if err != nil {
		return err
	}
	seen := make([]bool, len(calls))
	for _, r := range resps {
		i, ok := byID[string(r.ID)]
		if !ok && len(resps) == 1 && r.Error != nil {
			// A node that cannot read a request answers with no id.
			return c.fail("%s: refused: %s (code %d)", calls[0].method, chain.Clip(r.Error.Message), r.Error.Code)
		}
		if !ok || seen[i] {
			return c.fail("%s: the answer has an id that was not asked", calls[0].method)
		}
		seen[i] = true
		if err := c.decode(calls[i], r); err != nil {
			return err
		}
	}
	for i, ok := range seen {
		if !ok {
			return c.fail("%s: the answer has no result for one call", calls[i].method)
		}
	}
	return nil
}

// decode puts one answer's result into its call's result.
func (c *client) decode(cl rpcCall, r response) error {
	if r.Error != nil {
		return c.fail("%s: %s (code %d)", cl.method, chain.Clip(r.Error.Message), r.Error.Code)
	}
	if len(r.Result) == 0 {
		return c.fail("%s: the answer has neither result nor error", cl.method)
	}
	if err := json.Unmarshal(r.Result, cl.result); err != nil {
		return c.fail("%s: malformed result: %s", cl.method, chain.Clip(err.Error()))
	}
	return nil
}

// exchange sends body, the requests of byID, and reads the node's answers:
// an array for a batch, one object otherwise (also for a batch a node
// refuses as a whole). Over a websocket, messages that do not answer them
// are skipped (see answers).
func (c *client) exchange(ctx context.Context, method string, body any, byID map[string]int) ([]response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("evm: encoding %s: %w", method, err)
	}
	var resps []response
	var perr error
	err = c.tr.roundTrip(ctx, b, func(msg []byte) bool {
		rs, err := c.parse(method, msg, len(byID) > 1)
		if err == nil && !answers(rs, byID) {
			return false
		}
		resps, perr = rs, err
		return true
	})
	if err != nil {
		return nil, c.fail("%s: %s", method, err)
	}
	return resps, perr
}

// answers reports whether rs, read from one message, answer the requests
// of byID: a message with one of their ids, or one error object without an
// id (a node's refusal of a message it could not read). A websocket node
// also sends subscription notifications, which have no id, and would
// answer a request of an exchange given up on with its id, had the
// connection not been dropped then.
func answers(rs []response, byID map[string]int) bool {
	for _, r := range rs {
		if _, ok := byID[string(r.ID)]; ok {
			return true
		}
	}
	return len(rs) == 1 && rs[0].Method == "" && rs[0].Error != nil &&
		(len(rs[0].ID) == 0 || string(rs[0].ID) == "null")
}

// parse reads a batch's array, or one answer.
func (c *client) parse(method string, data []byte, batch bool) ([]response, error) {
	data = bytes.TrimSpace(data)
	if batch && len(data) > 0 && data[0] == '[' {
		var rs []response
		if err := json.Unmarshal(data, &rs); err != nil {
			return nil, c.fail("%s: malformed batch answer", method)
		}
		return rs, nil
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, c.fail("%s: malformed answer", method)
	}
	if batch && r.Error != nil {
		return nil, c.fail("%s: batch refused: %s (code %d)", method, chain.Clip(r.Error.Message), r.Error.Code)
	}
	return []response{r}, nil
}

// fail is an upstream_unavailable error naming the node by its endpoint.
func (c *client) fail(format string, args ...any) error {
	return payd.Errorf(payd.ErrUpstreamUnavailable, "%s %s: %s", c.network, c.endpoint, fmt.Sprintf(format, args...))
}
