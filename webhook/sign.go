package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as Standard Webhooks
// libraries expect, so a secret is recognisable wherever it is pasted.
const SecretPrefix = "whsec_"

// Header names of spec 6.2. They are spelled in lower case as the spec
// and Standard Webhooks spell them; HTTP header names are case-insensitive,
// and http.Header stores them canonicalised.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Key sizes accepted for a secret, in bytes after base64 decoding. They are
// the bounds Standard Webhooks recommends: shorter keys are too weak for
// HMAC-SHA256, and longer ones add nothing but header noise elsewhere.
const (
	MinKeyBytes = 24
	MaxKeyBytes = 64
	// newKeyBytes is what NewSecret makes: 256 bits, the HMAC-SHA256 block
	// strength.
	newKeyBytes = 32
	// maxIDBytes bounds the webhook-id so a header stays reasonable.
	maxIDBytes = 255
)

// ErrBadSecret is returned for a secret that is not whsec_ followed by the
// canonical base64 of a key of MinKeyBytes to MaxKeyBytes bytes. It is an
// error rather than a best effort because a secret that decodes
// differently here and in the receiver's library fails every delivery.
var ErrBadSecret = errors.New("webhook: malformed signing secret")

// ErrBadMessage is returned when the id or timestamp cannot be carried in
// the headers unambiguously (an empty id, one with spaces, dots or control
// characters, or a time before 1970).
var ErrBadMessage = errors.New("webhook: id or timestamp cannot be signed")

// Sign returns the webhook-signature header value for one delivery: one
// "v1,<base64 HMAC-SHA256>" entry per secret, separated by spaces, over
// "<id>.<unix seconds>.<body>". Several secrets are given during a
// rotation (spec 6.2: the old secret keeps signing for 24 hours), so a
// receiver that still holds either secret accepts the delivery.
func Sign(id string, ts time.Time, body []byte, secrets []string) (string, error) {
	if err := checkMessage(id, ts); err != nil {
		return "", err
	}
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret given", ErrBadSecret)
	}
	entries := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, err := decodeSecret(s)
		if err != nil {
			return "", fmt.Errorf("secret %d: %w", i, err)
		}
		entries = append(entries, "v1,"+signature(key, id, ts.Unix(), body))
	}
	return strings.Join(entries, " "), nil
}

// Headers returns every header of spec 6.2 for one delivery of body, so the
// delivery loop and the stored delivery record (spec 2.10
// request_headers) use one source for them.
func Headers(id string, ts time.Time, body []byte, secrets []string) (http.Header, error) {
	sig, err := Sign(id, ts, body, secrets)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 4)
	h.Set("Content-Type", "application/json")
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// NewSecret returns a fresh signing secret: whsec_ and the base64 of 32
// bytes read from r. A nil r means crypto/rand; tests pass a fixed reader
// to get a known secret.
func NewSecret(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	key := make([]byte, newKeyBytes)
	if _, err := io.ReadFull(r, key); err != nil {
		return "", fmt.Errorf("webhook: reading random key: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// signature is the base64 HMAC-SHA256 of "<id>.<ts>.<body>" under key.
func signature(key []byte, id string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// decodeSecret returns the key inside a whsec_ secret. It insists on the
// canonical encoding (re-encoding gives back the same text) because the
// standard decoder silently skips line breaks and other libraries may not.
func decodeSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %s prefix", ErrBadSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || base64.StdEncoding.EncodeToString(key) != enc {
		return nil, fmt.Errorf("%w: not canonical base64", ErrBadSecret)
	}
	if len(key) < MinKeyBytes || len(key) > MaxKeyBytes {
		return nil, fmt.Errorf("%w: key is %d bytes, want %d to %d",
			ErrBadSecret, len(key), MinKeyBytes, MaxKeyBytes)
	}
	return key, nil
}

// checkMessage refuses ids and times the headers cannot carry as signed:
// the id must be visible ASCII without spaces (so it survives as a header
// value byte for byte) and without dots (so "<id>.<ts>.<body>" splits one
// way only), and the timestamp must not be before the epoch.
func checkMessage(id string, ts time.Time) error {
	if id == "" || len(id) > maxIDBytes {
		return fmt.Errorf("%w: id must be 1 to %d bytes", ErrBadMessage, maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' || id[i] == '.' {
			return fmt.Errorf("%w: id byte %d is not visible ASCII other than a dot", ErrBadMessage, i)
		}
	}
	if ts.Unix() < 0 {
		return fmt.Errorf("%w: timestamp before 1970", ErrBadMessage)
	}
	return nil
}
