package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/clock"
)

// TestPostVerifiedByReceiver sends a rotation-signed delivery to a
// receiver that checks it with the official library against the raw bytes
// it read, with each secret: what is signed is exactly what is sent.
func TestPostVerifiedByReceiver(t *testing.T) {
	newS, oldS := mustSecret(t, 5), mustSecret(t, 6)
	var failures atomic.Int64
	srv, opts := publicTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		for _, s := range []string{newS, oldS} {
			wh, _ := standardwebhooks.NewWebhook(s)
			if err := wh.Verify(raw, r.Header); err != nil {
				failures.Add(1)
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("User-Agent") != userAgent || r.Header.Get(HeaderID) != "evt_x" {
			failures.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	h, err := Headers("evt_x", clock.Real{}.Now(), []byte(body), []string{newS, oldS})
	if err != nil {
		t.Fatal(err)
	}
	res := NewSender(opts).Post(context.Background(), srv.URL+"/hook", h, []byte(body))
	if !res.OK() || res.Status != http.StatusNoContent || failures.Load() != 0 {
		t.Fatalf("result %d %v %q, receiver failures %d", res.Status, res.Err, res.Body, failures.Load())
	}
}

func TestClassification(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Header().Set("Location", "http://127.0.0.1:1/")
		w.WriteHeader(code)
		fmt.Fprint(w, "answer ", code)
	}))
	defer srv.Close()
	s := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout})
	for _, c := range []struct {
		code int
		ok   bool
	}{
		{200, true}, {201, true}, {202, true}, {204, true}, {299, true},
		{301, false}, {302, false}, {304, false}, {307, false},
		{400, false}, {401, false}, {404, false}, {410, false}, {429, false},
		{500, false}, {502, false}, {503, false},
	} {
		res := s.Post(context.Background(), fmt.Sprintf("%s/%d", srv.URL, c.code), nil, []byte("{}"))
		if res.Status != c.code || res.OK() != c.ok || res.Err != nil {
			t.Errorf("%d: status %d ok %v err %v", c.code, res.Status, res.OK(), res.Err)
		}
	}
}

// TestDurationOnServiceClock times attempts on the injected clock, so the
// delivery record follows the dev test clock like everything else.
func TestDurationOnServiceClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		fake.Advance(1500 * time.Millisecond)
	}))
	defer srv.Close()
	s := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout, Clock: fake})
	if res := s.Post(context.Background(), srv.URL, nil, nil); res.Duration != 1500*time.Millisecond {
		t.Errorf("duration = %v, want 1.5s", res.Duration)
	}
}

// TestBodyCap reads at most MaxBody bytes and closes the connection
// instead of draining the rest: two such answers take two connections.
func TestBodyCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(big)
	}))
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout, MaxBody: 1000})
	for i := 0; i < 2; i++ {
		res := s.Post(context.Background(), srv.URL, nil, nil)
		if !res.OK() || len(res.Body) != 1000 || !res.Truncated {
			t.Fatalf("status %d, %d bytes, truncated %v, err %v", res.Status, len(res.Body), res.Truncated, res.Err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the capped one is not reused)", n)
	}
	small := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer small.Close()
	if res := s.Post(context.Background(), small.URL, nil, nil); string(res.Body) != "ok" || res.Truncated {
		t.Errorf("small body %q truncated %v", res.Body, res.Truncated)
	}
}

// TestHeaderCap refuses an answer whose headers alone exceed the cap.
func TestHeaderCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("y", 2*maxHeaderBytes))
	}))
	defer srv.Close()
	res := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout}).Post(context.Background(), srv.URL, nil, nil)
	if res.Err == nil || res.OK() {
		t.Errorf("huge headers: %d %v", res.Status, res.Err)
	}
}

// TestTimeout fails an attempt whose answer misses the deadline, and keeps
// one whose 2xx status arrived in time even if the body then stalls.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	s := NewSender(ClientOptions{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	res := s.Post(context.Background(), srv.URL+"/slow", nil, nil)
	var ne net.Error
	if res.OK() || res.Status != 0 || !errors.As(res.Err, &ne) || !ne.Timeout() {
		t.Errorf("slow answer: %d %v; want a timeout", res.Status, res.Err)
	}
	if res := s.Post(context.Background(), srv.URL+"/slow-body", nil, nil); !res.OK() {
		t.Errorf("2xx then stalled body: %d %v; want OK", res.Status, res.Err)
	}
}

// TestEnvironmentProxyIgnored sets every proxy variable to a listener that
// counts connections: with no Proxy configured it must see none, for
// http and https endpoints reached by name (so no NO_PROXY default for
// loopback literals hides the mistake).
func TestEnvironmentProxyIgnored(t *testing.T) {
	proxy := newCounter(t, "127.0.0.1:0")
	p := fmt.Sprintf("http://127.0.0.1:%d", proxy.port())
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, p)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	r := newResolver()
	r.set("hooks.example.com", "127.0.0.1")
	plain, hits := hitServer(t)
	dev := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout, Resolver: r})
	if res := dev.Post(context.Background(), fmt.Sprintf("http://hooks.example.com:%d/", port(plain)), nil, nil); !res.OK() {
		t.Errorf("http: %d %v", res.Status, res.Err)
	}
	tlsSrv, opts := publicTLS(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	opts.Resolver = r
	if res := NewSender(opts).Post(context.Background(), fmt.Sprintf("https://hooks.example.com:%d/", port(tlsSrv)), nil, nil); !res.OK() {
		t.Errorf("https: %d %v", res.Status, res.Err)
	}
	if proxy.conns.Load() != 0 || hits.Load() != 1 {
		t.Errorf("proxy connections %d, direct hits %d", proxy.conns.Load(), hits.Load())
	}
}

// TestConfiguredProxy sends through the operator's proxy even though it
// is on loopback, and still refuses a forbidden literal target without
// asking the proxy.
func TestConfiguredProxy(t *testing.T) {
	var asked atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Method != http.MethodConnect || r.Host != "hooks.example.net:443" {
			t.Errorf("proxy asked %s %s", r.Method, r.Host)
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	s := NewSender(ClientOptions{Proxy: pu, Timeout: testTimeout, Resolver: newResolver()})
	if res := s.Post(context.Background(), "https://hooks.example.net/", nil, nil); res.OK() || asked.Load() != 1 {
		t.Errorf("via proxy: %d %v, proxy asked %d times", res.Status, res.Err, asked.Load())
	}
	wantRefused(t, "literal via proxy", s.Post(context.Background(), "https://169.254.169.254/", nil, nil))
	if asked.Load() != 1 {
		t.Errorf("proxy asked about a forbidden literal")
	}
}

func TestSchemeRules(t *testing.T) {
	s := NewSender(ClientOptions{Timeout: testTimeout, Resolver: newResolver()})
	for _, u := range []string{"http://hooks.example.com/", "ftp://hooks.example.com/", "https:///x", "/relative", "https:opaque"} {
		if res := s.Post(context.Background(), u, nil, nil); !errors.Is(res.Err, ErrInsecureURL) {
			t.Errorf("%q: err = %v, want ErrInsecureURL", u, res.Err)
		}
	}
	if res := s.Post(context.Background(), "::", nil, nil); res.Err == nil {
		t.Error("unparsable URL accepted")
	}
	dev := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout, Resolver: newResolver()})
	if res := dev.Post(context.Background(), "ftp://hooks.example.com/", nil, nil); !errors.Is(res.Err, ErrInsecureURL) {
		t.Errorf("dev ftp: err = %v", res.Err)
	}
}
