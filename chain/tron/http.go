package tron

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"payd"
	"payd/chain"
	"payd/money"
)

// Bounds of one exchange with the node.
const (
	// maxResponse bounds a response body: the transaction infos of a busy
	// mainnet block (a few hundred TRC-20 transfers with their logs) are
	// well under a few MB; the bound keeps a broken or hostile endpoint
	// from filling memory.
	maxResponse = 64 << 20
	// requestTimeout bounds one exchange when the caller's context has no
	// earlier deadline, so a node that stops answering mid-response cannot
	// hold a follower forever.
	requestTimeout = 30 * time.Second
)

// APIKeyHeader is the header TronGrid reads its API key from
// (https://developers.tron.network/reference/select-network): the user
// part of a --chain tron URL without a password goes there.
const APIKeyHeader = "TRON-PRO-API-KEY"

// client POSTs JSON to the HTTP API of one full node or TronGrid. It never
// puts the node's URL in an error: TronGrid's key rides in the userinfo,
// a self-hosted node's password too, and hosted providers put theirs in
// the path or query. Errors name the endpoint as scheme://host only.
type client struct {
	endpoint string   // scheme://host, safe to show
	base     *url.URL // the URL without userinfo: path prefix and query kept
	apiKey   string   // TRON-PRO-API-KEY, from a userinfo with no password
	user     *url.Userinfo
	http     *http.Client
}

// newClient checks rawURL (http or https, with a host) and returns a
// client for it. A userinfo with only a user is TronGrid's API key
// (https://KEY@api.trongrid.io); one with a password is HTTP Basic
// authorization, for a self-hosted node behind a proxy. The error never
// repeats the URL.
func newClient(rawURL string, hc *http.Client) (*client, error) {
	u, err := chain.NodeURL(money.Tron, rawURL)
	if err != nil {
		return nil, err
	}
	c := &client{endpoint: u.Scheme + "://" + u.Host, http: chain.NodeClient(money.Tron, hc, requestTimeout)}
	if u.User != nil {
		if _, hasPass := u.User.Password(); hasPass {
			c.user = u.User
		} else {
			c.apiKey = u.User.Username()
		}
	}
	base := *u
	base.User = nil
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = ""
	c.base = &base
	return c, nil
}

// post sends body as JSON to the API's path (/wallet/…) and decodes the
// answer into out. Every failure, whether reaching the node, an HTTP
// status (429 with its Retry-After, 5xx), a malformed answer or an error
// the API returns in its body, is upstream_unavailable: the node cannot
// give what the caller needs now, and the follower tries again with its
// backoff.
func (c *client) post(ctx context.Context, path string, body, out any) error {
	data, err := c.exchange(ctx, path, body)
	if err != nil {
		return c.fail("%s: %s", path, err)
	}
	if msg, ok := apiError(data); ok {
		return c.fail("%s: refused: %s", path, chain.Clip(msg))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.fail("%s: malformed answer: %s", path, chain.Clip(err.Error()))
	}
	return nil
}

// exchange makes one POST and returns the body of a 200 answer. Its
// errors say what failed without the URL.
func (c *client) exchange(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	u := *c.base
	u.Path += path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
	if err != nil {
		return nil, errors.New("cannot make the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set(APIKeyHeader, c.apiKey)
	}
	if c.user != nil {
		pass, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), pass)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, errors.New(chain.TransportError(err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %s", chain.TransportError(err))
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("the answer is over %d MiB", maxResponse>>20)
	}
	if res.StatusCode != http.StatusOK {
		return nil, statusError(res, data)
	}
	return data, nil
}

// statusError describes an HTTP status other than 200 with the error its
// body gives, if any. TronGrid refuses a request over its rate limits
// with 403 (no key, blocked for 30 s) or 503 (a key over its rate), a body
// {"Error": "… suspended for 30s"}, or the same body with 200 (apiError)
// (https://developers.tron.network/reference/rate-limits); a 429 may say
// in Retry-After when to come back. The follower's backoff does the
// waiting.
func statusError(res *http.Response, body []byte) error {
	msg := fmt.Sprintf("HTTP %d", res.StatusCode)
	if ra := res.Header.Get("Retry-After"); res.StatusCode == http.StatusTooManyRequests && ra != "" {
		msg = fmt.Sprintf("HTTP 429: rate limited, retry after %s", chain.Clip(ra))
	}
	if e, ok := apiError(body); ok {
		msg += ": " + chain.Clip(e)
	}
	return errors.New(msg)
}

// apiError reads the error a java-tron servlet or TronGrid writes in a
// 200 answer's body, {"Error": "…"}, which no successful answer has.
func apiError(data []byte) (string, bool) {
	var e struct {
		Error *string `json:"Error"`
	}
	if json.Unmarshal(data, &e) != nil || e.Error == nil {
		return "", false
	}
	return *e.Error, true
}

// fail is an upstream_unavailable error naming the node by its endpoint.
func (c *client) fail(format string, args ...any) error {
	return payd.Errorf(payd.ErrUpstreamUnavailable, "tron node %s: %s", c.endpoint, fmt.Sprintf(format, args...))
}

// close lets go of idle connections.
func (c *client) close() { c.http.CloseIdleConnections() }
