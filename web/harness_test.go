package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/clock"
)

// The browser tests start the real payd binary (serve --dev on a fresh
// SQLite file), bootstrap a business with its command line and drive the
// pages with Chromium. These helpers do the server side.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// paydBinary builds ./cmd/payd once per test run.
func paydBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "payd-web-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "payd")
		// go test puts its own GOROOT/bin first on the PATH of the test.
		gobin, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command(gobin, "build", "-o", binPath, "payd/cmd/payd")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// paydServer is one running payd serve --dev.
type paydServer struct {
	t      *testing.T
	bin    string
	db     string
	origin string // http://127.0.0.1:PORT
	api    string // origin + /api/v1
	key    string // the business's secret key
	biz    map[string]any
	stop   func() // stops the running payd serve
}

// startPayd starts payd serve --dev and creates a business with a wallet.
func startPayd(t *testing.T) *paydServer {
	t.Helper()
	return startPaydWith(t)
}

// startPaydWith is startPayd with more arguments to payd serve (a later
// --addr wins over the harness's own).
func startPaydWith(t *testing.T, args ...string) *paydServer {
	t.Helper()
	s := &paydServer{t: t, bin: paydBinary(t), db: "sqlite:" + filepath.Join(t.TempDir(), "payd.db")}
	s.serve(append([]string{"--dev"}, args...)...)
	s.biz = s.newBusiness("Ada's Books")
	s.key = s.biz["secret_key"].(string)
	return s
}

// serve starts payd serve with args on the server's database (stopping the
// one it runs, if any), and waits for it to listen.
func (s *paydServer) serve(args ...string) {
	t := s.t
	t.Helper()
	if s.stop != nil {
		s.stop()
	}
	cmd := exec.Command(s.bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--database", s.db}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`api_base_url=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				mu.Lock()
				t.Logf("payd log:\n%s", logs.String())
				mu.Unlock()
			}
		})
	}
	t.Cleanup(s.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case s.api = <-found:
	case <-ctx.Done():
		t.Fatal("payd serve did not start in 30 s")
	}
	s.origin = strings.TrimSuffix(s.api, "/api/v1")
}

// newBusiness creates a business with a generated wallet.
func (s *paydServer) newBusiness(name string) map[string]any {
	out := s.cli("business", "create", "--name", name, "--email", "owner@example.com", "--wallet", "generate", "--json")
	var biz map[string]any
	if err := json.Unmarshal(out, &biz); err != nil {
		s.t.Fatalf("business create: %v: %s", err, out)
	}
	return biz
}

// cli runs a payd command on the server's database.
func (s *paydServer) cli(args ...string) []byte {
	s.t.Helper()
	args = append(args, "--database", s.db)
	var out, errb bytes.Buffer
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("payd %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// call sends a JSON request to the API and returns the status and body.
func (s *paydServer) call(method, path, key string, body any, header ...string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.api+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// must sends a request that must succeed and returns its data.
func (s *paydServer) must(method, path, key string, body any, header ...string) map[string]any {
	s.t.Helper()
	status, b := s.call(method, path, key, body, header...)
	if status >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, status, b)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return env.Data
}

// link creates a payment link of the business.
func (s *paydServer) link(extra map[string]any) map[string]any {
	body := map[string]any{"name": "The Go Programming Language", "description": "Paperback, signed by the authors",
		"amount": 2500, "currency": "USD"}
	for k, v := range extra {
		body[k] = v
	}
	return s.must("POST", "/links", s.key, body)
}

// payment creates a payment with the API.
func (s *paydServer) payment(extra map[string]any) map[string]any {
	body := map[string]any{"amount": 4200, "currency": "USD", "description": "Invoice 2026-117: consulting"}
	for k, v := range extra {
		body[k] = v
	}
	return s.must("POST", "/payments", s.key, body)
}

// checkout reads a checkout through the public API.
func (s *paydServer) checkout(id string) map[string]any {
	return s.must("GET", "/checkouts/"+id, "", nil)
}

// send pays amount of the checkout's coin to its deposit on the devnet.
func (s *paydServer) send(chk map[string]any, amount string) {
	q := chk["crypto"].(map[string]any)
	body := map[string]any{"network": q["network"], "asset": q["asset"], "to": q["address"], "amount": amount}
	if ref, ok := q["reference"].(string); ok && ref != "" {
		body["reference"] = ref
	}
	s.must("POST", "/devnet/transfers", "", body)
}

// mine mines count blocks on network.
func (s *paydServer) mine(network string, count int) {
	s.must("POST", "/devnet/blocks", "", map[string]any{"network": network, "count": count})
}

// advance moves the service clock.
func (s *paydServer) advance(seconds int) {
	s.must("POST", "/devnet/clock", "", map[string]any{"advance_seconds": seconds})
}

// waitCheckout reads a checkout until ok accepts it, for 20 s at most.
func (s *paydServer) waitCheckout(id string, ok func(map[string]any) bool) map[string]any {
	s.t.Helper()
	clk := clock.Real{}
	for end := clk.Now().Add(20 * time.Second); clk.Now().Before(end); <-clk.NewTimer(100 * time.Millisecond).C() {
		if c := s.checkout(id); ok(c) {
			return c
		}
	}
	s.t.Fatalf("checkout %s never reached the awaited state: %v", id, s.checkout(id))
	return nil
}

// waitPayment reads a payment until it has status, for 20 s at most.
func (s *paydServer) waitPayment(id, status string) {
	s.t.Helper()
	clk := clock.Real{}
	for end := clk.Now().Add(20 * time.Second); clk.Now().Before(end); <-clk.NewTimer(100 * time.Millisecond).C() {
		if p := s.must("GET", "/payments/"+id, s.key, nil); p["status"] == status {
			return
		}
	}
	s.t.Fatalf("payment %s never became %s", id, status)
}
