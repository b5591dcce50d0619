package bitcoin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"payd"
)

// maxResponse bounds an answer the client reads: a block of the maximum
// weight (4 MB) is 8 MB of hex, and a mainnet mempool listing of a few
// hundred thousand txids about 20 MB.
const maxResponse = 64 << 20

// DefaultTimeout bounds one call when Options.Timeout is zero: long
// enough for a full block from a busy node, short enough that a follower
// notices a dead node within a poll or two.
const DefaultTimeout = 30 * time.Second

// Client speaks the JSON-RPC 1.0 dialect of Bitcoin Core and btcd over
// HTTP with basic authentication. The credentials come from the node URL
// and appear in no error, log or String: every error names the node by
// host and port only. It is safe for concurrent use.
type Client struct {
	endpoint string // the URL without its user information
	host     string
	user     string
	pass     string
	http     *http.Client
	ids      atomic.Uint64
}

// NewClient returns a client for the node at rawURL,
// http://USER:PASS@HOST:PORT (https too). hc carries the timeouts; nil
// means a client with DefaultTimeout. invalid_request (field url) when the
// URL is not of that shape; the message never repeats it, since it holds
// a password.
func NewClient(rawURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, payd.FieldError("url", "the bitcoin node URL must look like http://USER:PASS@HOST:PORT")
	}
	c := &Client{host: u.Host, http: hc}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	u.User = nil
	c.endpoint = u.String()
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultTimeout}
	}
	return c, nil
}

// Host is the node's host:port, the name errors and logs use for it.
func (c *Client) Host() string { return c.host }

// RPCError is an error object a node answered a call with. Codes are
// Bitcoin Core's (src/rpc/protocol.h), which btcd mostly follows.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *RPCError) Error() string {
	return "bitcoin node: RPC error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// Error codes payd acts on.
const (
	codeMethodNotFound = -32601 // the node does not serve the method
	codeInvalidParam   = -8     // e.g. a block height beyond the tip
	codeOutOfRange     = -1     // btcd's answer to a height beyond the tip
	codeNotFound       = -5     // no such block or transaction
	codeInWarmup       = -28    // the node is still loading
)

// request is one JSON-RPC 1.0 call.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// response is one answer; Result stays raw so that a large hex string is
// decoded once, by the caller.
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
	ID     uint64          `json:"id"`
}

// Call runs method with params and decodes its result into result (a
// pointer; nil discards it). It returns upstream_unavailable when the node
// cannot be reached, refuses the credentials, is still starting or answers
// something that is not JSON-RPC or not the result's shape, and an
// *RPCError (wrapped) when the node refuses the call itself.
func (c *Client) Call(ctx context.Context, method string, result any, params ...any) error {
	if params == nil {
		params = []any{}
	}
	req := request{JSONRPC: "1.0", ID: c.ids.Add(1), Method: method, Params: params}
	body, err := c.post(ctx, req)
	if err != nil {
		return err
	}
	resp, err := decodeResponse(body)
	if err != nil {
		return c.unavailable("answered %s with something that is not JSON-RPC", method)
	}
	return c.result(method, resp, result)
}

// decodeResponse decodes one answer. An answer of exactly the shape
// Bitcoin Core and btcd give a string result of hex digits,
// {"result":"HEX","error":null,"id":N}, as getblock HASH 0 answers with
// megabytes of, is read without encoding/json, which validated the hex
// byte by byte for as long as decoding the block took
// (docs/benchmarks.md); its Result then shares body's memory. Any other
// answer is decoded by encoding/json.
func decodeResponse(body []byte) (response, error) {
	if resp, ok := hexResponse(body); ok {
		return resp, nil
	}
	var resp response
	err := json.Unmarshal(body, &resp)
	return resp, err
}

// hexResponse reads an answer of the shape decodeResponse names, and
// reports false for any other.
func hexResponse(body []byte) (response, bool) {
	const (
		head = `{"result":"`
		mid  = `","error":null,"id":`
	)
	rest, ok := bytes.CutPrefix(body, []byte(head))
	if !ok {
		return response{}, false
	}
	n := 0
	for n < len(rest) && isHex(rest[n]) {
		n++
	}
	result := body[len(head)-1 : len(head)+n+1] // with its quotes
	rest, ok = bytes.CutPrefix(rest[n:], []byte(mid))
	if !ok {
		return response{}, false
	}
	digits, tail, ok := bytes.Cut(bytes.TrimRight(rest, " \t\r\n"), []byte("}"))
	if !ok || len(tail) != 0 || len(digits) == 0 || len(digits) > 19 || (digits[0] == '0' && len(digits) > 1) {
		return response{}, false
	}
	id, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return response{}, false
	}
	return response{Result: result, ID: id}, true
}

// isHex reports whether b is a hex digit of either case: one load per
// byte of a block, where three range tests cost twice as much.
func isHex(b byte) bool { return hexDigits[b] }

var hexDigits = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// Call is one call of a Batch.
type Call struct {
	Method string
	Params []any
	// Result receives the decoded result, as Client.Call's result does.
	Result any
	// Err is the call's own error after Batch returns: an *RPCError, or a
	// result that does not decode.
	Err error
}

// Batch runs calls in one HTTP request, as Bitcoin Core and btcd accept
// (a JSON array of calls), and fills in each call's Result or Err. The
// error it returns is for the request as a whole: upstream_unavailable as
// for Call.
func (c *Client) Batch(ctx context.Context, calls []Call) error {
	if len(calls) == 0 {
		return nil
	}
	reqs := make([]request, len(calls))
	byID := make(map[uint64]int, len(calls))
	for i, call := range calls {
		params := call.Params
		if params == nil {
			params = []any{}
		}
		reqs[i] = request{JSONRPC: "1.0", ID: c.ids.Add(1), Method: call.Method, Params: params}
		byID[reqs[i].ID] = i
	}
	body, err := c.post(ctx, reqs)
	if err != nil {
		return err
	}
	var resps []response
	if err := json.Unmarshal(body, &resps); err != nil {
		return c.unavailable("answered a batch of %s with something that is not a JSON-RPC batch", calls[0].Method)
	}
	answered := 0
	for _, r := range resps {
		i, ok := byID[r.ID]
		if !ok {
			continue
		}
		delete(byID, r.ID)
		answered++
		calls[i].Err = c.result(calls[i].Method, r, calls[i].Result)
	}
	if answered != len(calls) {
		return c.unavailable("answered %d of a batch of %d calls", answered, len(calls))
	}
	return nil
}

// result decodes one answer into out.
func (c *Client) result(method string, r response, out any) error {
	if r.Error != nil {
		if r.Error.Code == codeInWarmup {
			return c.unavailable("is starting up (%s)", r.Error.Message)
		}
		return fmt.Errorf("%s: %w", method, r.Error)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = r.Result
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return c.unavailable("answered %s with a result of another shape (%v)", method, err)
	}
	return nil
}

// post sends one request body and returns the answer's body. Bitcoin Core
// answers RPC errors with HTTP 404 or 500 and a JSON-RPC body, so any
// status with a JSON body is passed on; 401 and 403 mean the credentials,
// 503 a full work queue.
func (c *Client) post(ctx context.Context, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("bitcoin: encoding a call: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("bitcoin: making a request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, c.unavailable("refused the RPC credentials (HTTP %d)", resp.StatusCode)
	case http.StatusServiceUnavailable:
		return nil, c.unavailable("is busy (HTTP 503)")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	switch {
	case err != nil:
		return nil, c.unreachable(ctx, err)
	case len(body) > maxResponse:
		return nil, tooLargeError{c.unavailable("answered more than %d MB", maxResponse>>20)}
	case resp.StatusCode != http.StatusOK && !json.Valid(body):
		return nil, c.unavailable("answered HTTP %d", resp.StatusCode)
	}
	return body, nil
}

// unreachable describes a failed exchange without the URL (which
// net/http's errors carry) and so without the credentials.
func (c *Client) unreachable(ctx context.Context, err error) error {
	var (
		ue *url.Error
		ne net.Error
	)
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case ctx.Err() != nil:
		return c.unavailable("did not answer: %v", ctx.Err())
	case errors.As(err, &ne) && ne.Timeout():
		return c.unavailable("did not answer in time")
	}
	return c.unavailable("cannot be reached: %v", err)
}

// unavailable is upstream_unavailable naming the node by host.
func (c *Client) unavailable(format string, args ...any) error {
	return payd.Errorf(payd.ErrUpstreamUnavailable, "bitcoin node %s %s", c.host, fmt.Sprintf(format, args...))
}

// tooLargeError is the error of an answer over maxResponse: the node
// answered, but more than the client reads. A batch so answered can be
// asked again in smaller parts. It is upstream_unavailable as the error
// it wraps.
type tooLargeError struct{ err error }

func (e tooLargeError) Error() string { return e.err.Error() }
func (e tooLargeError) Unwrap() error { return e.err }

// tooLarge reports whether err is an answer over maxResponse.
func tooLarge(err error) bool {
	var e tooLargeError
	return errors.As(err, &e)
}

// rpcCode returns the code of the *RPCError err wraps, or 0.
func rpcCode(err error) int {
	var e *RPCError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
