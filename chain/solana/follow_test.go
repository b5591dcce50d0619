package solana_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/chain/solana"
	"payd/chain/solana/solanatest"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
)

var rates = &payd.ExchangeRates{Coins: map[money.Asset]int64{money.USDC: 100, money.SOL: solCents},
	Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1")}}

// openCheckouts stores a business with a solana wallet at owner and a
// payment of 25.00 USD with a USDC checkout for each reference, in one
// transaction.
func openCheckouts(t testing.TB, db *store.DB, now time.Time, owner string, refs []string) []*payd.Payment {
	t.Helper()
	ctx := context.Background()
	biz, err := payd.NewBusiness("Shop", "shop@example.com", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateBusiness(ctx, biz); err != nil {
		t.Fatal(err)
	}
	w, err := payd.NewWallet(biz.ID, map[money.Network]string{money.Solana: owner},
		map[money.Network]string{money.Solana: "id-" + owner}, payd.WalletAttached, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	out := make([]*payd.Payment, len(refs))
	err = db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		for i, r := range refs {
			p, err := payd.NewPayment(w.BusinessID, payd.PaymentParams{Amount: 2500, Currency: money.USD,
				FeePayer: money.FeePayerBusiness}, rates, false, now)
			if err != nil {
				return err
			}
			c, err := payd.OpenCryptoCheckout(p, payd.OpenParams{Asset: money.USDC, Network: money.Solana, Rates: rates,
				QuoteMinutes: 15, Deposit: payd.Deposit{Address: owner, Reference: r}, WalletID: w.ID,
				Required: payd.DefaultConfirmations[money.Solana]}, now)
			if err != nil {
				return err
			}
			if err := q.CreatePayment(ctx, p); err != nil {
				return err
			}
			if err := q.CreateCheckout(ctx, c); err != nil {
				return err
			}
			out[i] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// events are the payment's event types after its creation, space
// separated.
func events(t *testing.T, db *store.DB, p *payd.Payment) string {
	t.Helper()
	got, err := db.PaymentByID(context.Background(), p.BusinessID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range got.Events[2:] {
		types = append(types, e.Type)
	}
	return strings.Join(types, " ")
}

// TestFollowerOnSolana follows solanatest with the real follower and
// store: a payment with the reference is detected while confirmed and
// succeeds once finalized; one whose slot is forked away is dropped after
// DropAfter; one without a reference pays nothing; a node answering 429
// or hanging fails the run as upstream_unavailable, and the follower
// recovers and finds what was sent meanwhile.
func TestFollowerOnSolana(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := solanatest.New(t)
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		n := mustNode(t, c.URL(), solana.Options{Price: solPrice, Clock: clk, MaxRPS: 1_000_000,
			HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
		log := storetest.Logger(t)
		f := watch.NewFollower(db, n, clk, log, watch.FollowOptions{Lease: time.Hour, DropAfter: time.Minute,
			MaxBackoff: 10 * time.Second})
		w := watch.NewWatcher(db, f.Network(), clk, log, watch.Options{})
		owner, payer := wallet(t), wallet(t)
		refs := []string{ref(t), ref(t), ref(t), ref(t)}
		ps := openCheckouts(t, db, clk.Now(), owner, refs)
		paid, forked, unpaid, late := ps[0], ps[1], ps[2], ps[3]
		run := func() {
			t.Helper()
			if err := f.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if head, err := db.ChainHead(ctx, money.Solana); err != nil || head.Height != c.Finalized() {
			t.Fatalf("the first run stored %+v, %v; want the finalized slot %d", head, err, c.Finalized())
		}

		c.Transfer(payer, owner, solanatest.USDC, 25_000_000, refs[0])
		s2 := c.Transfer(payer, owner, solanatest.USDC, 25_000_000, refs[1])
		c.Transfer(payer, owner, solanatest.USDC, 25_000_000, "")
		c.Advance(1)
		run()
		for _, p := range []*payd.Payment{paid, forked} {
			if got := events(t, db, p); got != "detected" {
				t.Fatalf("a confirmed transfer: %q", got)
			}
		}
		if got := events(t, db, unpaid); got != "" {
			t.Fatalf("a transfer without the reference: %q", got)
		}

		c.Fork(s2)
		c.Advance(solanatest.Lag)
		clk.Advance(time.Second)
		run()
		if got := events(t, db, paid); !strings.HasPrefix(got, "detected") || !strings.HasSuffix(got, "succeeded") {
			t.Fatalf("a finalized transfer: %q", got)
		}
		if got := events(t, db, forked); got != "detected" {
			t.Fatalf("a forked transfer before DropAfter: %q", got)
		}
		clk.Advance(time.Minute)
		run()
		if got := events(t, db, forked); got != "detected dropped" {
			t.Fatalf("a forked transfer after DropAfter: %q", got)
		}

		// The node throttles: its Retry-After is waited out without
		// failing the status (which would refuse checkouts), until it
		// lasts past the status' staleness; then it hangs: the run fails
		// as upstream_unavailable and the status says so.
		c.Throttle(1, "60")
		if err := f.RunOnce(ctx); err != nil {
			t.Fatalf("a 429: %v", err)
		}
		if err := f.Healthy(ctx); err != nil {
			t.Errorf("unhealthy while a 429's Retry-After is waited out: %v", err)
		}
		clk.Advance(46 * time.Second)
		if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("a Retry-After past the staleness: %v", err)
		}
		if err := f.Healthy(ctx); err == nil {
			t.Error("healthy while throttled past the staleness")
		}
		c.Transfer(payer, owner, solanatest.USDC, 25_000_000, refs[3])
		clk.Advance(20 * time.Second)
		c.Hang(1)
		if err := f.RunOnce(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
			t.Fatalf("a hung node: %v", err)
		}
		clk.Advance(20 * time.Second)
		run()
		if got := events(t, db, late); got != "detected" {
			t.Fatalf("a transfer sent while the node failed: %q", got)
		}
		if err := f.Healthy(ctx); err != nil {
			t.Errorf("after recovering: %v", err)
		}
	})
}

// TestScanCost is the figure docs/networks.md and docs/benchmarks.md
// quote: one wallet with USDC and USDT and 10,000 open solana checkouts,
// followed by the real follower on SQLite at the default 1 s interval,
// against a chain where nothing happens. The RPC calls of 5 s of runs are
// counted with no effective rate limit (MaxRPS very high), so that a
// regression shows rather than being held under the limit: at most 4 a
// run (getSlot and a list of each of the 3 accounts) and at most 10 a
// second. Then, under the default rate limit, a payment is sent and must
// be stored as pending within 2 s.
func TestScanCost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 10 s")
	}
	ctx := context.Background()
	real := clock.Real{}
	c := solanatest.New(t)
	db := storetest.OpenSQLite(t)
	owner, payer := wallet(t), wallet(t)
	refs := make([]string, 10_000)
	for i := range refs {
		refs[i] = ref(t)
	}
	openCheckouts(t, db, real.Now(), owner, refs)
	wait := func(what string, limit time.Duration, done func() bool) time.Duration {
		t.Helper()
		start := real.Now()
		for !done() {
			if real.Now().Sub(start) > limit {
				t.Fatalf("%s: not within %s", what, limit)
			}
			<-real.NewTimer(10 * time.Millisecond).C()
		}
		return real.Now().Sub(start)
	}

	n := mustNode(t, c.URL(), solana.Options{Price: solPrice, MaxRPS: 1_000_000})
	f := watch.NewFollower(db, n, real, storetest.Logger(t), watch.FollowOptions{})
	f.Start(ctx)
	wait("the first run", 10*time.Second, func() bool {
		_, err := db.ChainHead(ctx, money.Solana)
		return err == nil
	})
	const window = 5 * time.Second
	c.ResetCalls()
	start := real.Now()
	<-real.NewTimer(window).C()
	calls := c.Calls()
	total := c.TotalCalls()
	elapsed := real.Now().Sub(start)
	f.Stop()
	runs := calls["getSlot"]
	perSecond := float64(total) / elapsed.Seconds()
	t.Logf("10,000 open deposits of one wallet, nothing new, no rate limit: %d RPC calls in %d runs over %s = "+
		"%.1f calls/run, %.1f calls/s (%v)", total, runs, window, float64(total)/float64(max(runs, 1)), perSecond, calls)
	// A run under way when the window opened has its lists counted
	// but not its getSlot: up to 3 calls more.
	if runs == 0 || total > 4*runs+3 {
		t.Errorf("%d calls in %d runs: more than 4 a run", total, runs)
	}
	if perSecond > 10 {
		t.Errorf("%.1f calls/s, over 10", perSecond)
	}

	// Under the default rate limit, a new payment.
	n = mustNode(t, c.URL(), solana.Options{Price: solPrice})
	f = watch.NewFollower(db, n, real, storetest.Logger(t), watch.FollowOptions{})
	f.Start(ctx)
	defer f.Stop()
	<-real.NewTimer(time.Second).C() // a run, the watched set read
	sig := c.Transfer(payer, owner, solanatest.USDC, 25_000_000, refs[len(refs)/2])
	took := wait("the new payment", 2*time.Second, func() bool {
		txs, err := db.UnconfirmedTxs(ctx, money.Solana)
		return err == nil && len(txs) == 1 && txs[0] == sig
	})
	t.Logf("a new payment was stored as pending %s after it was sent (default rate limit)", took.Round(time.Millisecond))
}
