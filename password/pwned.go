package password

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payd/clock"
)

// Defaults of PwnedConfig.
const (
	// DefaultPwnedTimeout bounds the whole range request. The answer only
	// adds a rule to a sign-up or password change, so a slow service is
	// skipped rather than waited for.
	DefaultPwnedTimeout = 2 * time.Second
	// maxRangeBody caps the answer read: a padded range is 800 to 1,000
	// lines of 40 bytes or so.
	maxRangeBody = 1 << 20
	// pwnedUserAgent names payd; the HIBP API refuses requests without one.
	pwnedUserAgent = "payd-password-check/1"
)

// PwnedAPI is the documented address of the Pwned Passwords range API;
// payd does not use it unless it is configured (PwnedConfig.BaseURL).
const PwnedAPI = "https://api.pwnedpasswords.com"

// PwnedConfig configures a Pwned client. The zero value is off.
type PwnedConfig struct {
	// BaseURL is the range API's base (PwnedAPI, or a mirror); empty turns
	// the check off, the default, because it sends a hash prefix of every
	// new password to a third party.
	BaseURL string
	// Client makes the requests; nil means a plain http.Client.
	Client *http.Client
	// Timeout bounds a request; zero means DefaultPwnedTimeout.
	Timeout time.Duration
	// Clock times the request; nil means clock.Real.
	Clock clock.Clock
}

// Pwned asks Have I Been Pwned's Pwned Passwords range API whether a
// password is known from a breach, by k-anonymity: only the first five hex
// digits of its SHA-1 leave payd, and the answer lists every known suffix
// under that prefix, padded with decoys (Add-Padding) so its size does not
// reveal the prefix either. It is safe for concurrent use.
type Pwned struct {
	base    string
	client  *http.Client
	timeout time.Duration
	clock   clock.Clock
}

// NewPwned returns a client configured by c, or nil (a valid, off client)
// when c.BaseURL is empty.
func NewPwned(c PwnedConfig) *Pwned {
	if c.BaseURL == "" {
		return nil
	}
	p := &Pwned{base: strings.TrimRight(c.BaseURL, "/"), client: c.Client, timeout: c.Timeout, clock: c.Clock}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.timeout == 0 {
		p.timeout = DefaultPwnedTimeout
	}
	if p.clock == nil {
		p.clock = clock.Real{}
	}
	return p
}

// errPwnedTimeout is the cause given to a request cancelled for being slow.
var errPwnedTimeout = errors.New("no answer in time")

// Breached returns how many times the breach corpus has seen password
// (after Normalize, the form payd stores); zero means not known breached.
// It never blocks a sign-up: when the check is off it returns 0, nil, and
// when the service is unreachable, slow, limiting (429) or answers
// something odd it returns 0 and an error for the caller to log, never to
// show. A positive count becomes payd.BreachedPassword().
func (p *Pwned) Breached(ctx context.Context, password string) (int, error) {
	if p == nil {
		return 0, nil
	}
	sum := sha1.Sum([]byte(Normalize(password)))
	digest := strings.ToUpper(hex.EncodeToString(sum[:]))
	body, err := p.fetch(ctx, digest[:5])
	if err != nil {
		return 0, err
	}
	n, err := ParseRange(body, digest[5:])
	if err != nil {
		return 0, fmt.Errorf("password: pwned passwords range %s: %w", digest[:5], err)
	}
	return n, nil
}

// fetch gets the range answer for prefix, giving up after the timeout on
// the service clock. The answer is awaited in a select, so a transport
// that ignores cancellation still cannot hold the caller.
func (p *Pwned) fetch(ctx context.Context, prefix string) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := p.clock.NewTimer(p.timeout)
	defer timer.Stop()
	type answer struct {
		body []byte
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		b, err := p.get(ctx, prefix)
		ch <- answer{b, err}
	}()
	select {
	case a := <-ch:
		return a.body, a.err
	case <-timer.C():
		cancel(errPwnedTimeout)
		return nil, fmt.Errorf("password: pwned passwords range %s: %w within %s", prefix, errPwnedTimeout, p.timeout)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// get makes the request and reads at most maxRangeBody of a 200 answer.
func (p *Pwned) get(ctx context.Context, prefix string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/range/"+prefix, nil)
	if err != nil {
		return nil, fmt.Errorf("password: pwned passwords: %w", err)
	}
	req.Header.Set("Add-Padding", "true")
	req.Header.Set("User-Agent", pwnedUserAgent)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("password: pwned passwords range %s: %w", prefix, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("password: pwned passwords range %s: status %d", prefix, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRangeBody+1))
	if err != nil {
		return nil, fmt.Errorf("password: pwned passwords range %s: %w", prefix, err)
	}
	if len(body) > maxRangeBody {
		return nil, fmt.Errorf("password: pwned passwords range %s: answer over %d bytes", prefix, maxRangeBody)
	}
	return body, nil
}

// ParseRange reads a range answer, lines of SUFFIX:COUNT (35 hex digits,
// a colon, a decimal count) separated by CRLF or LF, and returns the count
// of suffix, or 0 when it is absent or a padding line (count 0). Suffixes
// compare without regard to case. Any malformed line makes the whole
// answer an error: an answer that is not what HIBP documents is not
// trusted, neither to accept nor to refuse.
func ParseRange(body []byte, suffix string) (int, error) {
	found := 0
	for n, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		s, count, ok := bytes.Cut(line, []byte(":"))
		c, err := strconv.ParseUint(string(count), 10, 31)
		if !ok || len(s) != 35 || !isHex(s) || err != nil {
			return 0, fmt.Errorf("line %d is not SUFFIX:COUNT", n+1)
		}
		if strings.EqualFold(string(s), suffix) {
			found = int(c)
		}
	}
	return found, nil
}

// isHex reports whether b is all hexadecimal digits.
func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
