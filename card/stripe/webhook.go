package stripe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payd"
)

// SignatureHeader carries Stripe's webhook signature.
const SignatureHeader = "Stripe-Signature"

// Tolerance is how far a webhook's signed timestamp may be from the
// service clock: Stripe's libraries' default of five minutes. Stripe's
// libraries refuse only timestamps that old; payd refuses as far ahead
// too, since a signature from the future is no more fresh.
const Tolerance = 5 * time.Minute

// eventSessionUpdated is the event Stripe sends on every status change of
// an onramp session after it is created (docs.stripe.com/crypto/onramp/embedded,
// "Listen to webhook events").
const eventSessionUpdated = "crypto.onramp_session_updated"

// Webhook checks the Stripe-Signature header and reads the event: a
// crypto.onramp_session_updated event gives its session's report, any
// other event type none. invalid_signature for a missing, malformed,
// wrong or stale signature; invalid_json for a well-signed body that is
// not an event. A replay of a well-signed body within the tolerance is
// reported again: payd applies reports idempotently.
func (p *Provider) Webhook(header http.Header, body []byte) ([]payd.CardReport, error) {
	if err := p.verify(header.Get(SignatureHeader), body); err != nil {
		return nil, err
	}
	return decodeEvent(body)
}

// verify checks one Stripe-Signature header against body as Stripe
// documents (docs.stripe.com/webhooks#verify-manually): the t element is
// the timestamp, each v1 element a signature (several while a secret is
// rolled), any other scheme ignored (v0 is a test-mode decoy); a v1 must
// equal HMAC-SHA256(secret, t + "." + body), compared in constant time.
func (p *Provider) verify(h string, body []byte) error {
	t, sigs, ok := parseSignature(h)
	if !ok {
		return payd.Errorf(payd.ErrInvalidSignature, "the Stripe-Signature header is missing or malformed")
	}
	mac := hmac.New(sha256.New, []byte(p.whsec))
	mac.Write([]byte(strconv.FormatInt(t, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	match := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			match = true
		}
	}
	if !match {
		return payd.Errorf(payd.ErrInvalidSignature, "no Stripe-Signature v1 signature matches this body and the signing secret")
	}
	if d := p.clock.Now().Sub(time.Unix(t, 0)); d > Tolerance || d < -Tolerance {
		return payd.Errorf(payd.ErrInvalidSignature, "the Stripe-Signature timestamp is more than %s from now", Tolerance)
	}
	return nil
}

// maxSignatures bounds the v1 elements read from one header.
const maxSignatures = 16

// parseSignature reads t and the v1 signatures of a Stripe-Signature
// header; ok is false unless there is exactly one valid t and at least one
// well-formed v1 (64 hex digits).
func parseSignature(h string) (t int64, sigs [][]byte, ok bool) {
	seenT := false
	for _, el := range strings.Split(h, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(el), "=")
		if !found {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 || seenT {
				return 0, nil, false
			}
			t, seenT = n, true
		case "v1":
			s, err := hex.DecodeString(v)
			if err != nil || len(s) != sha256.Size || len(sigs) == maxSignatures {
				continue
			}
			sigs = append(sigs, s)
		}
	}
	return t, sigs, seenT && len(sigs) > 0
}

// event is the part of a Stripe event payd reads.
type event struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Type   string `json:"type"`
	Data   struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// decodeEvent reads a verified event body into reports: one for a
// crypto.onramp_session_updated event in a status payd knows, none for
// another event type or an unknown status (the poller asks again).
func decodeEvent(body []byte) ([]payd.CardReport, error) {
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil || ev.Object != "event" {
		return nil, payd.Errorf(payd.ErrInvalidJSON, "the webhook body is not a Stripe event")
	}
	if ev.Type != eventSessionUpdated {
		return nil, nil
	}
	s, err := decodeSession(ev.Data.Object)
	if err != nil {
		return nil, payd.Errorf(payd.ErrInvalidJSON, "the %s event does not hold an onramp session", eventSessionUpdated)
	}
	r, ok := s.report()
	if !ok {
		return nil, nil
	}
	return []payd.CardReport{r}, nil
}
