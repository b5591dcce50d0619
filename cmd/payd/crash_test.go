package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/clock"
	"payd/store/storetest"
)

// The crash test of issue 4: payments confirm on the devnet while payd
// serve is killed with SIGKILL at random moments, and each must still end
// in the right state with every event exactly once (DESIGN §1.2).
const (
	crashPayments = 200
	// crashDeadline bounds every wait: for a server to come back, and for
	// the watchers of a restarted one, which first wait out the lease the
	// killed one held (watch.Options.Lease, 15 s).
	crashDeadline = 60 * time.Second
)

// crashCoins are the coins the payments are made in, in turn.
var crashCoins = [][2]string{{"USDC", "polygon"}, {"USDT", "tron"}, {"BTC", "bitcoin"},
	{"ETH", "ethereum"}, {"SOL", "solana"}, {"USDC", "solana"}}

// crashRequired is what --confirmations asks for on each network.
var crashRequired = map[string]int{"bitcoin": 3, "ethereum": 3, "polygon": 4, "solana": 3, "tron": 3}

// TestCrashDuringConfirmations runs the real binary on each database,
// pays 200 checkouts (exact, under and over), then mines blocks while
// killing the server with SIGKILL at random moments (once at least while
// a watcher is applying a block, which the test proves from the state it
// left), and finally checks every payment, checkout and the wallet.
func TestCrashDuringConfirmations(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			var took []time.Duration
			lap := func(at time.Time) time.Time {
				now := clock.Real{}.Now()
				took = append(took, now.Sub(at).Round(100*time.Millisecond))
				return now
			}
			at := clock.Real{}.Now()
			r := newCrashRun(t, bin, devDSN(t, dialect))
			r.pay()
			at = lap(at)
			r.killWhileMining()
			at = lap(at)
			r.waitSettled()
			lap(at)
			r.check()
			t.Logf("%d kills, %d of them during a watcher's run; paying %v, mining and killing %v, settling %v",
				r.kills, r.midRun, took[0], took[1], took[2])
		})
	}
}

// crashRun is one database's run: the server process, the business's
// client and the payments.
type crashRun struct {
	t      *testing.T
	srv    *child
	c      *crashClient
	rnd    *rand.Rand
	pays   []*crashPayment
	kills  int
	midRun int // kills that stopped a watcher halfway through a block
	// holdPolygon keeps the miner off polygon, whose low blocks the later
	// targeted kill needs to see a watcher's run stopped halfway.
	holdPolygon atomic.Bool
	mu          sync.Mutex
	heights     map[string]int
	quit        chan struct{} // closed when the test ends
}

// crashPayment is one payment and what was sent to its checkout.
type crashPayment struct {
	asset, network, kind string // kind: exact, under, over
	price                int64
	id, checkout         string
	quoted, sent, tx     string
}

// newCrashRun starts the server on dsn, makes a business with a wallet and
// plans the payments.
func newCrashRun(t *testing.T, bin, dsn string) *crashRun {
	confs := make([]string, 0, len(crashRequired))
	for n, req := range crashRequired {
		confs = append(confs, fmt.Sprintf("%s=%d", n, req))
	}
	r := startCrashRun(t, bin, dsn, "--dev", "--confirmations", strings.Join(confs, ","),
		"--trusted-proxies", "127.0.0.1/32")
	for i := range crashPayments {
		coin := crashCoins[i%len(crashCoins)]
		kind := [...]string{"under", "over", "exact", "exact", "exact"}[(i/len(crashCoins))%5]
		r.pays = append(r.pays, &crashPayment{asset: coin[0], network: coin[1], kind: kind,
			price: 500 + r.rnd.Int64N(50_000)})
	}
	return r
}

// startCrashRun starts payd serve with args on dsn (migrated by serve, or
// before) and makes a business with a wallet and its client.
func startCrashRun(t *testing.T, bin, dsn string, args ...string) *crashRun {
	srv, quit := newChild(t, bin, dsn, args...)
	if err := srv.start(); err != nil {
		t.Fatalf("%v\n%s", err, srv.tail())
	}
	out, err := exec.Command(bin, "business", "create", "--name", "Crash Books", "--email", "x@example.com",
		"--wallet", "generate", "--json", "--database", dsn).Output()
	var keys struct {
		SecretKey string `json:"secret_key"`
	}
	if err != nil || json.Unmarshal(out, &keys) != nil || keys.SecretKey == "" {
		t.Fatalf("business create: %v: %s", err, out)
	}
	seed := uint64(clock.Real{}.Now().UnixNano())
	t.Logf("seed %d", seed)
	return &crashRun{t: t, srv: srv, rnd: rand.New(rand.NewPCG(seed, 1)), heights: map[string]int{}, quit: quit,
		c: &crashClient{base: "http://" + srv.addr + "/api/v1", key: keys.SecretKey}}
}

// pay creates each payment, opens its checkout and sends the coin, eight
// at a time, then waits until every transfer is detected. Transfers are
// never retried: the server is not killed yet, and a retry could pay twice.
func (r *crashRun) pay() {
	r.t.Helper()
	errs := make(chan error, len(r.pays))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := r.payOne(i); err != nil {
					errs <- fmt.Errorf("payment %d: %w", i, err)
				}
			}
		})
	}
	for i := range r.pays {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		r.t.Fatal(err)
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

// payOne makes payment i and sends its coin.
func (r *crashRun) payOne(i int) error {
	p := r.pays[i]
	pay, err := r.c.want(201, "POST", "/payments", map[string]any{"amount": p.price, "currency": "USD"},
		map[string]string{"Idempotency-Key": fmt.Sprint("pay-", i)}, true)
	if err != nil {
		return err
	}
	p.id = pay["id"].(string)
	chk, err := r.c.want(201, "POST", "/checkouts", map[string]any{"payment_id": p.id, "rail": "crypto",
		"asset": p.asset, "network": p.network}, map[string]string{"Idempotency-Key": fmt.Sprint("chk-", i),
		"X-Forwarded-For": fmt.Sprintf("10.7.%d.%d", i/250, i%250)}, true)
	if err != nil {
		return err
	}
	q := chk["crypto"].(map[string]any)
	p.checkout, p.quoted = chk["id"].(string), q["amount"].(string)
	p.sent = map[string]string{"exact": p.quoted, "under": scaled(p.quoted, 7, 10), "over": scaled(p.quoted, 6, 5)}[p.kind]
	body := map[string]any{"network": p.network, "asset": p.asset, "to": q["address"], "amount": p.sent}
	if ref, ok := q["reference"].(string); ok {
		body["reference"] = ref
	}
	tx, err := r.c.want(201, "POST", "/devnet/transfers", body, nil, false)
	if err != nil {
		return err
	}
	p.tx = tx["tx_hash"].(string)
	return nil
}

// killWhileMining mines every network well past its confirmations while
// killing the server with SIGKILL: first a few milliseconds after a block
// on every network, while the watchers apply it; then four times at
// random while a miner mines; then, once a restarted server has taken the
// watchers' lease over, a few milliseconds after a polygon block; then
// twice more at random. While no kill has been proved to have stopped a
// watcher halfway, the polygon kill is tried again, up to three times in
// all (each waits out the lease).
func (r *crashRun) killWhileMining() {
	r.t.Helper()
	r.holdPolygon.Store(true)
	r.mineAll(slices.Sorted(maps.Keys(crashRequired)))
	r.crash(r.rnd.IntN(30))
	miner, rnd := make(chan error, 1), rand.New(rand.NewPCG(r.rnd.Uint64(), 2))
	go func() { miner <- r.mine(rnd) }()
	randomly := func(n int) {
		for range n {
			r.crash(300 + r.rnd.IntN(1200))
		}
	}
	randomly(4)
	for try := 0; try == 0 || (r.midRun == 0 && try < 3); try++ {
		r.mineAll([]string{"bitcoin"}) // something for the new lease holder to write
		r.waitFor("the restarted server watching", func(s map[string]checkoutView) bool {
			for _, v := range s {
				if !v.updated.Before(r.srv.started) {
					return true
				}
			}
			return false
		})
		r.mineAll([]string{"polygon"})
		r.crash(r.rnd.IntN(30))
	}
	r.holdPolygon.Store(false)
	randomly(2)
	if err := <-miner; err != nil {
		r.t.Fatal(err)
	}
	if r.kills < 5 || r.midRun < 1 {
		r.t.Fatalf("%d kills, %d during a watcher's run: want at least 5 and 1", r.kills, r.midRun)
	}
}

// crash waits ms milliseconds, kills the server, starts it again and reads
// what the killed process left, before the new one's watchers, which wait
// for the lease, write anything.
func (r *crashRun) crash(ms int) {
	r.t.Helper()
	<-clockAfter(time.Duration(ms) * time.Millisecond)
	prev := r.srv.started
	if !r.srv.kill() {
		r.t.Fatalf("the server had stopped by itself:\n%s", r.srv.tail())
	}
	r.kills++
	if err := r.srv.start(); err != nil {
		r.t.Fatalf("restart %d: %v\n%s", r.kills, err, r.srv.tail())
	}
	s, err := r.snapshot()
	if err != nil {
		r.t.Fatal(err)
	}
	mid := halfway(s, prev, r.srv.started)
	if mid {
		r.midRun++
	}
	r.mu.Lock()
	r.t.Logf("kill %d after %d ms: heights %v, watcher stopped halfway: %v", r.kills, ms, r.heights, mid)
	r.mu.Unlock()
}

// mine mines one or two blocks at a time on a random network below its
// target (its confirmations and six more), retrying through restarts,
// until every network is there or the test ends.
func (r *crashRun) mine(rnd *rand.Rand) error {
	for {
		var todo []string
		r.mu.Lock()
		for n, req := range crashRequired {
			if r.heights[n] < req+6 && (n != "polygon" || !r.holdPolygon.Load()) {
				todo = append(todo, n)
			}
		}
		r.mu.Unlock()
		if len(todo) == 0 && !r.holdPolygon.Load() {
			return nil
		}
		if len(todo) > 0 {
			if err := r.mineOne(todo[rnd.IntN(len(todo))], 1+rnd.IntN(2)); err != nil {
				return err
			}
		}
		select {
		case <-r.quit:
			return nil
		case <-clockAfter(time.Duration(50+rnd.IntN(250)) * time.Millisecond):
		}
	}
}

// mineAll mines one block on each of networks at once.
func (r *crashRun) mineAll(networks []string) {
	r.t.Helper()
	errs := make(chan error, len(networks))
	for _, n := range networks {
		go func() { errs <- r.mineOne(n, 1) }()
	}
	for range networks {
		if err := <-errs; err != nil {
			r.t.Fatal(err)
		}
	}
}

// mineOne mines count blocks on network and notes its height. A retry
// after a kill may mine them twice, which only adds confirmations.
func (r *crashRun) mineOne(network string, count int) error {
	got, err := r.c.want(201, "POST", "/devnet/blocks", map[string]any{"network": network, "count": count}, nil, true)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.heights[network] = max(r.heights[network], int(got["height"].(float64)))
	r.mu.Unlock()
	return nil
}

// checkoutView is what GET /checkouts/{id} shows of a checkout's progress.
type checkoutView struct {
	network, status string
	current         int
	updated         time.Time
}

// snapshot reads every checkout, eight at a time.
func (r *crashRun) snapshot() (map[string]checkoutView, error) {
	var mu sync.Mutex
	out := map[string]checkoutView{}
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	work := make(chan *crashPayment)
	for range 8 {
		wg.Go(func() {
			for p := range work {
				c, err := r.c.want(200, "GET", "/checkouts/"+p.checkout, nil, nil, true)
				if err != nil {
					failed.Store(&err)
					continue
				}
				v := checkoutView{network: p.network, status: c["status"].(string),
					current: int(c["confirmations"].(map[string]any)["current"].(float64))}
				if v.updated, err = time.Parse(time.RFC3339, c["updated_at"].(string)); err != nil {
					failed.Store(&err)
				}
				mu.Lock()
				out[p.checkout] = v
				mu.Unlock()
			}
		})
	}
	for _, p := range r.pays {
		work <- p
	}
	close(work)
	wg.Wait()
	if err := failed.Load(); err != nil {
		return nil, *err
	}
	return out, nil
}

// halfway reports whether s proves that the process started at prev and
// killed before now was stopped in the middle of a watcher's run: on some
// network it wrote checkouts, and they do not all show the same progress,
// which a finished run leaves them in (every transfer of a network is in
// the same block). Checkouts written since now make the proof void: the
// new process's watcher may be halfway itself.
func halfway(s map[string]checkoutView, prev, now time.Time) bool {
	type progress struct {
		current  int
		settling bool
	}
	wrote, seen := map[string]bool{}, map[string]map[progress]bool{}
	for _, v := range s {
		if !v.updated.Before(now.Truncate(time.Millisecond)) {
			return false
		}
		wrote[v.network] = wrote[v.network] || !v.updated.Before(prev.Truncate(time.Millisecond))
		if seen[v.network] == nil {
			seen[v.network] = map[progress]bool{}
		}
		seen[v.network][progress{v.current, v.status == "processing"}] = true
	}
	for n := range seen {
		if wrote[n] && len(seen[n]) > 1 {
			return true
		}
	}
	return false
}

// waitFor reads every checkout until ok holds, for up to crashDeadline.
func (r *crashRun) waitFor(what string, ok func(map[string]checkoutView) bool) {
	r.t.Helper()
	deadline := clockAfter(crashDeadline)
	for {
		s, err := r.snapshot()
		if err != nil {
			r.t.Fatal(err)
		}
		if ok(s) {
			return
		}
		select {
		case <-deadline:
			r.t.Fatalf("waited %v for %s\n%s", crashDeadline, what, r.srv.tail())
		case <-clockAfter(300 * time.Millisecond):
		}
	}
}

// waitSettled waits until no checkout is processing any more.
func (r *crashRun) waitSettled() {
	r.t.Helper()
	r.waitFor("every payment settled", func(s map[string]checkoutView) bool {
		for _, v := range s {
			if v.status == "processing" {
				return false
			}
		}
		return true
	})
}

// check asserts each payment's status, events and amounts, each
// checkout's end, that the wallet holds what was sent, counted once, and
// that the server logged no error.
func (r *crashRun) check() {
	r.t.Helper()
	sent := map[string]*big.Rat{}
	for _, p := range r.pays {
		pay, err := r.c.want(200, "GET", "/payments/"+p.id, nil, nil, true)
		if err != nil {
			r.t.Fatal(err)
		}
		chk, err := r.c.want(200, "GET", "/checkouts/"+p.checkout, nil, nil, true)
		if err != nil {
			r.t.Fatal(err)
		}
		if err := p.check(pay, chk); err != nil {
			r.t.Errorf("payment %s (%s %s on %s, quoted %s, sent %s): %v", p.id, p.kind, p.asset, p.network,
				p.quoted, p.sent, err)
		}
		k := p.asset + " " + p.network
		if sent[k] == nil {
			sent[k] = new(big.Rat)
		}
		sent[k].Add(sent[k], rat(p.sent))
	}
	wallet, err := r.c.want(200, "GET", "/wallet", nil, nil, true)
	if err != nil {
		r.t.Fatal(err)
	}
	held := map[string]*big.Rat{}
	for _, h := range wallet["holdings"].([]any) {
		h := h.(map[string]any)
		if a := rat(h["amount"].(string)); a.Sign() != 0 {
			held[fmt.Sprint(h["asset"], " ", h["network"])] = a
		}
	}
	if !maps.EqualFunc(held, sent, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 }) {
		r.t.Errorf("wallet holds %v, want what was sent: %v", decimals(held), decimals(sent))
	}
	if errs := r.srv.errorLines(); len(errs) > 0 { // a 500 is a bug (DESIGN §1.4), a failed run too
		r.t.Errorf("the server logged %d errors, the first:\n%s", len(errs), strings.Join(errs[:min(len(errs), 5)], "\n"))
	}
}

// check compares the payment and its checkout with what was sent.
func (p *crashPayment) check(pay, chk map[string]any) error {
	req := crashRequired[p.network]
	want := []string{"created", "method_selected", "detected"}
	want = append(want, slices.Repeat([]string{"confirmation"}, req)...)
	status, chkStatus, received := "succeeded", "completed", big.NewRat(p.price, 1)
	if p.kind == "under" {
		status, chkStatus = "underpaid", "underpaid"
		received.Mul(received, new(big.Rat).Quo(rat(p.sent), rat(p.quoted)))
		received.SetInt(new(big.Int).Quo(received.Num(), received.Denom())) // rounded down
	}
	events, _ := pay["events"].([]any)
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprint(e.(map[string]any)["type"]))
	}
	if want = append(want, status); !slices.Equal(got, want) {
		return fmt.Errorf("events %v, want %v", got, want)
	}
	for i, e := range events {
		data, _ := e.(map[string]any)["data"].(map[string]any)
		amount, _ := data["amount"].(string)
		switch {
		case got[i] == "confirmation" && (data["current"] != float64(i-2) || data["required"] != float64(req)):
			return fmt.Errorf("confirmation %d of %d is %v", i-2, req, data)
		case got[i] == "detected" && (data["tx_hash"] != p.tx || rat(amount).Cmp(rat(p.sent)) != 0):
			return fmt.Errorf("detected event %v, sent %s in %s", data, p.sent, p.tx)
		}
	}
	if pay["status"] != status || pay["amount_received"] != float64(received.Num().Int64()) {
		return fmt.Errorf("status %v, amount_received %v; want %s, %v", pay["status"], pay["amount_received"], status, received)
	}
	method, _ := pay["method"].(map[string]any)
	over, _ := method["overpaid_amount"].(string)
	wantOver := new(big.Rat).Sub(rat(p.sent), rat(p.quoted))
	if (p.kind == "over") != (over != "") || (over != "" && rat(over).Cmp(wantOver) != 0) {
		return fmt.Errorf("overpaid_amount %q, sent %s for %s", over, p.sent, p.quoted)
	}
	conf := chk["confirmations"].(map[string]any)
	if chk["status"] != chkStatus || conf["current"] != float64(req) || conf["required"] != float64(req) {
		return fmt.Errorf("checkout %v with confirmations %v, want %s with {%d, %d}", chk["status"], conf, chkStatus, req, req)
	}
	return nil
}

// scaled returns the decimal s times num/den, cut to s's decimals.
func scaled(s string, num, den int64) string {
	whole, frac, _ := strings.Cut(s, ".")
	u, _ := new(big.Int).SetString(whole+frac, 10)
	u.Mul(u, big.NewInt(num)).Quo(u, big.NewInt(den))
	digits := fmt.Sprintf("%0*s", len(frac)+1, u.String())
	if frac == "" {
		return digits
	}
	return digits[:len(digits)-len(frac)] + "." + digits[len(digits)-len(frac):]
}

// decimals shows amounts as decimals.
func decimals(m map[string]*big.Rat) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = strings.TrimRight(strings.TrimRight(v.FloatString(18), "0"), ".")
	}
	return out
}

// rat reads a decimal string; a malformed one reads as -1, which matches
// nothing the test expects.
func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return big.NewRat(-1, 1)
	}
	return r
}
