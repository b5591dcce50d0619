package webhook

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testTimeout keeps refused or hanging attempts from slowing the suite.
const testTimeout = 2 * time.Second

// fakeResolver answers host names from a table; a name with several
// answers gives them in turn, one per lookup, to play DNS rebinding.
type fakeResolver struct {
	mu      sync.Mutex
	names   map[string][][]netip.Addr
	lookups map[string]int
}

func newResolver() *fakeResolver {
	return &fakeResolver{names: map[string][][]netip.Addr{}, lookups: map[string]int{}}
}

// set makes host resolve to addrs on every lookup.
func (r *fakeResolver) set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[host] = [][]netip.Addr{parseAddrs(addrs)}
}

// sequence makes host's successive lookups give the answers in turn; the
// last answer repeats.
func (r *fakeResolver) sequence(host string, answers ...[]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[host] = nil
	for _, a := range answers {
		r.names[host] = append(r.names[host], parseAddrs(a))
	}
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := min(r.lookups[host], len(answers)-1)
	r.lookups[host]++
	return append([]netip.Addr(nil), answers[n]...), nil
}

func parseAddrs(addrs []string) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// counter is a TCP listener that counts and drops every connection, to
// prove a refused delivery never reached it.
type counter struct {
	ln    net.Listener
	conns atomic.Int64
}

func newCounter(t *testing.T, addr string) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	c := &counter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *counter) port() uint16 {
	return uint16(c.ln.Addr().(*net.TCPAddr).Port)
}

// hitServer is an HTTP server that counts requests and answers 200.
func hitServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// publicTLS starts an HTTPS server on loopback and returns options that
// treat exactly its address as if it were public: the stand-in for a
// legitimate receiver in tests that run with the production rules.
func publicTLS(t *testing.T, h http.Handler) (*httptest.Server, ClientOptions) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return srv, ClientOptions{Timeout: testTimeout, exempt: ap, rootCAs: roots}
}

// port returns the port of an httptest server.
func port(srv *httptest.Server) uint16 {
	return netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
}
