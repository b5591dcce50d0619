package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"payd/clock"
)

// Defaults of ClientOptions.
const (
	// DefaultTimeout is the answer deadline of spec 6.3 rule 1 and 8.1: a
	// receiver that has not answered within it has failed the attempt.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxBody is how much of a response is read and kept for the
	// delivery log; a receiver cannot make payd read more.
	DefaultMaxBody = 64 << 10
	// maxHeaderBytes caps the response headers for the same reason.
	maxHeaderBytes = 32 << 10
	// userAgent names payd to receivers, who often filter on it.
	userAgent = "payd-webhooks/1"
)

// ErrInsecureURL is returned for an endpoint URL that is not an absolute
// https URL with a host (spec 6.3 rule 7); development also allows http.
var ErrInsecureURL = errors.New("webhook: endpoint must be an https URL")

// ClientOptions configures outbound deliveries. The zero value is the
// production setting: no private addresses, no proxy, 15 s, 64 KiB.
type ClientOptions struct {
	// AllowPrivate turns the address rules off and allows plain http. Only
	// --dev sets it, so a developer can deliver to a receiver on localhost.
	AllowPrivate bool
	// Proxy, when set, carries every delivery. Nil means no proxy at all:
	// the environment's HTTP_PROXY and HTTPS_PROXY are never consulted,
	// because an inherited variable silently routing signed events
	// elsewhere is worse than a missing proxy. With a proxy the proxy
	// resolves names, so it must filter targets itself (for example
	// Smokescreen); literal addresses are still checked here.
	Proxy *url.URL
	// Timeout is the whole exchange's deadline; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBody caps the response bytes read; zero means DefaultMaxBody.
	MaxBody int64
	// Resolver resolves endpoint host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Clock times each attempt for the delivery record; nil means
	// clock.Real.
	Clock clock.Clock

	// exempt and rootCAs exist for this package's tests only: one test
	// server address let through the rules, and its certificate.
	exempt  netip.AddrPort
	rootCAs *x509.CertPool
}

// withDefaults fills the zero fields.
func (o ClientOptions) withDefaults() ClientOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return o
}

// NewClient returns the HTTP client deliveries use: the checking dialer,
// no redirects (a 3xx is the answer, and a failed attempt), no proxy
// unless configured, capped response headers and the answer deadline.
func NewClient(opts ClientOptions) *http.Client {
	opts = opts.withDefaults()
	tr := &http.Transport{
		Proxy:               proxyFunc(opts),
		DialContext:         newDialer(opts).DialContext,
		ForceAttemptHTTP2:   true,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.rootCAs},
		TLSHandshakeTimeout: 10 * time.Second,
		// A busy quick endpoint has up to 4 × DelivererOptions.PerEndpoint
		// (256) attempts in flight; keeping that many connections alive
		// spares a TCP (and TLS) handshake per delivery, which at 2 idle
		// per host dominated.
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// proxyFunc returns the transport's proxy choice: none, or the configured
// proxy after refusing literal forbidden targets, which the dialer will
// not see because it only dials the proxy.
func proxyFunc(opts ClientOptions) func(*http.Request) (*url.URL, error) {
	if opts.Proxy == nil {
		return nil
	}
	return func(r *http.Request) (*url.URL, error) {
		if !opts.AllowPrivate {
			if ip, err := netip.ParseAddr(r.URL.Hostname()); err == nil {
				if err := CheckAddr(ip); err != nil {
					return nil, err
				}
			}
		}
		return opts.Proxy, nil
	}
}

// checkScheme parses raw and applies the scheme and host rules at send
// time. The fuller rules for saving an endpoint (no credentials, no local
// names, public-looking literals) are the domain's, in payd's webhook.go;
// addresses are judged by the dialer on every connection.
func checkScheme(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadURL, err)
	}
	ok := u.Scheme == "https" || (allowPrivate && u.Scheme == "http")
	if !ok || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: %q", ErrInsecureURL, u.Redacted())
	}
	return u, nil
}

// Result is one attempt's outcome, as the delivery record keeps it.
type Result struct {
	// Status is the HTTP status answered, 0 when there was no answer.
	Status int
	// Duration is the time from sending to the end of the capped read.
	Duration time.Duration
	// Body holds at most MaxBody bytes of the response.
	Body []byte
	// Truncated is true when the response had more than MaxBody bytes.
	Truncated bool
	// Err is why there was no answer: refused address, bad URL, timeout,
	// connection error. It is nil whenever a status was received.
	Err error
}

// OK reports whether the attempt succeeded: a 2xx answer within the
// deadline (spec 6.3 rule 1). Every other outcome is a failure to retry.
func (r Result) OK() bool {
	return r.Err == nil && r.Status >= 200 && r.Status <= 299
}

// Sender posts signed deliveries with a NewClient client and times them on
// the service clock.
type Sender struct {
	client       *http.Client
	clock        clock.Clock
	maxBody      int64
	allowPrivate bool
}

// NewSender returns a Sender for opts. Make one and share it: its client
// keeps connections to endpoints alive between deliveries.
func NewSender(opts ClientOptions) *Sender {
	opts = opts.withDefaults()
	return &Sender{
		client:       NewClient(opts),
		clock:        opts.Clock,
		maxBody:      opts.MaxBody,
		allowPrivate: opts.AllowPrivate,
	}
}

// Post sends body with headers (from Headers) to rawURL and returns the
// outcome; it never returns an error separately, because every failure
// is an attempt to record and retry.
func (s *Sender) Post(ctx context.Context, rawURL string, headers http.Header, body []byte) Result {
	start := s.clock.Now()
	res := s.post(ctx, rawURL, headers, body)
	res.Duration = s.clock.Now().Sub(start)
	return res
}

// post does the exchange for Post.
func (s *Sender) post(ctx context.Context, rawURL string, headers http.Header, body []byte) Result {
	u, err := checkScheme(rawURL, s.allowPrivate)
	if err != nil {
		return Result{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Result{Err: fmt.Errorf("%w: %w", errBadURL, err)}
	}
	req.Header = headers.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close() // Unread bytes are not drained: the connection closes.
	res := Result{Status: resp.StatusCode}
	res.Body, res.Truncated = readCapped(resp.Body, s.maxBody)
	return res
}

// readCapped reads at most max bytes of r and reports whether more were
// there. A read error after the status line is ignored: the receiver has
// answered, and the status is what decides the attempt.
func readCapped(r io.Reader, max int64) ([]byte, bool) {
	b, _ := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(b)) > max {
		return b[:max], true
	}
	return b, false
}

// CloseIdleConnections closes kept-alive connections, for shutdown.
func (s *Sender) CloseIdleConnections() { s.client.CloseIdleConnections() }
