package mail_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"payd/clock"
)

// A real SMTP server for the tests: emersion/go-smtp on loopback, with
// STARTTLS on a certificate made for the test (or implicit TLS, or no TLS
// at all), AUTH PLAIN for one user, and a switch that makes it refuse.

const (
	testUser = "mailer@example.com"
	testPass = "s3cret-Passw0rd"
)

// received is one message the server accepted.
type received struct {
	from string
	to   []string
	data []byte
	tls  bool   // the session was encrypted
	user string // who authenticated
}

// server is a running test SMTP server.
type server struct {
	t     *testing.T
	addr  string
	roots *x509.CertPool

	mu       sync.Mutex
	msgs     []received
	attempts int             // MAIL commands seen
	refuse   *smtp.SMTPError // answer to every MAIL when set
}

// serverMode says how a connection is encrypted.
type serverMode int

const (
	startTLS    serverMode = iota // plain, STARTTLS offered, AUTH only after it
	implicitTLS                   // TLS from the first byte (smtps)
	noTLS                         // plain, no STARTTLS; AUTH offered in the clear
)

// startServer runs a server on a free loopback port until the test ends.
func startServer(t *testing.T, mode serverMode) *server {
	t.Helper()
	return startServerOn(t, mode, "127.0.0.1:0")
}

// startServerOn runs a server listening on addr until the test ends.
func startServerOn(t *testing.T, mode serverMode, addr string) *server {
	t.Helper()
	cert, roots := testCert(t)
	s := &server{t: t, roots: roots}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 1 << 20
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	switch mode {
	case startTLS:
		srv.TLSConfig = conf
	case implicitTLS:
		l = tls.NewListener(l, conf)
	case noTLS:
		srv.AllowInsecureAuth = true
	}
	s.addr = l.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return s
}

// port is the server's port.
func (s *server) port() int {
	_, p, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// refuseWith makes the server answer every MAIL FROM with err (nil: accept).
func (s *server) refuseWith(err *smtp.SMTPError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = err
}

// messages returns what the server has accepted so far.
func (s *server) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

// tries counts the MAIL commands seen, accepted or refused.
func (s *server) tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

func (s *server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, c: c}, nil
}

// session is one connection's transaction.
type session struct {
	s    *server
	c    *smtp.Conn
	user string
	msg  received
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != testUser || password != testPass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.attempts++
	if x.s.refuse != nil {
		return x.s.refuse
	}
	_, isTLS := x.c.TLSConnectionState()
	x.msg = received{from: from, tls: isTLS, user: x.user}
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.msg.to = append(x.msg.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.msg.data = bytes.Clone(b)
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.msgs = append(x.s.msgs, x.msg)
	return nil
}

func (x *session) Reset()        { x.msg = received{} }
func (x *session) Logout() error { return nil }

// testCert makes a self-signed certificate for 127.0.0.1 and localhost,
// and the pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Real{}.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "payd test SMTP"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: c}, roots
}

// freePort returns a loopback port nothing listens on: a server that is
// down.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}
