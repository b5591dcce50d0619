package password

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"payd/clock"
)

// The fixture testdata/range-21BD1.txt is shaped as HIBP documents the range
// answer (https://haveibeenpwned.com/API/v3#SearchingPwnedPasswordsByRange
// and #PwnedPasswordsPadding): CRLF-separated SUFFIX:COUNT lines, upper-case
// 35-digit suffixes, padding lines with count 0. It holds the prefix of
// SHA-1("P@ssw0rd") = 21BD12DC183F740EE76F27B78EB39C8AD972A757; the counts are
// illustrative, not a copy of HIBP's data. testdata/README says so too.
const fixturePrefix = "21BD1"

func pwnedServer(t *testing.T, h http.HandlerFunc) *Pwned {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return NewPwned(PwnedConfig{BaseURL: srv.URL + "/", Client: srv.Client()})
}

func replayFixture(t *testing.T) http.HandlerFunc {
	body, err := os.ReadFile("testdata/range-21BD1.txt")
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/range/"+fixturePrefix || r.Header.Get("Add-Padding") != "true" || r.Header.Get("User-Agent") == "" {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	}
}

func TestPwnedBreached(t *testing.T) {
	p := pwnedServer(t, replayFixture(t))
	n, err := p.Breached(context.Background(), "P@ssw0rd")
	if err != nil || n != 52256179 {
		t.Fatalf("Breached(P@ssw0rd) = %d, %v; want 52256179", n, err)
	}
}

func TestPwnedPaddingAndAbsent(t *testing.T) {
	// One suffix is a padding line (count 0), the other is absent: both
	// are "not known breached".
	body, _ := os.ReadFile("testdata/range-21BD1.txt")
	for _, suffix := range []string{"00A1E3C8A1D6AF07D4AB8F9D4C4B6C28C4F", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"} {
		n, err := ParseRange(body, suffix)
		if err != nil || n != 0 {
			t.Errorf("ParseRange(fixture, %s) = %d, %v; want 0, nil", suffix, n, err)
		}
	}
	n, err := ParseRange(body, strings.ToLower("2DC183F740EE76F27B78EB39C8AD972A757"))
	if err != nil || n != 52256179 {
		t.Errorf("lower-case suffix: %d, %v", n, err)
	}
}

func TestPwnedOff(t *testing.T) {
	p := NewPwned(PwnedConfig{})
	if p != nil {
		t.Fatal("NewPwned without BaseURL is not off")
	}
	if n, err := p.Breached(context.Background(), "P@ssw0rd"); n != 0 || err != nil {
		t.Fatalf("off Breached = %d, %v", n, err)
	}
}

// TestPwnedFailures checks that every failure is "not known breached" plus
// an error: the check never blocks a sign-up.
func TestPwnedFailures(t *testing.T) {
	tests := map[string]http.HandlerFunc{
		"429": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			http.Error(w, `{"statusCode":429,"message":"Rate limit is exceeded."}`, http.StatusTooManyRequests)
		},
		"500":  func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", http.StatusInternalServerError) },
		"html": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html><body>Cloudflare</body></html>")) },
		"garbage": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("2DC183F740EE76F27B78EB39C8AD972A757:lots\r\n"))
		},
		"too long": func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, maxRangeBody+1)) },
		"cut short": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("2DC183F740EE76F27B78EB39C8AD972A757:3\r\n"))
		},
	}
	for name, h := range tests {
		t.Run(name, func(t *testing.T) {
			n, err := pwnedServer(t, h).Breached(context.Background(), "P@ssw0rd")
			if n != 0 || err == nil {
				t.Fatalf("Breached = %d, %v; want 0 and an error", n, err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		n, err := NewPwned(PwnedConfig{BaseURL: srv.URL}).Breached(context.Background(), "P@ssw0rd")
		if n != 0 || err == nil {
			t.Fatalf("Breached = %d, %v; want 0 and an error", n, err)
		}
	})
}

// TestPwnedTimeout holds the answer until the service clock passes the
// timeout: Breached gives up without waiting for the server.
func TestPwnedTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	defer close(release)
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := NewPwned(PwnedConfig{BaseURL: srv.URL, Client: srv.Client(), Clock: clk})
	done := make(chan error, 1)
	go func() {
		_, err := p.Breached(context.Background(), "P@ssw0rd")
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "no answer in time") {
				t.Fatalf("Breached = %v, want a timeout", err)
			}
			return
		default:
			clk.Advance(DefaultPwnedTimeout)
			waitBriefly()
		}
	}
}

// FuzzParseRange checks that ParseRange never panics and that a count it
// returns comes from a well-formed line of the answer.
func FuzzParseRange(f *testing.F) {
	body, _ := os.ReadFile("testdata/range-21BD1.txt")
	f.Add(body, "2DC183F740EE76F27B78EB39C8AD972A757")
	f.Add([]byte("2DC183F740EE76F27B78EB39C8AD972A757:0\n"), "2DC183F740EE76F27B78EB39C8AD972A757")
	f.Add([]byte(":\r\n\r\n"), "")
	f.Fuzz(func(t *testing.T, body []byte, suffix string) {
		n, err := ParseRange(body, suffix)
		if err != nil {
			return
		}
		if n < 0 || n > 0 && !strings.Contains(strings.ToUpper(string(body)), strings.ToUpper(suffix)+":") {
			t.Fatalf("ParseRange = %d for a suffix not in the answer", n)
		}
	})
}
