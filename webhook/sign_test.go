package webhook

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/clock"
)

// The official library reads the real time to enforce its five-minute
// tolerance, so signing times in these tests are real times too.

const body = `{"id":"evt_1","kind":"event","type":"payment.succeeded","data":{"amount":1000}}`

func mustSecret(t testing.TB, fill byte) string {
	t.Helper()
	s, err := NewSecret(bytes.NewReader(bytes.Repeat([]byte{fill}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verify checks h and b with the official Standard Webhooks library.
func verify(t *testing.T, secret string, b []byte, h http.Header) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("official library refused secret %q: %v", secret, err)
	}
	return wh.Verify(b, h)
}

func TestHeadersVerifiedByOfficialLibrary(t *testing.T) {
	secret := mustSecret(t, 7)
	h, err := Headers("evt_abc", clock.Real{}.Now(), []byte(body), []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, secret, []byte(body), h); err != nil {
		t.Fatalf("official library: %v", err)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := h.Get(HeaderID); got != "evt_abc" {
		t.Errorf("webhook-id = %q", got)
	}
}

func TestRotationBothSecretsVerify(t *testing.T) {
	newSecret, oldSecret := mustSecret(t, 1), mustSecret(t, 2)
	h, err := Headers("evt_rot", clock.Real{}.Now(), []byte(body), []string{newSecret, oldSecret})
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(h.Get(HeaderSignature), " ")
	if len(entries) != 2 || !strings.HasPrefix(entries[0], "v1,") || !strings.HasPrefix(entries[1], "v1,") {
		t.Fatalf("signature header = %q, want two v1 entries", h.Get(HeaderSignature))
	}
	for name, s := range map[string]string{"new": newSecret, "old": oldSecret} {
		if err := verify(t, s, []byte(body), h); err != nil {
			t.Errorf("%s secret: official library: %v", name, err)
		}
	}
	if err := verify(t, mustSecret(t, 3), []byte(body), h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("unrelated secret: err = %v, want no matching signature", err)
	}
}

func TestOfficialLibraryRefuses(t *testing.T) {
	secret := mustSecret(t, 9)
	now := clock.Real{}.Now()
	h, err := Headers("evt_t", now, []byte(body), []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(body, "1000", "1001", 1)
	if err := verify(t, secret, []byte(tampered), h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("tampered body: err = %v", err)
	}
	// Re-serialised JSON (whitespace) is a different body: raw bytes only.
	if err := verify(t, secret, []byte(body+"\n"), h); err == nil {
		t.Error("body with trailing newline verified")
	}
	other := h.Clone()
	other.Set(HeaderID, "evt_other")
	if err := verify(t, secret, []byte(body), other); err == nil {
		t.Error("changed webhook-id verified")
	}
	old, err := Headers("evt_t", now.Add(-6*time.Minute), []byte(body), []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, secret, []byte(body), old); !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("old timestamp: err = %v, want too old", err)
	}
}

// TestKnownVector pins the published Standard Webhooks example, so an
// accidental change of the signed text is caught without the library too.
func TestKnownVector(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	ts := time.Unix(1614265330, 0)
	payload := []byte(`{"test": 2432232314}`)
	got, err := Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", ts, payload, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	lib, _ := wh.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", ts, payload)
	if got != lib {
		t.Errorf("Sign = %q, official library signs %q", got, lib)
	}
}

func TestSignRefuses(t *testing.T) {
	good := mustSecret(t, 4)
	key24 := base64.StdEncoding.EncodeToString(make([]byte, 24))
	key65 := base64.StdEncoding.EncodeToString(make([]byte, 65))
	now := time.Unix(1_700_000_000, 0)
	cases := []struct {
		name    string
		id      string
		ts      time.Time
		secrets []string
		want    error
	}{
		{"no secrets", "evt_1", now, nil, ErrBadSecret},
		{"no prefix", "evt_1", now, []string{strings.TrimPrefix(good, SecretPrefix)}, ErrBadSecret},
		{"bad base64", "evt_1", now, []string{"whsec_!!!notbase64"}, ErrBadSecret},
		{"line break", "evt_1", now, []string{good[:20] + "\n" + good[20:]}, ErrBadSecret},
		{"short key", "evt_1", now, []string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))}, ErrBadSecret},
		{"long key", "evt_1", now, []string{"whsec_" + key65}, ErrBadSecret},
		{"one bad of two", "evt_1", now, []string{good, "whsec_"}, ErrBadSecret},
		{"empty id", "", now, []string{good}, ErrBadMessage},
		{"id with space", "evt 1", now, []string{good}, ErrBadMessage},
		{"id with dot", "evt.1", now, []string{good}, ErrBadMessage},
		{"id with newline", "evt_1\r\nX-Evil: 1", now, []string{good}, ErrBadMessage},
		{"before epoch", "evt_1", time.Unix(-1, 0), []string{good}, ErrBadMessage},
		{"ok 24-byte key", "evt_1", now, []string{"whsec_" + key24}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Sign(c.id, c.ts, []byte(body), c.secrets)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret(nil)
	if a == b || !strings.HasPrefix(a, SecretPrefix) {
		t.Errorf("secrets %q, %q", a, b)
	}
	if key, err := decodeSecret(a); err != nil || len(key) != 32 {
		t.Errorf("decode: %d bytes, %v", len(key), err)
	}
	if _, err := NewSecret(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("short random source accepted")
	}
}

// FuzzSign checks Sign never panics, and that whatever it signs the
// official library verifies.
func FuzzSign(f *testing.F) {
	f.Add("evt_1", int64(1_700_000_000), []byte(body), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "")
	f.Add("", int64(-5), []byte{}, "whsec_", "whsec_=")
	f.Add("a\x00b", int64(1<<62), []byte{0xff, 0xfe}, "whsec_\n", "whsec_AAAA")
	f.Fuzz(func(t *testing.T, id string, sec int64, b []byte, s1, s2 string) {
		ts := time.Unix(sec, 0)
		sig, err := Sign(id, ts, b, []string{s1, s2})
		if err != nil {
			return
		}
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, strconv.FormatInt(sec, 10))
		h.Set(HeaderSignature, sig)
		for _, s := range []string{s1, s2} {
			wh, err := standardwebhooks.NewWebhook(s)
			if err != nil {
				t.Fatalf("we accepted a secret the library refuses: %q", s)
			}
			if err := wh.VerifyIgnoringTimestamp(b, h); err != nil {
				t.Fatalf("library refused our signature: %v", err)
			}
		}
	})
}
