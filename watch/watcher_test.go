package watch

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// fakeNet is the chain seam: it reports one fixed transfer into every
// deposit it is asked about and counts the reads.
type fakeNet struct {
	reads atomic.Int64
	conf  int
}

func (f *fakeNet) Name() money.Network   { return money.Polygon }
func (f *fakeNet) Assets() []money.Asset { return []money.Asset{money.USDC} }
func (f *fakeNet) Deposit(string, uint32) (payd.Deposit, error) {
	return payd.Deposit{}, nil
}
func (f *fakeNet) ValidAddress(string) error                                  { return nil }
func (f *fakeNet) ValidTxHash(string) error                                   { return nil }
func (f *fakeNet) PaymentURI(payd.PaymentRequest) string                      { return "" }
func (f *fakeNet) ExplorerURL(h string) string                                { return "https://explorer.test/" + h }
func (f *fakeNet) FeeEstimateUSD(context.Context, money.Asset) (int64, error) { return 1, nil }

func (f *fakeNet) Transfers(_ context.Context, ds []payd.Deposit) ([]payd.Transfer, error) {
	f.reads.Add(1)
	var out []payd.Transfer
	for _, d := range ds {
		out = append(out, payd.Transfer{TxHash: "0x" + d.Address, To: d.Address,
			Amount: money.NewCoinAmount(money.USDC, 25_000_000), Confirmations: f.conf})
	}
	return out, nil
}

var rates = &payd.ExchangeRates{Coins: map[money.Asset]int64{money.USDC: 100},
	Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1")}}

// openCheckout stores a business, a payment of 25.00 USD and its USDC
// checkout on polygon paying to address.
func openCheckout(t *testing.T, db *store.DB, now time.Time, address string) *payd.Payment {
	t.Helper()
	p, err := storeCheckout(context.Background(), db, newShop(t, db, now), now, address, false)
	must(t, err)
	return p
}

// newShop stores a business with a wallet that receives on polygon.
func newShop(t *testing.T, db *store.DB, now time.Time) *payd.Wallet {
	t.Helper()
	ctx := context.Background()
	biz, err := payd.NewBusiness("Shop", "shop@example.com", false, now)
	must(t, err)
	must(t, db.CreateBusiness(ctx, biz))
	key := "xpub-" + payd.RandomString(20)
	w, err := payd.NewWallet(biz.ID, map[money.Network]string{money.Polygon: key}, map[money.Network]string{money.Polygon: "id-" + key},
		payd.WalletAttached, now)
	must(t, err)
	must(t, db.CreateWallet(ctx, w))
	return w
}

// storeCheckout stores a payment of 25.00 USD of w's business and its
// USDC checkout on polygon paying to address, live or (ended) expired at
// now and watched for late funds.
func storeCheckout(ctx context.Context, q payd.Queries, w *payd.Wallet, now time.Time, address string, ended bool) (*payd.Payment, error) {
	p, err := payd.NewPayment(w.BusinessID, payd.PaymentParams{Amount: 2500, Currency: money.USD,
		FeePayer: money.FeePayerBusiness}, rates, false, now)
	if err != nil {
		return nil, err
	}
	c, err := payd.OpenCryptoCheckout(p, payd.OpenParams{Asset: money.USDC, Network: money.Polygon, Rates: rates,
		QuoteMinutes: 15, Deposit: payd.Deposit{Address: address}, WalletID: w.ID, Required: 2}, now)
	if err != nil {
		return nil, err
	}
	if ended {
		c.Status, c.WatchUntil = payd.CheckoutExpired, now.Add(payd.LateWindow)
	}
	if err := q.CreatePayment(ctx, p); err != nil {
		return nil, err
	}
	return p, q.CreateCheckout(ctx, c)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWatcherLease runs two watchers of one network on one database: only
// the lease holder reads the network, the other takes over once the lease
// has lapsed, and a report already applied is not applied again.
func TestWatcherLease(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		p := openCheckout(t, db, clk.Now(), "0xabc")
		a, b := &fakeNet{}, &fakeNet{}
		log := storetest.Logger(t)
		wa := NewWatcher(db, a, clk, log, Options{Lease: 10 * time.Second})
		wb := NewWatcher(db, b, clk, log, Options{Lease: 10 * time.Second})
		must(t, wa.RunOnce(ctx))
		must(t, wb.RunOnce(ctx))
		if a.reads.Load() != 1 || b.reads.Load() != 0 {
			t.Fatalf("reads: holder %d, other %d", a.reads.Load(), b.reads.Load())
		}
		got, err := db.PaymentByID(ctx, p.BusinessID, p.ID)
		must(t, err)
		if n := len(got.Events); n != 3 || got.Events[2].Type != payd.EventDetected {
			t.Fatalf("events after detection: %+v", got.Events)
		}
		clk.Advance(11 * time.Second)
		b.conf = 0
		must(t, wb.RunOnce(ctx))
		if b.reads.Load() != 1 {
			t.Fatalf("the other watcher did not take over: %d reads", b.reads.Load())
		}
		if again, _ := db.PaymentByID(ctx, p.BusinessID, p.ID); len(again.Events) != 3 {
			t.Fatalf("the same report applied twice: %d events", len(again.Events))
		}
		b.conf = 2
		must(t, wb.RunOnce(ctx))
		if done, _ := db.PaymentByID(ctx, p.BusinessID, p.ID); done.Status != payd.PaymentSucceeded {
			t.Fatalf("status = %s", done.Status)
		}
	})
}

// TestWatcherSkipsQuietCheckouts checks that a report that matches what a
// checkout holds costs no write: the checkout's version does not move.
func TestWatcherSkipsQuietCheckouts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		p := openCheckout(t, db, clk.Now(), "0xdef")
		w := NewWatcher(db, &fakeNet{}, clk, storetest.Logger(t), Options{})
		must(t, w.RunOnce(ctx))
		c, err := db.CheckoutByID(ctx, p.CheckoutID)
		must(t, err)
		must(t, w.RunOnce(ctx))
		again, err := db.CheckoutByID(ctx, p.CheckoutID)
		must(t, err)
		if c.Version != again.Version || len(again.Transfers) != 1 {
			t.Fatalf("version %d → %d, %d transfers", c.Version, again.Version, len(again.Transfers))
		}
	})
}

// TestWatcherSkipsConfirmedCheckouts: once a transfer has the required
// confirmations (2 here), more blocks write nothing: a week of paid
// checkouts is not written again at every block (docs/benchmarks.md).
func TestWatcherSkipsConfirmedCheckouts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		p := openCheckout(t, db, clk.Now(), "0xdef")
		net := &fakeNet{conf: 2}
		w := NewWatcher(db, net, clk, storetest.Logger(t), Options{})
		must(t, w.RunOnce(ctx))
		c, err := db.CheckoutByID(ctx, p.CheckoutID)
		must(t, err)
		if c.Status != payd.CheckoutCompleted {
			t.Fatalf("checkout %s after 2 confirmations", c.Status)
		}
		for _, conf := range []int{3, 50} {
			net.conf = conf
			must(t, w.RunOnce(ctx))
			again, err := db.CheckoutByID(ctx, p.CheckoutID)
			must(t, err)
			if c.Version != again.Version {
				t.Fatalf("%d confirmations: version %d → %d", conf, c.Version, again.Version)
			}
		}
	})
}

// askedNet is a network on which nothing was sent; it keeps the deposits
// each read asked about.
type askedNet struct {
	fakeNet
	asked [][]string
}

func (a *askedNet) Transfers(_ context.Context, ds []payd.Deposit) ([]payd.Transfer, error) {
	var addrs []string
	for _, d := range ds {
		addrs = append(addrs, d.Address)
	}
	a.asked = append(a.asked, addrs)
	return nil, nil
}

// TestWatcherTiers checks the loop's two cadences: a timed run reads the
// live checkouts alone, and every LateEvery, or when the network woke it,
// the ended ones watched for late funds too.
func TestWatcherTiers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		w := newShop(t, db, clk.Now())
		for address, ended := range map[string]bool{"0xlive": false, "0xended": true} {
			_, err := storeCheckout(ctx, db, w, clk.Now(), address, ended)
			must(t, err)
		}
		net := &askedNet{}
		wa := NewWatcher(db, net, clk, storetest.Logger(t), Options{LateEvery: time.Minute})
		every, live := "[0xended 0xlive]", "[0xlive]"
		for i, step := range []struct {
			woken   bool
			advance time.Duration
			want    string
		}{{true, 0, every}, {false, time.Second, live}, {false, 58 * time.Second, live},
			{true, 0, every}, {false, 59 * time.Second, live}, {false, time.Second, every}} {
			clk.Advance(step.advance)
			must(t, wa.tick(ctx, step.woken))
			if got := fmt.Sprint(net.asked[len(net.asked)-1]); got != step.want {
				t.Fatalf("run %d (woken %t): asked about %s, want %s", i, step.woken, got, step.want)
			}
		}
		// Another replica runs nothing while the lease is held, and starts
		// with a full run when it takes the lease over.
		other := &askedNet{}
		w2 := NewWatcher(db, other, clk, storetest.Logger(t), Options{LateEvery: time.Minute})
		must(t, w2.tick(ctx, false))
		clk.Advance(time.Second)
		must(t, w2.tick(ctx, false))
		if len(other.asked) != 0 {
			t.Fatalf("a replica without the lease asked about %v", other.asked)
		}
		clk.Advance(wa.opts.Lease)
		must(t, w2.tick(ctx, false))
		if got := fmt.Sprint(other.asked); got != "["+every+"]" {
			t.Fatalf("after taking the lease over: asked about %s, want [%s]", got, every)
		}
	})
}
