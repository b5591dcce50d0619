package main

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"payd/store/storetest"
)

// smtpSink is a real SMTP server on loopback (emersion/go-smtp) that takes
// every message without TLS or AUTH, as a local relay does.
type smtpSink struct {
	addr string
	mu   sync.Mutex
	msgs []string
}

func startSMTP(t *testing.T) *smtpSink {
	t.Helper()
	s := &smtpSink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: s}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return s
}

type sinkSession struct {
	s *smtpSink
}

func (x *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (x *sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (x *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, string(b))
	x.s.mu.Unlock()
	return nil
}
func (x *sinkSession) Reset()        {}
func (x *sinkSession) Logout() error { return nil }

// waitCode waits for a message carrying a 6-digit code on a line of its own.
func (s *smtpSink) waitCode(t *testing.T) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(\d{6})\r?$`)
	deadline := clockAfter(30 * time.Second)
	for {
		s.mu.Lock()
		for _, m := range s.msgs {
			if c := re.FindStringSubmatch(m); c != nil {
				s.mu.Unlock()
				return c[1]
			}
		}
		s.mu.Unlock()
		select {
		case <-deadline:
			t.Fatal("no code reached the SMTP server in 30 s")
		case <-clockAfter(50 * time.Millisecond):
		}
	}
}

// TestSignupOverSMTP signs up on a production server (no --dev) whose
// emails go out through a real SMTP server, and reads the code there.
func TestSignupOverSMTP(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		sink := startSMTP(t)
		s := startServe(t, dsn, "--rates", "static", "--challenge", "none",
			"--smtp", "smtp://"+sink.addr, "--mail-from", "payd <no-reply@example.com>")
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		post := func(path, body string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", strings.TrimSuffix(s.base, "/api/v1"))
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		if res := post("/accounts", `{"email":"ada@example.com","password":"correct horse battery","name":"Ada"}`); res.StatusCode != 202 {
			t.Fatalf("POST /accounts: %d", res.StatusCode)
		}
		code := sink.waitCode(t)
		if res := post("/accounts/verify", `{"email":"ada@example.com","code":"`+code+`"}`); res.StatusCode != 201 {
			t.Fatalf("POST /accounts/verify: %d", res.StatusCode)
		}
		res, err := client.Get(s.base + "/me")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET /me after sign-up: %v %v", res.StatusCode, err)
		}
		res.Body.Close()
		// The session cookie is HttpOnly and SameSite=Lax.
		u, _ := url.Parse(s.base)
		if len(jar.Cookies(u)) == 0 {
			t.Fatal("no session cookie kept")
		}
	})
}

// TestEdgeForbidden: payd answers only at its public URL's host.
func TestEdgeForbidden(t *testing.T) {
	s := startServe(t, storetest.SQLiteDSN(t), "--dev")
	req, _ := http.NewRequest("GET", s.base+"/exchange-rates", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 403 || !strings.Contains(string(body), `"edge_forbidden"`) {
		t.Fatalf("wrong Host: %d %s", res.StatusCode, body)
	}
	req, _ = http.NewRequest("GET", strings.TrimSuffix(s.base, "/api/v1")+"/healthz", nil)
	req.Host = "evil.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("/healthz with another Host: %v %v", res.StatusCode, err)
	}
	if res, err := http.Get(s.base + "/exchange-rates"); err != nil || res.StatusCode != 200 {
		t.Fatalf("right Host: %v", err)
	}
}
