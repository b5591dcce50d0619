package tron

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"payd"
)

// TestAnswersRefused: a 5xx, a malformed answer, a servlet's error object
// and an answer of the wrong shape are upstream_unavailable, naming the
// endpoint and never the URL's secrets; credentials go where the URL puts
// them (the user alone is TronGrid's key, a user and password are Basic
// authorization), and the URL's path and query are kept.
func TestAnswersRefused(t *testing.T) {
	var status int
	var body, gotKey, gotUser, gotPass, gotURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get(APIKeyHeader)
		gotUser, gotPass, _ = r.BasicAuth()
		gotURL = r.URL.String()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{500, `{}`, "HTTP 500"},
		{502, `<html>bad gateway</html>`, "HTTP 502"},
		{200, `{"blockID": `, "malformed answer"},
		{200, `{"blockID": "zz"}`, "malformed answer"},
		{200, `{"Error": "class java.lang.NullPointerException : null"}`, "refused: class java.lang.NullPointerException"},
		{200, `{}`, "no latest block"},
		{200, `[]`, "malformed answer"},
	} {
		status, body = c.status, c.body
		api, err := newClient("http://sekrit-key@"+host+"/sekrit-path/?key=sekrit-query", nil)
		if err != nil {
			t.Fatal(err)
		}
		n := &Node{api: api}
		_, err = n.Tip(context.Background())
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), srv.URL) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%d %s: %v, want upstream_unavailable with %q and no secret", c.status, c.body, err, c.want)
		}
		if gotKey != "sekrit-key" || gotUser != "" || gotURL != "/sekrit-path/wallet/getblock?key=sekrit-query" {
			t.Errorf("the request went with key %q, user %q, to %s", gotKey, gotUser, gotURL)
		}
	}
	api, err := newClient("http://user:sekrit-pass@"+host, nil)
	if err != nil {
		t.Fatal(err)
	}
	status, body = 200, `{}`
	_, _ = (&Node{api: api}).Tip(context.Background())
	if gotKey != "" || gotUser != "user" || gotPass != "sekrit-pass" {
		t.Errorf("a user and password went as key %q, Basic %q:%q", gotKey, gotUser, gotPass)
	}
}

// TestRedirectRefused: a node that redirects is refused, as
// upstream_unavailable naming where it pointed, and the API key never
// reaches the host the redirect names (net/http would carry the
// TRON-PRO-API-KEY header along).
func TestRedirectRefused(t *testing.T) {
	var leaked atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(APIKeyHeader) != "" || r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer elsewhere.Close()
	// localhost is another host than 127.0.0.1 to net/http, as a
	// redirect to an attacker's host would be.
	target := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect,
		http.StatusPermanentRedirect} {
		node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+r.URL.Path, status)
		}))
		for _, url := range []string{"http://sekrit-key@", "http://user:sekrit-pass@"} {
			n := &Node{api: must(newClient(url+strings.TrimPrefix(node.URL, "http://"), &http.Client{}))}
			_, err := n.Tip(context.Background())
			if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "redirect to http://localhost:") ||
				strings.Contains(err.Error(), "sekrit") {
				t.Errorf("a %d redirect: %v", status, err)
			}
		}
		node.Close()
	}
	if leaked.Load() {
		t.Fatal("the credentials followed a redirect")
	}
}

// must is v, or a panic.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
