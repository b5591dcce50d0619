package webhook

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

// TestAttemptErrorVocabulary makes real attempts through Deliverer.Attempt
// to receivers on loopback that fail in each way the vocabulary names. The
// attempt (what the delivery log shows) carries only the word; payd's log
// carries the detail, with the delivery and endpoint ids.
func TestAttemptErrorVocabulary(t *testing.T) {
	closed := freePort(t)
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-stop
	}))
	defer slow.Close()
	defer close(stop) // before Close, which waits for the handler
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer failing.Close()
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer untrusted.Close()
	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangup.Close()
	redirect := httptest.NewServer(http.RedirectHandler("https://example.com/", http.StatusFound))
	defer redirect.Close()

	dev := ClientOptions{AllowPrivate: true, Timeout: testTimeout}
	short := ClientOptions{AllowPrivate: true, Timeout: 300 * time.Millisecond}
	for _, c := range []struct {
		name, url string
		opts      ClientOptions
		want      string
		detail    string // in the log only
	}{
		{"refused port", "http://" + closed + "/hook", dev, payd.AttemptConnectionRefused, "connect: connection refused"},
		{"no answer in time", slow.URL, short, payd.AttemptTimeout, "Client.Timeout exceeded"},
		{"answered 500", failing.URL, dev, payd.AttemptHTTPStatus(500), ""},
		{"redirect", redirect.URL, dev, payd.AttemptHTTPStatus(302), ""},
		{"unresolvable name", "http://hooks.payd-test.invalid/hook", dev, payd.AttemptDNSFailure, "lookup hooks.payd-test.invalid"},
		{"untrusted certificate", untrusted.URL, dev, payd.AttemptTLSError, "x509"},
		{"hung up", hangup.URL, dev, payd.AttemptConnectionClosed, "EOF"},
		{"forbidden address", "https://" + closed + "/hook", ClientOptions{Timeout: testTimeout}, payd.AttemptForbiddenAddress, "loopback"},
		{"plain http outside dev", "http://hooks.example.com/", ClientOptions{Timeout: testTimeout}, payd.AttemptInvalidURL, "must be an https URL"},
		{"port 0, saved before ports were checked", "http://127.0.0.1:0/hook", dev, payd.AttemptInvalidURL, "port 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs syncBuffer
			d := NewDeliverer(nil, NewSender(c.opts), clock.Real{}, slog.New(slog.NewTextHandler(&logs, nil)), DelivererOptions{})
			e := &payd.WebhookEndpoint{ID: "whk_1", URL: c.url, Secret: mustSecret(t, 1)}
			dl := &payd.WebhookDelivery{ID: "dlv_1", BusinessID: "biz_1", EventID: "evt_1", Payload: []byte(`{}`)}
			a, _, _ := d.Attempt(context.Background(), e, dl, payd.TriggerManual)
			if a.Error != c.want || a.OK() {
				t.Fatalf("error %q (status %d), want %q; log:\n%s", a.Error, a.ResponseStatus, c.want, logs.String())
			}
			if payd.AttemptErrorShown(a.Error) != a.Error {
				t.Errorf("%q is not in the vocabulary the API shows", a.Error)
			}
			log := logs.String()
			if c.detail == "" {
				if log != "" {
					t.Errorf("an answered attempt was logged: %s", log)
				}
				return
			}
			if !strings.Contains(log, c.detail) || !strings.Contains(log, "delivery=dlv_1") ||
				!strings.Contains(log, "endpoint=whk_1") || !strings.Contains(log, "reason="+quoted(c.want)) {
				t.Errorf("the log lacks the detail %q or the ids:\n%s", c.detail, log)
			}
		})
	}
}

// TestReasonVocabulary checks that Reason never leaves the vocabulary,
// whatever error it is given.
func TestReasonVocabulary(t *testing.T) {
	for _, err := range []error{
		errors.New("lookup example.com on 10.255.255.53:53: no such host"), context.Canceled,
		&net.OpError{Op: "dial", Err: errors.New("weird")}, &net.DNSError{Err: "server misbehaving", Name: "x", Server: "10.0.0.53:53"},
	} {
		if r := Reason(err); !slices.Contains(payd.AttemptErrors, r) {
			t.Errorf("Reason(%v) = %q, outside the vocabulary", err, r)
		}
	}
	if r := Reason(&net.DNSError{Err: "server misbehaving", Name: "x", Server: "10.0.0.53:53"}); r != payd.AttemptDNSFailure {
		t.Errorf("a DNS error is %q", r)
	}
}

// quoted is s as slog's text handler writes a value.
func quoted(s string) string {
	if strings.Contains(s, " ") {
		return strconv.Quote(s)
	}
	return s
}

// freePort returns a loopback host:port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// syncBuffer is a log sink safe for the attempt's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
