package challenge

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"payd"
	"payd/clock"
)

// The documented siteverify endpoints (testdata/README.md cites the pages).
const (
	TurnstileURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
	HCaptchaURL  = "https://api.hcaptcha.com/siteverify"
)

// DefaultTimeout bounds one verification, retry included: a person waits
// on it, and a provider slower than this is treated as down.
const DefaultTimeout = 5 * time.Second

// maxAnswer bounds the answer read: the documented ones are a few hundred
// bytes, and an error page in their place is cut short.
const maxAnswer = 64 << 10

// Options configure a siteverify client. The zero value is production.
type Options struct {
	// URL replaces the provider's siteverify URL (tests, a proxy).
	URL string
	// Client sends the requests; nil is a client of its own.
	Client *http.Client
	// Timeout bounds one Verify; 0 is DefaultTimeout.
	Timeout time.Duration
	// Hostname, when set, is the only hostname an answer may name: the
	// public URL's host, so a token solved on another site that embeds
	// the same sitekey is refused.
	Hostname string
	// SiteKey, for hCaptcha, is sent with each check so that a token from
	// another of the account's sitekeys is refused.
	SiteKey string
	// Clock times the memory of accepted tokens; nil is the real clock.
	Clock clock.Clock
	// Logger hears of outages and misconfiguration; nil is slog.Default.
	Logger *slog.Logger
}

// provider is what differs between Turnstile and hCaptcha.
type provider struct {
	name string
	url  string
	// maxToken is the longest token the provider issues; a longer one is
	// refused without a call.
	maxToken int
	// action: the answer's action must equal the form (Turnstile's
	// data-action). hCaptcha has no such field.
	action bool
	// idempotent: the provider takes idempotency_key, so a check whose
	// answer was lost can be asked again without spending the token.
	idempotent bool
}

var (
	turnstile = provider{name: ProviderTurnstile, url: TurnstileURL, maxToken: 2048, action: true, idempotent: true}
	hcaptcha  = provider{name: ProviderHCaptcha, url: HCaptchaURL, maxToken: 16 << 10}
)

// unavailableCodes are the error codes that say the check itself is broken
// (our secret, our request, the provider), not that the visitor failed it:
// they fail closed with temporarily_unavailable, never challenge_failed. Every
// other code, known or not, refuses the token.
var unavailableCodes = []string{
	"missing-input-secret", "invalid-input-secret", "sitekey-secret-mismatch", "invalid-sitekey",
	"bad-request", "internal-error", "missing-remoteip", "invalid-remoteip",
}

// Siteverify checks tokens with a provider's siteverify API: Turnstile or
// hCaptcha. It never prints its secret, whatever the verb.
type Siteverify struct {
	p      provider
	secret string
	o      Options
	seen   *seen
}

// NewTurnstile returns a Cloudflare Turnstile client for the widget's
// secret key. The widget on each form must set data-action to the form's
// name (signup, signin, reset): the answer's action is checked.
func NewTurnstile(secret string, o Options) *Siteverify { return newSiteverify(turnstile, secret, o) }

// NewHCaptcha returns an hCaptcha client for the account's secret key.
func NewHCaptcha(secret string, o Options) *Siteverify { return newSiteverify(hcaptcha, secret, o) }

func newSiteverify(p provider, secret string, o Options) *Siteverify {
	if o.URL != "" {
		p.url = o.URL
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Siteverify{p: p, secret: secret, o: o, seen: newSeen()}
}

var _ payd.Challenger = (*Siteverify)(nil)

// String names the provider only.
func (v *Siteverify) String() string { return v.p.name }

// Format prints the provider's name for every verb, so %#v or %+v of a
// Siteverify cannot leak the secret into a log.
func (v *Siteverify) Format(f fmt.State, _ rune) { io.WriteString(f, v.String()) }

// answer is a siteverify answer: the fields both providers document and
// payd reads. Success is a pointer so that an answer without it is
// unreadable, not a refusal.
type answer struct {
	Success    *bool    `json:"success"`
	ErrorCodes []string `json:"error-codes"`
	Hostname   string   `json:"hostname"`
	Action     string   `json:"action"`
}

// Verify checks token with the provider and spends it (payd.Challenger).
func (v *Siteverify) Verify(ctx context.Context, form payd.ChallengeForm, token, remoteIP string) error {
	if token == "" || len(token) > v.p.maxToken {
		return payd.ChallengeFailed()
	}
	h := hashToken(token)
	if v.seen.has(h, v.o.Clock.Now()) {
		return payd.ChallengeFailed()
	}
	a, err := v.ask(ctx, token, remoteIP)
	if err != nil {
		v.o.Logger.Warn("bot check unavailable", "provider", v.p.name, "err", err)
		return payd.ChallengeUnavailable()
	}
	if err := v.judge(form, a); err != nil {
		return err
	}
	if !v.seen.add(h, v.o.Clock.Now()) {
		return payd.ChallengeFailed()
	}
	return nil
}

// judge turns an answer into the verdict.
func (v *Siteverify) judge(form payd.ChallengeForm, a *answer) error {
	if !*a.Success {
		if i := slices.IndexFunc(a.ErrorCodes, func(c string) bool { return slices.Contains(unavailableCodes, c) }); i >= 0 {
			v.o.Logger.Error("bot check misconfigured or failing", "provider", v.p.name, "code", a.ErrorCodes[i])
			return payd.ChallengeUnavailable()
		}
		return payd.ChallengeFailed()
	}
	if v.p.action && a.Action != string(form) {
		return payd.ChallengeFailed()
	}
	if v.o.Hostname != "" && !strings.EqualFold(a.Hostname, v.o.Hostname) {
		return payd.ChallengeFailed()
	}
	return nil
}

// ask posts the token and reads the answer, asking a second time with the
// same idempotency_key when the provider takes one and the first attempt
// got no answer, a 5xx or internal-error. The error names what went wrong
// for the log and never holds the secret: the secret travels in the body,
// and the URL carries none.
func (v *Siteverify) ask(ctx context.Context, token, remoteIP string) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, v.o.Timeout)
	defer cancel()
	form := url.Values{"secret": {v.secret}, "response": {token}}
	if ip, err := netip.ParseAddr(remoteIP); err == nil {
		form.Set("remoteip", ip.String())
	}
	if v.p.name == ProviderHCaptcha && v.o.SiteKey != "" {
		form.Set("sitekey", v.o.SiteKey)
	}
	attempts := 1
	if v.p.idempotent {
		form.Set("idempotency_key", newUUID())
		attempts = 2
	}
	var err error
	for range attempts {
		var a *answer
		var retry bool
		a, retry, err = v.post(ctx, form.Encode())
		if err == nil {
			return a, nil
		}
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// post makes one siteverify request. retry reports a failure that asking
// again may cure.
func (v *Siteverify) post(ctx context.Context, body string) (a *answer, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.p.url, strings.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%s siteverify: %w", v.p.name, redactURL(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := v.o.Client.Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("%s siteverify: %w", v.p.name, redactURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, true, fmt.Errorf("%s siteverify: reading the answer: %w", v.p.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode >= 500, fmt.Errorf("%s siteverify: status %d", v.p.name, resp.StatusCode)
	}
	a, err = decodeAnswer(raw)
	if err != nil {
		return nil, false, fmt.Errorf("%s siteverify: %w", v.p.name, err)
	}
	if !*a.Success && slices.Contains(a.ErrorCodes, "internal-error") {
		return a, true, errInternal
	}
	return a, false, nil
}

// errInternal is the provider's own internal-error: asked again once, then
// the check is unavailable.
var errInternal = errors.New("provider answered internal-error")

// decodeAnswer reads a siteverify answer; one that is not a JSON object with
// a boolean success is an error.
func decodeAnswer(raw []byte) (*answer, error) {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("unreadable answer: %w", err)
	}
	if a.Success == nil {
		return nil, errors.New("answer without success")
	}
	return &a, nil
}

// redactURL keeps the cause of a transport error but drops its URL, which
// a configured proxy could have given a password.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// newUUID returns a random (version 4) UUID for idempotency_key.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
