package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payd/clock"
)

// The process and the client of the crash test (crash_test.go).

// child is payd serve run as a process of its own, which the test can
// kill with SIGKILL and start again on the same port and database. Its
// output of every run goes to one log file.
type child struct {
	bin, dsn, addr string
	// args are serve's arguments after --addr and --database.
	args    []string
	log     *os.File
	cmd     *exec.Cmd
	exited  chan struct{}
	started time.Time
	runs    int
}

// newChild makes the server of a crash test on dsn, on a free port, with
// serve's arguments args; it is killed when t ends (before the test's
// schema is dropped), and quit is closed then.
func newChild(t *testing.T, bin, dsn string, args ...string) (c *child, quit chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	c, quit = &child{bin: bin, dsn: dsn, addr: addr, args: args, log: logf}, make(chan struct{})
	t.Cleanup(func() { close(quit); c.kill(); logf.Close() })
	return c, quit
}

// start starts the server and waits until /healthz answers 200.
func (c *child) start() error {
	c.runs++
	fmt.Fprintf(c.log, "=== run %d ===\n", c.runs)
	cmd := exec.Command(c.bin, append([]string{"serve", "--addr", c.addr, "--database", c.dsn}, c.args...)...)
	cmd.Stdout, cmd.Stderr = c.log, c.log
	c.started = clock.Real{}.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	deadline := clockAfter(30 * time.Second)
	for {
		if res, err := crashHTTP.Get("http://" + c.addr + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("payd serve exited while starting")
		case <-deadline:
			return errors.New("payd serve did not answer /healthz in 30 s")
		case <-clockAfter(20 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to end. It reports whether
// the process was still running.
func (c *child) kill() bool {
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
	}
	_ = c.cmd.Process.Kill()
	<-c.exited
	return true
}

// tail returns the end of the server's log, without the request lines.
func (c *child) tail() string {
	b, _ := os.ReadFile(c.log.Name())
	var keep []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "level=INFO msg=request ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep[max(0, len(keep)-40):], "\n")
}

// errorLines returns the lines of the server's log that tell of an
// error: logged at level ERROR, a panic, or a race a -race build found.
func (c *child) errorLines() []string {
	b, _ := os.ReadFile(c.log.Name())
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.HasPrefix(line, "panic: ") ||
			strings.Contains(line, "WARNING: DATA RACE") {
			out = append(out, line)
		}
	}
	return out
}

// crashClient calls the API with the business's secret key. A call that
// may be repeated is retried on connection errors, as a real client does
// while the server restarts.
type crashClient struct {
	base, key string
}

// crashHTTP bounds a call: a server killed mid-answer never finishes it.
var crashHTTP = &http.Client{Timeout: 20 * time.Second}

// want calls method path and returns the answer's data, or an error when
// the status is not status. With retry, connection errors are retried for
// up to crashDeadline.
func (c *crashClient) want(status int, method, path string, body any, header map[string]string, retry bool) (map[string]any, error) {
	deadline := clockAfter(crashDeadline)
	for {
		code, data, err := c.call(method, path, body, header)
		if err == nil {
			if code != status {
				return nil, fmt.Errorf("%s %s: %d %s", method, path, code, data)
			}
			var v struct{ Data map[string]any }
			if err := json.Unmarshal(data, &v); err != nil || v.Data == nil {
				return nil, fmt.Errorf("%s %s: %v: %s", method, path, err, data)
			}
			return v.Data, nil
		}
		if !retry {
			return nil, err
		}
		select {
		case <-deadline:
			return nil, fmt.Errorf("%s %s: server away for %v: %w", method, path, crashDeadline, err)
		case <-clockAfter(50 * time.Millisecond):
		}
	}
}

// call makes one request and reads the whole answer.
func (c *crashClient) call(method, path string, body any, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := crashHTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}
