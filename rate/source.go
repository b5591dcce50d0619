// Package rate gets the prices payd quotes from: a static table for
// development and tests, public price services (Coinbase, Kraken, CoinGecko)
// for coins and the reference rates of the European Central Bank and the
// Bank of Canada for price currencies. Combine takes the median of what the sources agree on and the
// Refresher keeps a fresh snapshot, with history, in the store.
//
// See docs/rates.md for the sources, the combining rules and what the API
// does when rates are stale.
package rate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// maxBody bounds what a source may send: real answers are a few kilobytes,
// and a misbehaving server must not make payd buffer without limit.
const maxBody = 1 << 20

// userAgent identifies payd to the services, which ask API clients to
// name themselves.
const userAgent = "payd/1 (self-hosted payment service)"

// endpoint is where a public source is asked: its HTTP client (nil means
// http.DefaultClient) and its base URL.
type endpoint struct {
	client *http.Client
	base   string
}

// newEndpoint uses baseURL, or def when baseURL is empty (tests pass an
// httptest server's address).
func newEndpoint(client *http.Client, baseURL, def string) endpoint {
	if baseURL == "" {
		baseURL = def
	}
	return endpoint{client: client, base: strings.TrimRight(baseURL, "/")}
}

// fetchJSON gets a JSON answer, parses it and checks the quotes: the whole
// of a single-request source's Fetch.
func fetchJSON(ctx context.Context, client *http.Client, source, url string, header http.Header, parse func([]byte) (payd.Quotes, error)) (payd.Quotes, error) {
	body, err := get(ctx, client, source, url, "application/json", header)
	if err != nil {
		return payd.Quotes{}, err
	}
	q, err := parse(body)
	if err != nil {
		return payd.Quotes{}, categorized(payd.SourceErrMalformed, err)
	}
	if err := check(source, q); err != nil {
		return payd.Quotes{}, err
	}
	return q, nil
}

// get fetches url and returns the body of a 200 answer. Any other status is
// an error that names the source, with the start of the body, because the
// services explain refusals (rate limits, unknown pairs) there; only the
// logs show that text, a snapshot just the status (categorize).
func get(ctx context.Context, client *http.Client, source, url, accept string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("rate: %s: %w", source, err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	for k, v := range header {
		req.Header[k] = v
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, categorized(transportCategory(err), fmt.Errorf("rate: %s: %w", source, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, categorized(transportCategory(err), fmt.Errorf("rate: %s: reading answer: %w", source, err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &sourceError{cat: payd.SourceErrHTTPStatus, status: resp.StatusCode,
			err: fmt.Errorf("rate: %s: HTTP %d: %q", source, resp.StatusCode, snippet(body))}
	}
	if len(body) > maxBody {
		return nil, categorized(payd.SourceErrTooLarge, fmt.Errorf("rate: %s: answer larger than %d bytes", source, maxBody))
	}
	return body, nil
}

// snippet keeps error messages and logs short whatever a server sends.
func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// parseDecimal turns a number as a service prints it into an exact rate.
// JSON numbers may use exponents ("1.2e-5"), which money.ParseRate refuses,
// so those are expanded exactly; a value that does not fit 18 decimals is
// refused rather than rounded, since a price source never needs that many.
func parseDecimal(s string) (money.Rate, error) {
	if r, err := money.ParseRate(s); err == nil {
		return r, nil
	}
	mant, exp, ok := strings.Cut(strings.ToLower(s), "e")
	if !ok {
		return money.Rate{}, fmt.Errorf("%q is not a positive decimal", s)
	}
	// Bounding the exponent keeps big.Rat from building huge numbers out
	// of a short hostile string.
	e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	if err != nil || e < -30 || e > 30 || len(mant) > 40 {
		return money.Rate{}, fmt.Errorf("%q is not a sensible decimal", s)
	}
	if _, err := money.ParseRate(mant); err != nil {
		return money.Rate{}, fmt.Errorf("%q is not a positive decimal", s)
	}
	r, ok := new(big.Rat).SetString(mant + "e" + strconv.Itoa(e))
	if !ok {
		return money.Rate{}, fmt.Errorf("%q is not a decimal", s)
	}
	return exactRate(r)
}

// scale18 is 10^18, the finest step a money.Rate holds.
var scale18 = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// exactRate converts r to a money.Rate if it has at most 18 decimals.
func exactRate(r *big.Rat) (money.Rate, error) {
	n := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale18))
	if !n.IsInt() {
		return money.Rate{}, fmt.Errorf("%s has more than 18 decimals", r.RatString())
	}
	return money.ParseRate(r.FloatString(18))
}

// truncatedRate converts a positive r to a money.Rate, cutting it after 18
// decimals. Cutting rather than rounding matters: every FiatDecimals
// rounding boundary lies on the 18-decimal grid, so rounding the cut value
// to FiatDecimals later (Combine) gives exactly what rounding r itself
// would.
func truncatedRate(r *big.Rat) (money.Rate, error) {
	n := new(big.Int).Mul(r.Num(), scale18)
	n.Quo(n, r.Denom())
	return exactRate(new(big.Rat).SetFrac(n, scale18))
}

// bounds is the range outside which a reported value is nonsense rather
// than a market move: each is about two orders of magnitude wide, enough for
// years of real prices, narrow enough to catch a wrong pair, a unit mix-up
// (cents for dollars, EUR-per-USD for USD-per-EUR) or a zero.
type bounds struct{ min, max money.Rate }

var coinBounds = map[money.Asset]bounds{
	money.BTC:  {money.MustRate("1000"), money.MustRate("10000000")},
	money.ETH:  {money.MustRate("10"), money.MustRate("1000000")},
	money.SOL:  {money.MustRate("0.1"), money.MustRate("100000")},
	money.USDC: {money.MustRate("0.01"), money.MustRate("100")},
	money.USDT: {money.MustRate("0.01"), money.MustRate("100")},
	// The fee coins have traded between a few cents and a few dollars.
	money.POL: {money.MustRate("0.001"), money.MustRate("1000")},
	money.TRX: {money.MustRate("0.001"), money.MustRate("1000")},
}

var fiatBounds = map[money.Currency]bounds{
	money.USD: {money.MustRate("1"), money.MustRate("1")},
	money.EUR: {money.MustRate("0.01"), money.MustRate("100")},
	money.GBP: {money.MustRate("0.01"), money.MustRate("100")},
	money.CAD: {money.MustRate("0.01"), money.MustRate("100")},
	money.AUD: {money.MustRate("0.01"), money.MustRate("100")},
}

func (b bounds) contains(r money.Rate) bool {
	x := r.Rat()
	return x.Cmp(b.min.Rat()) >= 0 && x.Cmp(b.max.Rat()) <= 0
}

// errEmpty marks an answer with nothing payd can use.
var errEmpty = errors.New("reported no price payd uses")

// check refuses quotes that are empty or hold an absurd value. The
// Refresher runs it on every source, including ones written elsewhere, so
// one broken source cannot move the median by much or at all. Coins and
// currencies payd does not know are ignored, not refused, and so are fee
// coins (money.FeeCoins): they are optional, so an absurd one is dropped
// by dropImplausible instead of costing the source its other values.
func check(source string, q payd.Quotes) error {
	n := 0
	for a, r := range q.Coins {
		b, ok := coinBounds[a]
		if !ok || slices.Contains(money.FeeCoins, a) {
			continue
		}
		if !b.contains(r) {
			return categorized(payd.SourceErrImplausible,
				fmt.Errorf("rate: %s: %s at %s US dollars is outside [%s, %s]", source, a, r, b.min, b.max))
		}
		n++
	}
	for c, r := range q.Fiat {
		b, ok := fiatBounds[c]
		if !ok {
			continue
		}
		if !b.contains(r) {
			return categorized(payd.SourceErrImplausible,
				fmt.Errorf("rate: %s: %s at %s US dollars is outside [%s, %s]", source, c, r, b.min, b.max))
		}
		n++
	}
	if n == 0 {
		for _, a := range money.FeeCoins {
			if r, ok := q.Coins[a]; ok && coinBounds[a].contains(r) {
				return nil
			}
		}
		return categorized(payd.SourceErrMalformed, fmt.Errorf("rate: %s: %w", source, errEmpty))
	}
	return nil
}

// dropImplausible returns q without its fee coins that lie outside their
// plausible range, and those values, for the snapshot's Detail. q itself
// is not changed: a source may share its maps.
func dropImplausible(q payd.Quotes) (payd.Quotes, []payd.DroppedValue) {
	var out []payd.DroppedValue
	for _, a := range money.FeeCoins {
		if r, ok := q.Coins[a]; ok && !coinBounds[a].contains(r) {
			out = append(out, payd.DroppedValue{Code: string(a), Reason: payd.DropImplausible, Value: r})
		}
	}
	if len(out) == 0 {
		return q, nil
	}
	coins := maps.Clone(q.Coins)
	for _, d := range out {
		delete(coins, money.Asset(d.Code))
	}
	q.Coins = coins
	return q, out
}

// sourceError is a source's failure with its category, which is all a
// snapshot keeps of it (payd.SourceState); Error is the full text, for
// the logs.
type sourceError struct {
	cat    payd.SourceError
	status int
	err    error
}

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// categorized gives err the category cat unless it has one already: the
// innermost cause knows best what went wrong.
func categorized(cat payd.SourceError, err error) error {
	var se *sourceError
	if errors.As(err, &se) {
		return err
	}
	return &sourceError{cat: cat, err: err}
}

// transportCategory tells a request that timed out from one that never
// reached the service.
func transportCategory(err error) payd.SourceError {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimeout) || errors.As(err, &ne) && ne.Timeout() {
		return payd.SourceErrTimeout
	}
	return payd.SourceErrUnreachable
}

// categorize returns what a snapshot shows of a source's error: its
// category and, for an HTTP status, the status. An error a source gave no
// category (a source written elsewhere) is a timeout or unreachable when
// it says so, else SourceErrOther.
func categorize(err error) (payd.SourceError, int) {
	var se *sourceError
	if errors.As(err, &se) {
		return se.cat, se.status
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimeout) {
		return transportCategory(err), 0
	}
	return payd.SourceErrOther, 0
}
