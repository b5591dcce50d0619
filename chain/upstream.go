package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"payd/money"
)

// What the network adapters share about talking to a node or provider
// they do not control: how much of its words an error repeats, how a
// failed exchange is told without the URL, that no redirect carries their
// credentials elsewhere, and how a fee read from the node becomes cents.

// MaxMessage bounds how much of a node's own words (an error message, a
// malformed answer) an error repeats.
const MaxMessage = 200

// Clip bounds a message from a node to MaxMessage bytes.
func Clip(s string) string {
	if len(s) > MaxMessage {
		return s[:MaxMessage] + "…"
	}
	return s
}

// TransportError describes a failed exchange without the URL that
// net/http puts in a *url.Error: it strips a password, but not a username
// (TronGrid's key), nor an API key in the path or query, where hosted
// providers put theirs.
func TransportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return Clip(err.Error())
}

// NodeURL parses the URL of network n's node, which must be http(s) with
// a host. The error never repeats the URL: it may hold a key.
func NodeURL(n money.Network, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: the node URL does not parse", n)
	case u.Host == "":
		return nil, fmt.Errorf("%s: the node URL has no host", n)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s: the node URL must be http:// or https://", n)
	}
	return u, nil
}

// NodeClient is the HTTP client an adapter reaches network n's node with:
// a copy of hc (one with timeout when nil), so the caller's is left as it
// was, that follows no redirect (RefuseRedirects).
func NodeClient(n money.Network, hc *http.Client, timeout time.Duration) *http.Client {
	if hc == nil {
		hc = &http.Client{Timeout: timeout}
	}
	own := *hc
	own.CheckRedirect = RefuseRedirects(n)
	return &own
}

// RefuseRedirects is an http.Client's CheckRedirect for the node of
// network n: no redirect is followed. net/http drops only Authorization
// and cookies when a redirect leaves the host, so a key sent in another
// header (TronGrid's TRON-PRO-API-KEY) would go wherever the redirect
// points; and a redirected POST turns into a GET, which no node answers.
func RefuseRedirects(n money.Network) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the node answered with a redirect to %s://%s, which payd does not follow (it would carry "+
			"the credentials there): point --chain %s at the URL the node redirects to", req.URL.Scheme, req.URL.Host, n)
	}
}

// FeeCents prices a network fee: units of a coin with decimals decimals
// (sat, wei, sun, lamports) at centsPerCoin US cents a whole coin, in
// cents rounded up, exactly; false when the result does not fit an int64.
// A fee is what a customer pays on top, so it is never rounded down.
func FeeCents(units *big.Int, decimals int, centsPerCoin int64) (int64, bool) {
	num := new(big.Int).Mul(units, big.NewInt(centsPerCoin))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	cents, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Sign() > 0 {
		cents.Add(cents, big.NewInt(1))
	}
	if !cents.IsInt64() {
		return 0, false
	}
	return cents.Int64(), true
}

// Reading is a value read from a node (a fee rate, a gas price) and kept
// for reuse, on the service clock. It is safe for concurrent use.
type Reading[T any] struct {
	mu  sync.Mutex
	v   T
	at  time.Time
	set bool
}

// Get returns the last value kept (the zero T before any), and whether it
// is fresh: kept less than ttl ago. A clock set back (now before the
// reading) makes its age unknown, so it is not fresh either: it is read
// again rather than kept until the clock catches up.
func (r *Reading[T]) Get(now time.Time, ttl time.Duration) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v, r.set && now.Sub(r.at) < ttl && !now.Before(r.at)
}

// Set keeps v as read at now.
func (r *Reading[T]) Set(v T, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v, r.at, r.set = v, now, true
}
