package solana

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"payd"
	"payd/chain"
	"payd/clock"
	"payd/money"
)

// Bounds of one exchange with the node.
const (
	// maxResponse bounds a response body: a batch of 100 transactions is
	// well under a MB; the bound keeps a broken or hostile endpoint from
	// filling memory.
	maxResponse = 32 << 20
	// maxBatch is how many calls go in one JSON-RPC batch: hosted
	// providers refuse larger batches (some at 100).
	maxBatch = 100
	// requestTimeout bounds one exchange when the caller's context has no
	// earlier deadline, so a node that stops answering mid-response
	// cannot hold the follower.
	requestTimeout = 30 * time.Second
	// defaultRetryAfter is how long the client waits after an HTTP 429
	// that names no Retry-After.
	defaultRetryAfter = 5 * time.Second
	// maxRetryAfter bounds a Retry-After, so a provider's mistake cannot
	// stop the follower for a day.
	maxRetryAfter = 5 * time.Minute
)

// client speaks JSON-RPC 2.0 to one Solana RPC node over HTTP POST. It
// never puts the node's URL in an error: hosted providers carry the API
// key in its path or query. Errors name the endpoint as scheme://host.
// Every call passes a client-side rate limit (limiter), and after an HTTP
// 429 no call is made until the node's Retry-After has passed.
type client struct {
	endpoint string // scheme://host, safe to show
	url      string // the full URL: never in an error
	http     *http.Client
	limit    *limiter // the scan's calls
	fee      *limiter // fee reads, which an API request waits for
	clock    clock.Clock
	id       atomic.Uint64

	mu         sync.Mutex
	retryAfter time.Time // no call before it (an HTTP 429)
}

// newClient checks rawURL (http or https, with a host) and returns a
// client for it. The error never repeats the URL.
func newClient(rawURL string, hc *http.Client, clk clock.Clock, rps int) (*client, error) {
	u, err := chain.NodeURL(money.Solana, rawURL)
	if err != nil {
		return nil, err
	}
	own := chain.NodeClient(money.Solana, hc, requestTimeout)
	// One call a second of the budget is kept for fee reads, so an API
	// request's fee estimate never waits behind a scan's batch; a budget
	// of one a second is shared.
	limit, fee := newLimiter(clk, 1), newLimiter(clk, 1)
	if rps < 2 {
		fee = limit
	} else {
		limit = newLimiter(clk, rps-1)
	}
	return &client{endpoint: u.Scheme + "://" + u.Host, url: rawURL, http: own, clock: clk, limit: limit, fee: fee},
		nil
}

// request is one JSON-RPC 2.0 call.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// response is one JSON-RPC 2.0 answer: a result or an error.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is the error object of a JSON-RPC answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// nodeError is an error object the node answered one call with: the
// node was reached and refused the call (an account that is not a mint).
// It is upstream_unavailable like every other failure, but callers that
// must tell a refusal apart (the mint check) find its code with errors.As.
type nodeError struct {
	code int
	err  error
}

func (e *nodeError) Error() string { return e.err.Error() }
func (e *nodeError) Unwrap() error { return e.err }

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

// feeCall is call under the fee reads' own budget (client.fee).
func (c *client) feeCall(ctx context.Context, result any, method string, params ...any) error {
	return c.round(ctx, c.fee, []rpcCall{{method, params, result}})
}

// batch makes calls as JSON-RPC batch arrays of at most maxBatch, one
// round trip each, each call counted by the rate limit. One call alone
// goes as a plain request. Every failure (reaching the node, an HTTP
// status, a malformed answer, an error for one call) is
// upstream_unavailable: the follower tries again with backoff.
func (c *client) batch(ctx context.Context, calls []rpcCall) error {
	for len(calls) > 0 {
		n := min(len(calls), maxBatch)
		if err := c.round(ctx, c.limit, calls[:n]); err != nil {
			return err
		}
		calls = calls[n:]
	}
	return nil
}

// round makes one exchange for calls, under the rate limit lim.
func (c *client) round(ctx context.Context, lim *limiter, calls []rpcCall) error {
	method := calls[0].method
	if err := c.wait(ctx, lim, method, len(calls)); err != nil {
		return err
	}
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
	data, err := c.post(ctx, method, body)
	if err != nil {
		return err
	}
	resps, err := c.parse(method, data, len(reqs) > 1)
	if err != nil {
		return err
	}
	seen := make([]bool, len(calls))
	for _, r := range resps {
		i, ok := byID[string(r.ID)]
		if !ok && len(resps) == 1 && r.Error != nil {
			if rateLimit(r.Error) {
				return c.throttled(method, 0)
			}
			// A node that cannot read a request answers with no id.
			return c.fail("%s: refused: %s (code %d)", method, chain.Clip(r.Error.Message), r.Error.Code)
		}
		if !ok || seen[i] {
			return c.fail("%s: the answer has an id that was not asked", method)
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

// wait holds a call back until the rate limit lim lets n calls through,
// or refuses it while the node's Retry-After runs.
func (c *client) wait(ctx context.Context, lim *limiter, method string, n int) error {
	c.mu.Lock()
	until := c.retryAfter
	c.mu.Unlock()
	if now := c.clock.Now(); now.Before(until) {
		return &throttledError{c.fail("%s: rate limited by the node until %s", method, until.UTC().Format(time.RFC3339))}
	}
	if err := lim.wait(ctx, n); err != nil {
		return c.fail("%s: %s", method, chain.TransportError(err))
	}
	return nil
}

// post sends body and returns the answer's bytes.
func (c *client) post(ctx context.Context, method string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("solana: encoding %s: %w", method, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, c.fail("%s: cannot make the request", method)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, c.fail("%s: %s", method, chain.TransportError(err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return nil, c.fail("%s: reading the answer: %s", method, chain.TransportError(err))
	}
	if len(data) > maxResponse {
		return nil, c.fail("%s: the answer is over %d MiB", method, maxResponse>>20)
	}
	if res.StatusCode == http.StatusTooManyRequests {
		return nil, c.throttled(method, retryAfter(res.Header.Get("Retry-After"), c.clock.Now()))
	}
	if res.StatusCode != http.StatusOK {
		return nil, c.fail("%s: HTTP %d", method, res.StatusCode)
	}
	return data, nil
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3): seconds (the
// form RPC providers send) or an HTTP-date, read at now.
// defaultRetryAfter when it is absent or unreadable, at most
// maxRetryAfter.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return defaultRetryAfter
		}
		if s > int(maxRetryAfter/time.Second) {
			return maxRetryAfter // before the product overflows
		}
		return time.Duration(s) * time.Second
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return defaultRetryAfter
	}
	return max(0, min(t.Sub(now), maxRetryAfter))
}

// throttled records that the node asked for no call before d from now
// (defaultRetryAfter when d is 0) and returns the error of the call it
// refused.
func (c *client) throttled(method string, d time.Duration) error {
	if d <= 0 {
		d = defaultRetryAfter
	}
	until := c.clock.Now().Add(d)
	c.mu.Lock()
	c.retryAfter = until
	c.mu.Unlock()
	return &throttledError{c.fail("%s: rate limited by the node (HTTP 429 or a rate-limit error) until %s", method,
		until.UTC().Format(time.RFC3339))}
}

// throttledError is the node's rate limit (an HTTP 429, or a JSON-RPC
// rate-limit error) or a call refused while its Retry-After runs. It is
// upstream_unavailable to every caller; NotYet tells the follower that it
// waits a limit out, which is not a failure of the node (payd.Scanner).
type throttledError struct{ err error }

func (e *throttledError) Error() string { return e.err.Error() }
func (e *throttledError) Unwrap() error { return e.err }

// NotYet reports that the call is to be made again later.
func (e *throttledError) NotYet() bool { return true }

// rateLimitCode is the JSON-RPC error some providers answer a call over
// their rate limit with, in an HTTP 200 (-32005, "limit exceeded").
const rateLimitCode = -32005

// rateLimit reports whether e is a provider's rate limit inside a 200:
// code -32005 or a message that says so.
func rateLimit(e *rpcError) bool {
	m := strings.ToLower(e.Message)
	return e.Code == rateLimitCode || e.Code == http.StatusTooManyRequests || strings.Contains(m, "rate limit") ||
		strings.Contains(m, "too many requests")
}

// minContextSlotCode is the error a node answers a call with when it has
// not reached the call's minContextSlot: a backend behind the tip read.
const minContextSlotCode = -32016

// notReached is the answer of a node behind the call's minContextSlot:
// not_found, what the follower waits out as a node not there yet.
func (c *client) notReached(method string, e *rpcError) error {
	return payd.Errorf(payd.ErrNotFound, "solana node %s: %s: %s (code %d): a backend behind the slot read",
		c.endpoint, method, chain.Clip(e.Message), e.Code)
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
		if rateLimit(r.Error) {
			return nil, c.throttled(method, 0)
		}
		return nil, c.fail("%s: batch refused: %s (code %d)", method, chain.Clip(r.Error.Message), r.Error.Code)
	}
	return []response{r}, nil
}

// decode puts one answer's result into its call's result.
func (c *client) decode(cl rpcCall, r response) error {
	if r.Error != nil && rateLimit(r.Error) {
		return c.throttled(cl.method, 0)
	}
	if r.Error != nil && r.Error.Code == minContextSlotCode {
		return c.notReached(cl.method, r.Error)
	}
	if r.Error != nil {
		return &nodeError{r.Error.Code, c.fail("%s: %s (code %d)", cl.method, chain.Clip(r.Error.Message), r.Error.Code)}
	}
	if len(r.Result) == 0 {
		return c.fail("%s: the answer has neither result nor error", cl.method)
	}
	if err := json.Unmarshal(r.Result, cl.result); err != nil {
		return c.fail("%s: malformed result: %s", cl.method, chain.Clip(err.Error()))
	}
	return nil
}

// fail is an upstream_unavailable error naming the node by its endpoint.
func (c *client) fail(format string, args ...any) error {
	return payd.Errorf(payd.ErrUpstreamUnavailable, "solana node %s: %s", c.endpoint, fmt.Sprintf(format, args...))
}

// limiter is a token bucket of the client's calls: up to rps calls at
// once, then rps a second. Hosted Solana RPC providers limit calls per
// second per key (public endpoints at about 10), and a follower that
// stays under its limit never meets a 429.
type limiter struct {
	clock clock.Clock
	every time.Duration // one token's worth of time
	burst time.Duration // the bucket's size in time

	mu sync.Mutex
	at time.Time // when the bucket will have refilled to empty
}

// newLimiter is a bucket of rps calls, refilled at rps a second.
func newLimiter(clk clock.Clock, rps int) *limiter {
	every := time.Second / time.Duration(rps)
	return &limiter{clock: clk, every: every, burst: time.Duration(rps) * every}
}

// wait takes n tokens, waiting for them when the bucket is short. A batch
// larger than the bucket waits for what it overdraws.
func (l *limiter) wait(ctx context.Context, n int) error {
	l.mu.Lock()
	now := l.clock.Now()
	if l.at.Before(now) {
		l.at = now
	}
	l.at = l.at.Add(time.Duration(n) * l.every)
	delay := l.at.Sub(now) - l.burst
	l.mu.Unlock()
	if delay <= 0 {
		return nil
	}
	t := l.clock.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		// The calls are not made: their tokens go back to the bucket.
		l.mu.Lock()
		l.at = l.at.Add(-time.Duration(n) * l.every)
		l.mu.Unlock()
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
