package challenge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

const (
	testSecret = "0x4AAAAAAAtestSECRETnever-logged"
	testHost   = "pay.example.com"
)

// reply is one answer of the fake siteverify server.
type reply struct {
	status int
	file   string // under testdata; "" is an empty body
	hang   bool   // answer only when the client gives up
}

func ok(file string) reply { return reply{status: http.StatusOK, file: file} }

// bundle is a Siteverify in front of a fake provider that replays recorded
// answers in order (the last one again when they run out) and keeps the
// requests it was sent.
type bundle struct {
	v    *Siteverify
	logs *bytes.Buffer
	mu   sync.Mutex
	reqs []url.Values
}

func (b *bundle) requests() []url.Values {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]url.Values(nil), b.reqs...)
}

func setup(t *testing.T, p provider, o Options, replies ...reply) *bundle {
	t.Helper()
	b := &bundle{logs: new(bytes.Buffer)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			t.Errorf("siteverify got %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if r.URL.RawQuery != "" {
			t.Errorf("siteverify URL has a query %q: the secret belongs in the body", r.URL.RawQuery)
		}
		if err := r.ParseForm(); err != nil {
			t.Errorf("ParseForm: %v", err)
		}
		b.mu.Lock()
		n := len(b.reqs)
		b.reqs = append(b.reqs, r.PostForm)
		b.mu.Unlock()
		rep := replies[min(n, len(replies)-1)]
		if rep.hang {
			<-r.Context().Done()
			return
		}
		var body []byte
		if rep.file != "" {
			var err error
			if body, err = os.ReadFile(filepath.Join("testdata", rep.file)); err != nil {
				t.Errorf("fixture: %v", err)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	o.URL = srv.URL + "/siteverify"
	o.Logger = slog.New(slog.NewTextHandler(b.logs, nil))
	b.v = newSiteverify(p, testSecret, o)
	return b
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("Verify = %v, want nil", err)
		}
		return
	}
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("Verify = %v, want %s", err, code)
	}
	if code == payd.ErrTemporarilyUnavailable && pe.RetryAfter != payd.ChallengeRetryAfter {
		t.Fatalf("RetryAfter = %v, want %v", pe.RetryAfter, payd.ChallengeRetryAfter)
	}
	if strings.Contains(err.Error(), testSecret) {
		t.Fatalf("error holds the secret: %v", err)
	}
}

const (
	failed      = payd.ErrChallengeFailed
	unavailable = payd.ErrTemporarilyUnavailable
)

func TestTurnstile(t *testing.T) {
	tests := []struct {
		name     string
		form     payd.ChallengeForm
		hostname string
		replies  []reply
		want     string
		calls    int
	}{
		{"Success", payd.ChallengeSignup, testHost, []reply{ok("turnstile/success-signup.json")}, "", 1},
		{"WrongAction", payd.ChallengeSignin, testHost, []reply{ok("turnstile/success-signup.json")}, failed, 1},
		{"NoAction", payd.ChallengeSignup, "", []reply{ok("turnstile/success-no-action.json")}, failed, 1},
		{"WrongHostname", payd.ChallengeSignup, testHost, []reply{ok("turnstile/success-other-host.json")}, failed, 1},
		{"HostnameUnchecked", payd.ChallengeSignup, "", []reply{ok("turnstile/success-other-host.json")}, "", 1},
		{"InvalidInputResponse", payd.ChallengeSignup, "", []reply{ok("turnstile/invalid-input-response.json")}, failed, 1},
		{"TimeoutOrDuplicate", payd.ChallengeReset, "", []reply{ok("turnstile/timeout-or-duplicate.json")}, failed, 1},
		{"InvalidSecret", payd.ChallengeSignup, "", []reply{ok("turnstile/invalid-input-secret.json")}, unavailable, 1},
		{"MissingSecret", payd.ChallengeSignup, "", []reply{ok("turnstile/missing-input-secret.json")}, unavailable, 1},
		{"BadRequest", payd.ChallengeSignup, "", []reply{ok("turnstile/bad-request.json")}, unavailable, 1},
		{"InternalErrorTwice", payd.ChallengeSignup, "", []reply{ok("turnstile/internal-error.json")}, unavailable, 2},
		{"InternalErrorThenSuccess", payd.ChallengeSignup, "", []reply{ok("turnstile/internal-error.json"), ok("turnstile/success-signup.json")}, "", 2},
		{"502Twice", payd.ChallengeSignup, "", []reply{{status: 502, file: "garbage.html"}}, unavailable, 2},
		{"503ThenSuccess", payd.ChallengeSignup, "", []reply{{status: 503}, ok("turnstile/success-signup.json")}, "", 2},
		{"400", payd.ChallengeSignup, "", []reply{{status: 400, file: "turnstile/bad-request.json"}}, unavailable, 1},
		{"GarbageHTML", payd.ChallengeSignup, "", []reply{ok("garbage.html")}, unavailable, 1},
		{"EmptyBody", payd.ChallengeSignup, "", []reply{ok("")}, unavailable, 1},
		{"NoSuccessField", payd.ChallengeSignup, "", []reply{ok("no-success.json")}, unavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, turnstile, Options{Hostname: tt.hostname}, tt.replies...)
			err := b.v.Verify(context.Background(), tt.form, "0.tok-"+tt.name, "203.0.113.9")
			wantCode(t, err, tt.want)
			reqs := b.requests()
			if len(reqs) != tt.calls {
				t.Fatalf("%d siteverify calls, want %d", len(reqs), tt.calls)
			}
			key := reqs[0].Get("idempotency_key")
			if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(key) {
				t.Fatalf("idempotency_key = %q, want a v4 UUID", key)
			}
			for _, r := range reqs {
				want := url.Values{"secret": {testSecret}, "response": {"0.tok-" + tt.name},
					"remoteip": {"203.0.113.9"}, "idempotency_key": {key}}
				if r.Encode() != want.Encode() {
					t.Fatalf("request = %v, want %v (a retry reuses the idempotency_key)", r, want)
				}
			}
			if strings.Contains(b.logs.String(), testSecret) {
				t.Fatalf("the log holds the secret: %s", b.logs)
			}
		})
	}
}

func TestHCaptcha(t *testing.T) {
	tests := []struct {
		name     string
		hostname string
		replies  []reply
		want     string
		calls    int
	}{
		{"Success", testHost, []reply{ok("hcaptcha/success.json")}, "", 1},
		{"WrongHostname", testHost, []reply{ok("hcaptcha/success-other-host.json")}, failed, 1},
		{"InvalidInputResponse", "", []reply{ok("hcaptcha/invalid-input-response.json")}, failed, 1},
		{"AlreadySeen", "", []reply{ok("hcaptcha/already-seen-response.json")}, failed, 1},
		{"InvalidOrAlreadySeen", "", []reply{ok("hcaptcha/invalid-or-already-seen-response.json")}, failed, 1},
		{"Expired", "", []reply{ok("hcaptcha/expired-input-response.json")}, failed, 1},
		{"SitekeyMismatch", "", []reply{ok("hcaptcha/sitekey-secret-mismatch.json")}, unavailable, 1},
		{"InvalidSecret", "", []reply{ok("hcaptcha/invalid-input-secret.json")}, unavailable, 1},
		// No idempotency key: a second ask could find the token spent by
		// the first, so hCaptcha is asked once.
		{"502", "", []reply{{status: 502, file: "garbage.html"}, ok("hcaptcha/success.json")}, unavailable, 1},
		{"GarbageHTML", "", []reply{ok("garbage.html")}, unavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, hcaptcha, Options{Hostname: tt.hostname, SiteKey: "10000000-ffff-ffff-ffff-000000000001"}, tt.replies...)
			// hCaptcha answers carry no action: any form passes.
			err := b.v.Verify(context.Background(), payd.ChallengeSignin, "P1_tok-"+tt.name, "2001:db8::1")
			wantCode(t, err, tt.want)
			reqs := b.requests()
			if len(reqs) != tt.calls {
				t.Fatalf("%d siteverify calls, want %d", len(reqs), tt.calls)
			}
			want := url.Values{"secret": {testSecret}, "response": {"P1_tok-" + tt.name},
				"remoteip": {"2001:db8::1"}, "sitekey": {"10000000-ffff-ffff-ffff-000000000001"}}
			if reqs[0].Encode() != want.Encode() {
				t.Fatalf("request = %v, want %v", reqs[0], want)
			}
		})
	}
}

func TestSiteverifyTimeout(t *testing.T) {
	for _, p := range []provider{turnstile, hcaptcha} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, p, Options{Timeout: 200 * time.Millisecond}, reply{hang: true})
			wall := clock.Real{}
			start := wall.Now()
			err := b.v.Verify(context.Background(), payd.ChallengeSignup, "tok", "")
			wantCode(t, err, unavailable)
			if took := wall.Now().Sub(start); took > 2*time.Second {
				t.Fatalf("Verify took %v with a 200ms timeout", took)
			}
		})
	}
}

func TestSiteverifyUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	v := NewTurnstile(testSecret, Options{URL: u, Logger: slog.New(slog.DiscardHandler)})
	wantCode(t, v.Verify(context.Background(), payd.ChallengeSignup, "tok", ""), unavailable)
}

func TestSiteverifyNoCall(t *testing.T) {
	// A missing or oversized token is refused without asking the provider.
	for _, tok := range []string{"", strings.Repeat("x", 2049)} {
		b := setup(t, turnstile, Options{}, ok("turnstile/success-signup.json"))
		wantCode(t, b.v.Verify(context.Background(), payd.ChallengeSignup, tok, ""), failed)
		if n := len(b.requests()); n != 0 {
			t.Fatalf("token of %d bytes: %d calls, want 0", len(tok), n)
		}
	}
	// A remote IP that does not parse is left out rather than sent.
	b := setup(t, turnstile, Options{}, ok("turnstile/success-signup.json"))
	wantCode(t, b.v.Verify(context.Background(), payd.ChallengeSignup, "tok", "not-an-ip"), "")
	if r := b.requests()[0]; r.Has("remoteip") {
		t.Fatalf("remoteip sent: %v", r)
	}
}

func TestSiteverifyReplay(t *testing.T) {
	// A provider that says yes to everything (a test secret left in
	// production, an idempotent retry): payd still takes a token once.
	clk := clock.NewFake(t0)
	b := setup(t, turnstile, Options{Clock: clk}, ok("turnstile/success-signup.json"))
	ctx := context.Background()
	const dummy = "XXXX.DUMMY.TOKEN.XXXX"
	wantCode(t, b.v.Verify(ctx, payd.ChallengeSignup, dummy, ""), "")
	wantCode(t, b.v.Verify(ctx, payd.ChallengeSignup, dummy, ""), failed)
	if n := len(b.requests()); n != 1 {
		t.Fatalf("%d calls: a remembered token should not be asked about again", n)
	}
	clk.Advance(seenWindow)
	wantCode(t, b.v.Verify(ctx, payd.ChallengeSignup, dummy, ""), "")
	if n := b.v.seen.size(); n != 1 {
		t.Fatalf("remembering %d tokens, want 1 (the expired one forgotten)", n)
	}

	// Concurrent uses of one token: exactly one passes.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.v.Verify(ctx, payd.ChallengeSignup, "raced", "")
		}()
	}
	wg.Wait()
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
		} else {
			wantCode(t, err, failed)
		}
	}
	if passed != 1 {
		t.Fatalf("%d of %d concurrent uses passed, want 1", passed, len(errs))
	}
}

func TestSiteverifyNeverPrintsSecret(t *testing.T) {
	v := NewTurnstile(testSecret, Options{})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if s := fmt.Sprintf(verb, v); strings.Contains(s, testSecret) || s != "turnstile" {
			t.Fatalf("Sprintf(%s) = %s", verb, s)
		}
	}
}

func FuzzDecodeAnswer(f *testing.F) {
	for _, name := range []string{"turnstile/success-signup.json", "turnstile/timeout-or-duplicate.json",
		"hcaptcha/success.json", "hcaptcha/sitekey-secret-mismatch.json", "no-success.json", "garbage.html"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"success":"true"}`))
	f.Add([]byte(`{"success":true,"error-codes":null,"action":7}`))
	v := NewTurnstile(testSecret, Options{Hostname: testHost, Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := decodeAnswer(raw)
		if err != nil {
			return
		}
		// Every readable answer gets a verdict payd knows, and only an
		// answer that says success, for this form and host, passes.
		err = v.judge(payd.ChallengeSignin, a)
		switch code := payd.ErrorCode(err); {
		case err == nil:
			if !*a.Success || a.Action != "signin" || !strings.EqualFold(a.Hostname, testHost) {
				t.Fatalf("passed %s", raw)
			}
		case code != failed && code != unavailable:
			t.Fatalf("judge(%s) = %v", raw, err)
		}
	})
}
