// Package btcdtest runs a btcd node on regtest for tests: a real bitcoin
// node on loopback with a temporary data directory, a funded key, and the
// moves tests need (mine, send, replace by fee, reorganise, stop and
// restart). Only tests import it.
//
// The btcd binary is $PAYD_BTCD when set; otherwise it is built once with
// go install github.com/btcsuite/btcd@v0.26.2 into
// ${PAYD_TOOLS:-${TMPDIR:-/tmp}/payd-go-tools} and reused from there (CI
// builds it in .ci/run). A test is skipped, saying why, only when btcd
// cannot be built, e.g. without network.
package btcdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/chain/bitcoin"
	"payd/clock"
)

// Version is the btcd release the harness runs.
const Version = "v0.26.2"

// RPC credentials of every harness node: it listens on loopback only.
const (
	user = "u"
	pass = "p"
)

// Node is one btcd regtest node with a funded wallet key. Its methods
// fail the test on any error; they are safe for concurrent use.
type Node struct {
	t      testing.TB
	bin    string
	dir    string
	port   int
	rpc    *bitcoin.Client
	wallet *wallet

	mu   sync.Mutex
	proc *exec.Cmd
	done chan struct{} // closed when proc exits
	log  *os.File
	// saved is the chain Stop copied, for Restart.
	saved []string
}

// Start starts a btcd regtest node for t, waits until it answers RPC and
// mines 125 blocks to the harness key (26 spendable coinbases of 50 BTC;
// each further block matures one more, and confirmed change is spent too).
// The node stops when t ends.
func Start(t testing.TB) *Node {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	n := &Node{t: t, bin: bin, dir: dir, port: freePort(t), wallet: newWallet(t)}
	rpc, err := bitcoin.NewClient(n.URL(), &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.rpc = rpc
	if err := os.WriteFile(filepath.Join(dir, "btcd.conf"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n.start()
	t.Cleanup(func() {
		if t.Failed() {
			n.logTail()
		}
		n.mu.Lock()
		n.stop()
		n.mu.Unlock()
	})
	n.Mine(125)
	return n
}

// URL is the node's RPC URL with its credentials,
// http://u:p@127.0.0.1:PORT.
func (n *Node) URL() string { return fmt.Sprintf("http://%s:%s@127.0.0.1:%d", user, pass, n.port) }

// Client is an RPC client of the node, for calls the harness does not
// wrap.
func (n *Node) Client() *bitcoin.Client { return n.rpc }

// Call runs one RPC call and fails the test if it fails.
func (n *Node) Call(method string, result any, params ...any) {
	n.t.Helper()
	if err := n.rpc.Call(context.Background(), method, result, params...); err != nil {
		n.t.Fatalf("btcd %s: %v", method, err)
	}
}

// Address is the regtest address of the harness key, which mining pays.
func (n *Node) Address() string { return n.wallet.addr }

// Mine mines count blocks paying the harness key and returns their hashes.
func (n *Node) Mine(count int) []string {
	n.t.Helper()
	var hashes []string
	n.Call("generate", &hashes, count)
	for _, h := range hashes {
		n.wallet.addCoinbase(n, h)
	}
	return hashes
}

// Tip returns the height and hash of the node's best block.
func (n *Node) Tip() (int64, string) {
	n.t.Helper()
	var info struct {
		Blocks int64  `json:"blocks"`
		Best   string `json:"bestblockhash"`
	}
	n.Call("getblockchaininfo", &info)
	return info.Blocks, info.Best
}

// Mempool returns the txids in the node's mempool.
func (n *Node) Mempool() []string {
	n.t.Helper()
	var ids []string
	n.Call("getrawmempool", &ids)
	return ids
}

// Invalidate marks the block hash invalid (invalidateblock): the node
// reorganises to the best chain without it and puts its transactions back
// in the mempool.
func (n *Node) Invalidate(hash string) {
	n.t.Helper()
	n.Call("invalidateblock", nil, hash)
}

// Reconsider undoes Invalidate (reconsiderblock).
func (n *Node) Reconsider(hash string) {
	n.t.Helper()
	n.Call("reconsiderblock", nil, hash)
}

// Stop stops the node (as on SIGINT, so it flushes its database) and
// waits for it to exit; it is killed if it takes more than 20 seconds.
// Stopping a stopped node does nothing.
//
// btcd deletes its regtest database whenever it starts (removeRegressionDB
// in btcd.go; no flag keeps it), so Stop first copies the best chain's
// blocks and Restart submits them again: the node comes back with the
// same chain, and, as any restarted btcd, an empty mempool.
func (n *Node) Stop() {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return
	}
	n.saved = n.chain()
	n.stop()
}

// stop ends the process.
func (n *Node) stop() {
	if n.proc == nil {
		return
	}
	_ = n.proc.Process.Signal(os.Interrupt)
	if !waitDone(n.done, 20*time.Second) {
		_ = n.proc.Process.Kill()
		<-n.done
	}
	n.proc = nil
	_ = n.log.Close()
}

// Restart starts a stopped node again on the same port and data
// directory, gives it back its chain (see Stop) and waits until it
// answers.
func (n *Node) Restart() {
	n.t.Helper()
	n.Stop()
	n.start()
	n.mu.Lock()
	saved := n.saved
	n.saved = nil
	n.mu.Unlock()
	for i, raw := range saved {
		var reason *string
		n.Call("submitblock", &reason, raw)
		if reason != nil {
			n.t.Fatalf("btcd refused block %d of its own chain after a restart: %s", i+1, *reason)
		}
	}
}

// chain returns the raw blocks of the node's best chain above genesis.
func (n *Node) chain() []string {
	n.t.Helper()
	height, _ := n.Tip()
	calls := make([]bitcoin.Call, height)
	hashes := make([]string, height)
	for i := range calls {
		calls[i] = bitcoin.Call{Method: "getblockhash", Params: []any{i + 1}, Result: &hashes[i]}
	}
	n.batch(calls)
	raws := make([]string, height)
	for i := range calls {
		calls[i] = bitcoin.Call{Method: "getblock", Params: []any{hashes[i], 0}, Result: &raws[i]}
	}
	n.batch(calls)
	return raws
}

// batch runs calls in one request and fails the test if any fails.
func (n *Node) batch(calls []bitcoin.Call) {
	n.t.Helper()
	if err := n.rpc.Batch(context.Background(), calls); err != nil {
		n.t.Fatal(err)
	}
	for _, c := range calls {
		if c.Err != nil {
			n.t.Fatalf("btcd %s: %v", c.Method, c.Err)
		}
	}
}

// start runs btcd and waits until its RPC server answers.
func (n *Node) start() {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	log, err := os.OpenFile(filepath.Join(n.dir, "btcd.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command(n.bin,
		"--regtest", "-u", user, "-P", pass, "--notls",
		"--rpclisten=127.0.0.1:"+strconv.Itoa(n.port), "--nolisten", "--nodnsseed",
		"--txindex", "--addrindex", "--miningaddr="+n.wallet.addr,
		"--configfile="+filepath.Join(n.dir, "btcd.conf"),
		"--datadir="+filepath.Join(n.dir, "data"), "--logdir="+filepath.Join(n.dir, "logs"),
		"--debuglevel=info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("starting btcd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	n.proc, n.done, n.log = cmd, done, log
	if err := n.waitRPC(done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		n.proc = nil
		n.logTail()
		n.t.Fatal(err)
	}
}

// waitRPC polls the node until it answers, it exits or 30 seconds pass.
func (n *Node) waitRPC(exited <-chan struct{}) error {
	c := clock.Real{}
	deadline := c.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := n.rpc.Call(ctx, "getblockchaininfo", nil)
		cancel()
		switch {
		case err == nil:
			return nil
		case c.Now().After(deadline):
			return fmt.Errorf("btcd did not answer RPC within 30 s: %v", err)
		}
		select {
		case <-exited:
			return errors.New("btcd exited before answering RPC")
		default:
		}
		clock.Sleep(c, 50*time.Millisecond, exited)
	}
}

// logTail logs the end of btcd's output, for a failed test.
func (n *Node) logTail() {
	b, err := os.ReadFile(filepath.Join(n.dir, "btcd.out"))
	if err != nil {
		return
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	n.t.Logf("btcd output (end):\n%s", b)
}

// waitDone waits for done up to d.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := clock.Real{}.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C():
		return false
	}
}

// freePort returns a loopback TCP port free at the moment.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// Binary returns the path of a btcd binary of Version: $PAYD_BTCD, or the
// one in the tools directory, built there first if it is missing or of
// another version. It skips t when btcd cannot be built.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PAYD_BTCD"); p != "" {
		return p
	}
	buildOnce.Do(func() { buildBin, buildErr = build() })
	if buildErr != nil {
		t.Skipf("btcd %s is not available and cannot be built (set PAYD_BTCD to a btcd binary): %v", Version, buildErr)
	}
	return buildBin
}

// build installs btcd into the tools directory unless the right version
// is there already.
func build() (string, error) {
	dir := os.Getenv("PAYD_TOOLS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "payd-go-tools")
	}
	bin := filepath.Join(dir, "btcd")
	if out, err := exec.Command(bin, "--version").Output(); err == nil &&
		bytes.Contains(out, []byte(strings.TrimPrefix(Version, "v")+"-")) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "install", "github.com/btcsuite/btcd@"+Version)
	cmd.Dir = dir // outside any module
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/btcsuite/btcd@%s: %v\n%s", Version, err, out)
	}
	return bin, nil
}
