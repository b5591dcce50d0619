package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"payd/chain/bitcoin/btcdtest"
	"payd/clock"
	"payd/money"
	"payd/store/storetest"
)

// The crash test of issue 16: 50 payments confirm on a real bitcoin node
// (btcd in regtest) while payd serve, without --dev, is killed with
// SIGKILL at random moments and while the node itself is stopped and
// restarted; each payment must end right with every event exactly once.
// It reuses the devnet crash test's process, client and checks
// (crash_test.go, crash_server_test.go).

// crashBTCPayments is how many payments the bitcoin crash test makes.
const crashBTCPayments = 50

// TestCrashBitcoin runs the real binary on each database against btcd:
// pays 50 checkouts (exact, under and over), then mines block by block
// while killing the server, once a few milliseconds after the block that
// holds all 50 transfers (while the follower and the watcher apply it),
// once at random, once while btcd is stopped, and once right after the
// block that completes the payments; finally it checks every payment,
// checkout and the wallet as the devnet crash test does.
//
// Each restart waits out the lease the killed process held (15 s), so
// the test takes over a minute per database: it runs when PAYD_E2E=1.
func TestCrashBitcoin(t *testing.T) {
	if os.Getenv("PAYD_E2E") != "1" {
		t.Skip("PAYD_E2E=1 runs the bitcoin crash test (about 70 s per database)")
	}
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			at := clock.Real{}.Now()
			r := newBTCCrashRun(t, bin, devDSN(t, dialect))
			r.pay()
			paid := clock.Real{}.Now()
			r.killWhileConfirming()
			r.waitSettled()
			r.check()
			t.Logf("%d kills, %d of them during a watcher's run; paying %v, the rest %v", r.kills, r.midRun,
				paid.Sub(at).Round(100*time.Millisecond), clock.Real{}.Now().Sub(paid).Round(100*time.Millisecond))
		})
	}
}

// btcCrashRun is the devnet crash run's state with the btcd node.
type btcCrashRun struct {
	*crashRun
	node *btcdtest.Node
}

// newBTCCrashRun starts btcd with enough mature coins for every payment,
// starts the server on the node, makes a business with a wallet and plans
// the payments.
func newBTCCrashRun(t *testing.T, bin, dsn string) *btcCrashRun {
	node := btcdtest.Start(t)
	node.Mine(crashBTCPayments) // a mature coinbase for each payment
	r := &btcCrashRun{node: node, crashRun: startCrashRun(t, bin, dsn, "--chain", "bitcoin="+node.URL(),
		"--rates", "static", "--follow-interval", "100ms", "--drop-after", "2s",
		"--confirmations", fmt.Sprintf("bitcoin=%d", crashRequired["bitcoin"]), "--trusted-proxies", "127.0.0.1/32")}
	for i := range crashBTCPayments {
		kind := [...]string{"under", "over", "exact", "exact", "exact"}[i%5]
		r.pays = append(r.pays, &crashPayment{asset: "BTC", network: "bitcoin", kind: kind,
			price: 500 + r.rnd.Int64N(50_000)})
	}
	return r
}

// start starts payd serve again after a kill.
func (r *btcCrashRun) start() {
	r.t.Helper()
	if err := r.srv.start(); err != nil {
		r.t.Fatalf("restart %d: %v\n%s", r.srv.runs, err, r.srv.tail())
	}
}

// pay creates each payment, opens its checkout and sends its bitcoin from
// the harness key, one transaction each, then waits until every transfer
// is detected in btcd's mempool.
func (r *btcCrashRun) pay() {
	r.t.Helper()
	for i, p := range r.pays {
		pay, err := r.c.want(201, "POST", "/payments", map[string]any{"amount": p.price, "currency": "USD"},
			map[string]string{"Idempotency-Key": fmt.Sprint("pay-", i)}, false)
		if err != nil {
			r.t.Fatal(err)
		}
		p.id = pay["id"].(string)
		chk, err := r.c.want(201, "POST", "/checkouts", map[string]any{"payment_id": p.id, "rail": "crypto",
			"asset": p.asset, "network": p.network}, map[string]string{"Idempotency-Key": fmt.Sprint("chk-", i),
			"X-Forwarded-For": fmt.Sprintf("10.7.0.%d", i)}, false)
		if err != nil {
			r.t.Fatal(err)
		}
		q := chk["crypto"].(map[string]any)
		p.checkout, p.quoted = chk["id"].(string), q["amount"].(string)
		p.sent = map[string]string{"exact": p.quoted, "under": scaled(p.quoted, 7, 10), "over": scaled(p.quoted, 6, 5)}[p.kind]
		amount, err := money.ParseCoinAmount(money.BTC, p.sent)
		if err != nil {
			r.t.Fatal(err)
		}
		p.tx = r.node.Send(q["address"].(string), amount.Units.Int64())
	}
	r.waitFor("every transfer detected", func(s map[string]checkoutView) bool {
		for _, v := range s {
			if v.status != "processing" {
				return false
			}
		}
		return true
	})
}

// killWhileConfirming mines the three confirmations and two blocks more,
// one at a time, killing the server around them; btcd is stopped and
// restarted between the second and the third.
func (r *btcCrashRun) killWhileConfirming() {
	r.t.Helper()
	if mp := r.node.Mempool(); len(mp) != crashBTCPayments {
		r.t.Fatalf("btcd's mempool holds %d transactions, want %d", len(mp), crashBTCPayments)
	}
	r.node.Mine(1) // every transfer, in one block
	r.crash(r.rnd.IntN(30))

	r.waitFollowing()
	r.node.Mine(1)
	r.crash(100 + r.rnd.IntN(1400))

	// btcd stops under a following server, which is then killed too; both
	// come back, btcd first (payd serve needs its node to start).
	r.waitFollowing()
	r.node.Stop()
	r.waitNetworks("the node's failure stored", func(s networkStatus) bool { return s.Error != "" })
	<-clockAfter(time.Duration(r.rnd.IntN(500)) * time.Millisecond)
	if !r.srv.kill() {
		r.t.Fatalf("the server had stopped by itself:\n%s", r.srv.tail())
	}
	r.kills++
	r.t.Logf("kill %d while btcd is stopped", r.kills)
	r.node.Restart()
	r.start()

	r.waitFollowing()
	r.node.Mine(1) // the third confirmation: every payment ends
	r.crash(r.rnd.IntN(30))
	r.waitFollowing()
	r.node.Mine(2)
}

// crash waits ms milliseconds, kills the server, starts it again and
// counts whether the killed one stopped halfway through a watcher's run
// (see halfway).
func (r *btcCrashRun) crash(ms int) {
	r.t.Helper()
	<-clockAfter(time.Duration(ms) * time.Millisecond)
	prev := r.srv.started
	if !r.srv.kill() {
		r.t.Fatalf("the server had stopped by itself:\n%s", r.srv.tail())
	}
	r.kills++
	r.start()
	s, err := r.snapshot()
	if err != nil {
		r.t.Fatal(err)
	}
	mid := halfway(s, prev, r.srv.started)
	if mid {
		r.midRun++
	}
	tip, _ := r.node.Tip()
	r.t.Logf("kill %d after %d ms at height %d: watcher stopped halfway: %v", r.kills, ms, tip, mid)
}

// waitFollowing waits until the running server follows btcd again: it
// took the follower's lease over from the killed one and read the node
// without error since it started.
func (r *btcCrashRun) waitFollowing() {
	r.t.Helper()
	r.waitNetworks("the restarted server following btcd", func(s networkStatus) bool {
		return s.Error == "" && s.CheckedAt.After(r.srv.started)
	})
}

// waitNetworks reads payd networks --json until ok holds for bitcoin, for
// up to crashDeadline.
func (r *btcCrashRun) waitNetworks(what string, ok func(networkStatus) bool) {
	r.t.Helper()
	deadline := clockAfter(crashDeadline)
	for {
		out, err := exec.Command(r.srv.bin, "networks", "--json", "--database", r.srv.dsn).Output()
		var status struct {
			Data []networkStatus `json:"data"`
		}
		if err == nil {
			err = json.Unmarshal(out, &status)
		}
		if err == nil && len(status.Data) != 1 {
			err = errors.New("not one network")
		}
		if err != nil {
			r.t.Fatalf("payd networks: %v: %s", err, out)
		}
		if ok(status.Data[0]) {
			return
		}
		select {
		case <-deadline:
			r.t.Fatalf("waited %v for %s: %+v\n%s", crashDeadline, what, status.Data[0], r.srv.tail())
		case <-clockAfter(100 * time.Millisecond):
		}
	}
}
