package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// forbiddenURL builds a URL to addr:port; IPv6 is bracketed.
func forbiddenURL(scheme, addr string, port uint16) string {
	return scheme + "://" + netip.AddrPortFrom(netip.MustParseAddr(addr), port).String() + "/"
}

// wantRefused fails unless res is a refusal by the address rules.
func wantRefused(t *testing.T, what string, res Result) {
	t.Helper()
	if !errors.Is(res.Err, ErrForbiddenAddress) || res.Status != 0 || res.OK() {
		t.Errorf("%s: status %d, err %v; want a forbidden-address refusal", what, res.Status, res.Err)
	}
}

// TestSSRFLiterals posts to a literal address of every forbidden class.
// Loopback URLs point at live listeners, which must see no connection:
// the refusal comes before any packet. The plain-http variant goes
// through the bare client, which has no URL rules, so the refusal there
// is the dialer's alone.
func TestSSRFLiterals(t *testing.T) {
	v4 := newCounter(t, "127.0.0.1:0")
	s := NewSender(ClientOptions{Timeout: testTimeout, Resolver: newResolver()})
	c := NewClient(ClientOptions{Timeout: testTimeout, Resolver: newResolver()})
	for _, fc := range forbiddenCases {
		for _, a := range fc.addrs {
			res := s.Post(context.Background(), forbiddenURL("https", a, v4.port()), nil, []byte("{}"))
			wantRefused(t, fc.class+" https "+a, res)
			resp, err := c.Post(forbiddenURL("http", a, v4.port()), "application/json", nil)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Errorf("%s http %s via bare client: err = %v", fc.class, a, err)
			}
		}
	}
	odd := []string{
		fmt.Sprintf("https://localhost:%d/", v4.port()), // the real resolver, /etc/hosts
		fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/", v4.port()),
		fmt.Sprintf("https://[fe80::1%%25lo]:%d/", v4.port()),
	}
	real := NewSender(ClientOptions{Timeout: testTimeout})
	for _, u := range odd {
		res := real.Post(context.Background(), u, nil, nil)
		if res.Err == nil || res.OK() {
			t.Errorf("%s: %d %v; want refused", u, res.Status, res.Err)
		}
	}
	if n := v4.conns.Load(); n != 0 {
		t.Errorf("loopback listener got %d connections", n)
	}
}

// TestSSRFLoopbackIPv6 repeats the loopback case against a live [::1]
// listener, where the machine has IPv6.
func TestSSRFLoopbackIPv6(t *testing.T) {
	v6 := newCounter(t, "[::1]:0")
	s := NewSender(ClientOptions{Timeout: testTimeout})
	for _, a := range []string{"::1", "::ffff:127.0.0.1"} {
		wantRefused(t, a, s.Post(context.Background(), forbiddenURL("https", a, v6.port()), nil, nil))
	}
	if n := v6.conns.Load(); n != 0 {
		t.Errorf("[::1] listener got %d connections", n)
	}
}

// TestSSRFHostnames resolves public-looking names to every forbidden
// class, alone and mixed with a public address: all are refused, and the
// public one is never dialled either.
func TestSSRFHostnames(t *testing.T) {
	v4 := newCounter(t, "127.0.0.1:0")
	r := newResolver()
	s := NewSender(ClientOptions{Timeout: testTimeout, Resolver: r})
	for i, fc := range forbiddenCases {
		for j, a := range fc.addrs {
			host := fmt.Sprintf("c%d-%d.hooks.example.com", i, j)
			r.set(host, a)
			u := fmt.Sprintf("https://%s:%d/", host, v4.port())
			wantRefused(t, fc.class+" "+host+"="+a, s.Post(context.Background(), u, nil, nil))
			r.set("mixed."+host, "2606:4700:4700::1111", "8.8.8.8", a)
			u = fmt.Sprintf("https://mixed.%s:%d/", host, v4.port())
			wantRefused(t, fc.class+" mixed "+a, s.Post(context.Background(), u, nil, nil))
		}
	}
	if n := v4.conns.Load(); n != 0 {
		t.Errorf("loopback listener got %d connections", n)
	}
}

// TestSSRFDNSRebinding resolves a name to the allowed receiver first and
// to forbidden addresses afterwards. Every new connection resolves once
// and dials what it checked, so the later answers are refused.
func TestSSRFDNSRebinding(t *testing.T) {
	srv, opts := publicTLS(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := newResolver()
	opts.Resolver = r
	r.sequence("rebind.example.com", []string{"127.0.0.1"}, []string{"169.254.169.254"}, []string{"10.0.0.1"})
	s := NewSender(opts)
	u := fmt.Sprintf("https://rebind.example.com:%d/", port(srv))
	if res := s.Post(context.Background(), u, nil, nil); !res.OK() {
		t.Fatalf("first post: %d %v", res.Status, res.Err)
	}
	for i := 2; i <= 3; i++ {
		s.CloseIdleConnections()
		wantRefused(t, fmt.Sprintf("lookup %d", i), s.Post(context.Background(), u, nil, nil))
		if n := r.count("rebind.example.com"); n != i {
			t.Errorf("after post %d: %d lookups, want one per connection", i, n)
		}
	}
}

// TestSSRFRedirects has an allowed receiver answer with redirects to
// every forbidden class, literal and by name: the redirect is the answer
// (a failed attempt), and its target sees nothing. In development, where
// the target would be allowed, it is still not followed.
func TestSSRFRedirects(t *testing.T) {
	target, hits := hitServer(t)
	var location string
	first := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location, http.StatusFound)
	})
	srv, opts := publicTLS(t, first)
	r := newResolver()
	r.set("hooks.example.com", "127.0.0.1")
	r.set("evil.example.com", "127.0.0.1")
	opts.Resolver = r
	s := NewSender(opts)
	u := fmt.Sprintf("https://hooks.example.com:%d/", port(srv))
	var locations []string
	for _, fc := range forbiddenCases {
		for _, a := range fc.addrs {
			locations = append(locations, forbiddenURL("http", a, port(target)))
		}
	}
	locations = append(locations, target.URL+"/", fmt.Sprintf("http://evil.example.com:%d/", port(target)))
	for _, location = range locations {
		res := s.Post(context.Background(), u, nil, nil)
		if res.Status != http.StatusFound || res.OK() || res.Err != nil {
			t.Errorf("redirect to %s: %d %v; want a failed 302", location, res.Status, res.Err)
		}
	}
	dev := NewSender(ClientOptions{AllowPrivate: true, Timeout: testTimeout, rootCAs: opts.rootCAs})
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv := httptestRedirect(t, target.URL+"/", code)
		if res := dev.Post(context.Background(), srv, nil, nil); res.Status != code || res.OK() {
			t.Errorf("dev %d: %d %v", code, res.Status, res.Err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("redirect target got %d requests", n)
	}
}

// httptestRedirect starts a plain server that redirects with code.
func httptestRedirect(t *testing.T, to string, code int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}
