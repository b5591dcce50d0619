// Package stripetest is a stand-in for Stripe's crypto onramp API that
// replays the documented answers of card/stripe/testdata (its README names
// the doc page of each), for the tests of card/stripe and of the API: it
// mints sessions as Stripe does (echoing the parameters sent), moves them
// through their statuses when the test says, answers errors when the test
// queues them, and builds signed webhooks.
package stripetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SecretKey and WebhookSecret are the test account's secrets.
const (
	SecretKey     = "sk_test_payd_stripetest"
	WebhookSecret = "whsec_payd_stripetest"
)

// Server is the replaying stand-in.
type Server struct {
	*httptest.Server
	t    testing.TB
	dir  string
	done chan struct{}

	mu       sync.Mutex
	n        int
	sessions map[string]map[string]any
	byKey    map[string]string
	queue    []answer
	// Creates are the forms of every session creation, in order.
	Creates []url.Values
	// Keys are their Idempotency-Key headers.
	Keys []string
}

// answer is a queued reply to the next request.
type answer struct {
	status  int
	fixture string
	hang    bool
}

// New starts the server on fixtures in dir (card/stripe/testdata).
func New(t testing.TB, dir string) *Server {
	s := &Server{t: t, dir: dir, done: make(chan struct{}), sessions: map[string]map[string]any{}, byKey: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.done) }) // runs first: a hanging answer ends with the test
	return s
}

// Fixture reads one fixture as a JSON object.
func (s *Server) Fixture(name string) map[string]any {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		s.t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return v
}

// Next makes the next request answer status with the body of fixture.
func (s *Server) Next(status int, fixture string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, answer{status: status, fixture: fixture})
}

// HangNext makes the next request wait until its client gives up.
func (s *Server) HangNext() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, answer{hang: true})
}

// Set moves session id to the status (and transaction_id and fees) of the
// session fixture, as Stripe moves it when the customer goes on; a session
// the server did not mint is made from the fixture, with id.
func (s *Server) Set(id, fixture string) {
	f := s.Fixture(fixture)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.sessions[id]
	if !ok {
		f["id"], f["client_secret"] = id, id+"_secret_stripetest"
		s.sessions[id] = f
		return
	}
	cur["status"] = f["status"]
	d, fd := cur["transaction_details"].(map[string]any), f["transaction_details"].(map[string]any)
	for _, k := range []string{"transaction_id", "fees", "source_amount"} {
		d[k] = fd[k]
	}
}

// Session is session id as the server holds it (nil when unknown).
func (s *Server) Session(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// Event is the body of a crypto.onramp_session_updated webhook about
// session id as it now stands.
func (s *Server) Event(id string) []byte {
	s.t.Helper()
	ev := s.Fixture("event_session_updated.json")
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[id]
	if sess == nil {
		s.t.Fatalf("stripetest: no session %s", id)
	}
	ev["id"] = "evt_" + strings.TrimPrefix(id, "cos_") + "_" + fmt.Sprint(sess["status"])
	ev["data"] = map[string]any{"object": sess}
	raw, err := json.Marshal(ev)
	if err != nil {
		s.t.Fatal(err)
	}
	return raw
}

// Sign is the Stripe-Signature header Stripe sends for body at the time
// at, signed with secret.
func Sign(secret string, at time.Time, body []byte) string {
	t := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(t + "."))
	mac.Write(body)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// serve answers one request as Stripe would.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.pop(); ok {
		if a.hang {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		}
		s.write(w, a.status, s.Fixture(a.fixture))
		return
	}
	if user, _, ok := r.BasicAuth(); !ok || user != SecretKey {
		s.write(w, http.StatusUnauthorized, s.Fixture("error_invalid_api_key.json"))
		return
	}
	const path = "/v1/crypto/onramp_sessions"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == path:
		s.create(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, path+"/"):
		missing := s.Fixture("error_resource_missing.json")
		s.mu.Lock()
		defer s.mu.Unlock()
		if sess := s.sessions[strings.TrimPrefix(r.URL.Path, path+"/")]; sess != nil {
			s.write(w, http.StatusOK, sess)
			return
		}
		s.write(w, http.StatusNotFound, missing)
	default:
		s.write(w, http.StatusNotFound, s.Fixture("error_resource_missing.json"))
	}
}

// pop takes the next queued answer.
func (s *Server) pop() (answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return answer{}, false
	}
	a := s.queue[0]
	s.queue = s.queue[1:]
	return a, true
}

// create mints a session from session_created.json with the parameters
// sent, as the guide shows Stripe echoing them; a repeated Idempotency-Key
// answers the session it minted first.
func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.write(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error"}})
		return
	}
	f := s.Fixture("session_created.json")
	s.mu.Lock()
	defer s.mu.Unlock()
	key := r.Header.Get("Idempotency-Key")
	s.Creates, s.Keys = append(s.Creates, r.PostForm), append(s.Keys, key)
	if id, ok := s.byKey[key]; ok && key != "" {
		s.write(w, http.StatusOK, s.sessions[id])
		return
	}
	s.n++
	id := fmt.Sprintf("cos_stripetest%04d", s.n)
	f["id"], f["client_secret"] = id, id+"_secret_stripetest"
	f["redirect_url"] = "https://crypto.link.com?session_hash=stripetest" + strconv.Itoa(s.n)
	echo(f["transaction_details"].(map[string]any), r.PostForm)
	s.sessions[id], s.byKey[key] = f, id
	s.write(w, http.StatusOK, f)
}

// echo fills a session's transaction_details with the form's parameters.
func echo(d map[string]any, form url.Values) {
	for _, k := range []string{"destination_currency", "destination_network", "destination_amount", "source_currency"} {
		if v := form.Get(k); v != "" {
			d[k] = v
		} else {
			d[k] = nil
		}
	}
	d["lock_wallet_address"] = form.Get("lock_wallet_address") == "true"
	d["destination_currencies"] = form["destination_currencies[]"]
	d["destination_networks"] = form["destination_networks[]"]
	addrs := map[string]any{"bitcoin": nil, "ethereum": nil, "polygon": nil, "solana": nil, "stellar": nil, "destination_tags": nil}
	for k, v := range form {
		if n, ok := strings.CutPrefix(k, "wallet_addresses["); ok && len(v) > 0 {
			addrs[strings.TrimSuffix(n, "]")] = v[0]
		}
	}
	d["wallet_addresses"] = addrs
}

// write answers status with v as JSON, with a Request-Id as Stripe sends.
func (s *Server) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_stripetest")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
