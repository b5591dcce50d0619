package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"payd/clock"
	"payd/store/storetest"
)

// server is a payd serve started through run() on a free loopback port.
type server struct {
	base   string // API base URL
	cancel context.CancelFunc
	done   chan error
	dsn    string
}

// dsns runs fn on SQLite always and on PostgreSQL when PAYD_TEST_POSTGRES
// is set, each on a fresh database.
func dsns(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, storetest.SQLiteDSN(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, storetest.PostgresDSN(t)) })
}

// start runs `payd serve --dev` and waits for /healthz.
func start(t *testing.T, dsn string) *server {
	t.Helper()
	return startServe(t, dsn, "--dev")
}

// startServe runs `payd serve` with args on a free loopback port and
// waits for /healthz.
func startServe(t *testing.T, dsn string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{cancel: cancel, done: make(chan error, 1), dsn: dsn}
	getenv := func(k string) string {
		if k == "PAYD_DATABASE" {
			return dsn
		}
		return ""
	}
	go func() {
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), getenv, io.Discard, pw)
		pw.CloseWithError(io.EOF)
		s.done <- err
	}()
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`api_base_url=(\S+)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case s.base = <-found:
	case err := <-s.done:
		t.Fatalf("serve stopped: %v", err)
	case <-clockAfter(30 * time.Second):
		t.Fatal("serve did not start in 30 s")
	}
	t.Cleanup(func() { s.stop(t) })
	res, err := http.Get(strings.TrimSuffix(s.base, "/api/v1") + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	res.Body.Close()
	return s
}

// stop sends the shutdown signal and waits for a clean exit.
func (s *server) stop(t *testing.T) {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve returned %v", err)
		}
	case <-clockAfter(30 * time.Second):
		t.Error("serve did not stop in 30 s")
	}
}

func clockAfter(d time.Duration) <-chan time.Time { return clock.Real{}.NewTimer(d).C() }

// cli runs a payd command against dsn and returns its stdout.
func cli(t *testing.T, dsn string, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	args = append(args, "--database", dsn)
	if err := run(context.Background(), args, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("payd %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// TestServeEndToEnd follows the README on both databases: serve, public
// rates, business create --json, a keyed request, restricted keys, pause
// and resume, graceful stop.
func TestServeEndToEnd(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		{
			s := start(t, dsn)
			if code, _ := get(t, s.base+"/exchange-rates", ""); code != 200 {
				t.Fatalf("exchange rates: %d", code)
			}
			out := cli(t, dsn, "business", "create", "--name", "Ada's Books", "--email", "ada@example.com", "--json")
			var raw map[string]string
			var shape map[string]any
			if err := json.Unmarshal(out, &shape); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if shape["recovery_phrase"] != nil || shape["wallet_id"] != nil || len(shape) != 6 {
				t.Fatalf("without --wallet there is no phrase or wallet: %s", out)
			}
			delete(shape, "recovery_phrase")
			delete(shape, "wallet_id")
			b, _ := json.Marshal(shape)
			_ = json.Unmarshal(b, &raw)
			if !strings.HasPrefix(raw["secret_key"], "sk_live_") || !strings.HasPrefix(raw["test_secret_key"], "sk_test_") ||
				!strings.HasPrefix(raw["publishable_key"], "pk_live_") || !strings.HasPrefix(raw["business_id"], "biz_") {
				t.Fatalf("keys: %s", out)
			}
			if code, _ := get(t, s.base+"/exchange-rates", raw["secret_key"]); code != 200 {
				t.Fatalf("keyed request: %d", code)
			}
			if code, _ := get(t, s.base+"/exchange-rates", raw["publishable_key"]); code != 401 {
				t.Fatalf("publishable key: %d", code)
			}
			var rk map[string]string
			out = cli(t, dsn, "keys", "create", "--business", raw["business_id"], "--permissions", "payments:read,customers:read", "--json")
			if err := json.Unmarshal(out, &rk); err != nil || !strings.HasPrefix(rk["key"], "rk_live_") || !strings.HasPrefix(rk["id"], "key_") {
				t.Fatalf("keys create: %s", out)
			}
			if code, _ := get(t, s.base+"/exchange-rates", rk["key"]); code != 200 {
				t.Fatalf("restricted key: %d", code)
			}
			cli(t, dsn, "keys", "revoke", "--business", raw["business_id"], "--id", rk["id"])
			cli(t, dsn, "pause", "checkouts", "--reason", "test")
			if list := cli(t, dsn, "pause", "--list"); !bytes.Contains(list, []byte("checkouts")) {
				t.Fatalf("pause list: %s", list)
			}
			cli(t, dsn, "resume", "checkouts")
			s.stop(t)
		}
	})
}

// TestCommandLineErrors checks that mistakes are refused clearly.
func TestCommandLineErrors(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "payd.db")
	cases := [][]string{
		{},
		{"frobnicate"},
		{"business", "create", "--name", "A", "--email", "a@example.com", "--wallet", "import", "--database", dsn},
		{"keys", "create", "--business", "biz_x", "--permissions", "payments:admin", "--database", dsn},
		{"pause", "everything", "--database", dsn},
		{"serve", "--log-level", "loud"},
	}
	for _, args := range cases {
		var errb bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, &errb)
		if _, ok := err.(usageError); !ok {
			t.Errorf("payd %v: want a usage error, got %v", args, err)
		}
	}
	cli(t, dsn, "migrate")
	var errb bytes.Buffer
	err := run(context.Background(), []string{"business", "create", "--name", "A", "--email", "not-an-email", "--database", dsn}, func(string) string { return "" }, io.Discard, &errb)
	if err == nil || !strings.Contains(err.Error(), "email") {
		t.Errorf("bad email: %v", err)
	}
}

// TestConfigFromEnvironment checks flags, then PAYD_* variables, then defaults.
func TestConfigFromEnvironment(t *testing.T) {
	var cfg Config
	fs := cfg.newFlagSet("serve", io.Discard)
	cfg.addServeFlags(fs)
	env := map[string]string{"PAYD_ADDR": "127.0.0.1:9999", "PAYD_DEV": "true", "PAYD_DATABASE": "sqlite:env.db", "PAYD_RATE_MAX_AGE": "5m"}
	if err := parse(fs, []string{"--database", "sqlite:flag.db"}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9999" || !cfg.Dev || cfg.Database != "sqlite:flag.db" || cfg.RateMaxAge != 5*time.Minute || cfg.LogLevel != "info" {
		t.Fatalf("%+v", cfg)
	}
	if err := parse(cfg.newFlagSet("x", io.Discard), nil, func(k string) string {
		if k == "PAYD_LOG_LEVEL" {
			return ""
		}
		return map[string]string{"PAYD_DATABASE": "x"}[k]
	}); err != nil {
		t.Fatal(err)
	}
	bad := cfg.newFlagSet("serve", io.Discard)
	cfg.addServeFlags(bad)
	if err := parse(bad, nil, func(k string) string { return map[string]string{"PAYD_DEV": "maybe"}[k] }); err == nil {
		t.Fatal("PAYD_DEV=maybe accepted")
	}
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestShutdownDrains checks that stopping (SIGTERM cancels run's context)
// lets an in-flight request finish before serve returns.
func TestShutdownDrains(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "finished")
	})
	cfg := &Config{Addr: "127.0.0.1:0", Database: "sqlite:unused", ShutdownTimeout: 10 * time.Second}
	pr, pw := io.Pipe()
	log, _ := (&Config{LogLevel: "info", LogFormat: "text"}).logger(pw)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	go func() { done <- serveOn(ctx, cfg, ln, h, url+"/api/v1", url+"/wallet/v1", log); pw.Close() }()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	got := make(chan string, 1)
	go func() {
		res, err := http.Get(url + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel() // what SIGTERM does through signal.NotifyContext
	select {
	case err := <-done:
		t.Fatalf("serve returned %v with a request in flight", err)
	case <-clockAfter(200 * time.Millisecond):
	}
	if _, err := http.Get(url + "/slow"); err == nil {
		t.Fatal("a new connection was accepted while draining")
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Fatalf("the in-flight request got %q", body)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v after draining", err)
	}
}

// TestServeWithoutDevWarns checks that payd serve without --dev, where no
// network has an adapter yet, says at start that nothing can be paid on
// (issue 15 item 13).
func TestServeWithoutDevWarns(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", dsn}, func(string) string { return "" }, io.Discard, pw)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	var warned bool
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "no network can be paid on") {
			warned = true
		}
		if strings.Contains(line, "payd started") {
			break
		}
	}
	if !warned {
		t.Fatal("payd serve without --dev started without warning that no network can be paid on")
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}
