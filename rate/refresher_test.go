package rate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// refresherBundle is what a refresher test works with.
type refresherBundle struct {
	r      *Refresher
	clock  *clock.Fake
	store  *memStore
	static *Static
	logMu  sync.Mutex
	log    bytes.Buffer
}

func (b *refresherBundle) Write(p []byte) (int, error) {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	return b.log.Write(p)
}

func (b *refresherBundle) logged() string {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	return b.log.String()
}

// setup returns a refresher over the static dev table plus extra sources,
// with the default interval and max age.
func setup(t *testing.T, extra ...payd.RateSource) *refresherBundle {
	t.Helper()
	b := &refresherBundle{clock: clock.NewFake(fileDay), store: newMemStore(), static: NewStatic(DevQuotes())}
	sources := append([]payd.RateSource{b.static}, extra...)
	b.r = NewRefresher(sources, b.store, b.clock, slog.New(slog.NewTextHandler(b, nil)), 0, 0)
	return b
}

func failing(name string) fakeSource {
	return fakeSource{name: name, fetch: func(context.Context) (payd.Quotes, error) {
		return payd.Quotes{}, errors.New("connection refused")
	}}
}

func wantUnavailable(t *testing.T, err error) {
	t.Helper()
	var e *payd.Error
	if !errors.As(err, &e) || e.Code != payd.ErrUpstreamUnavailable {
		t.Fatalf("err = %v, want upstream_unavailable", err)
	}
	if e.RetryAfter != DefaultInterval {
		t.Errorf("RetryAfter = %s, want the refresh interval", e.RetryAfter)
	}
}

func TestRefresherSkipsFailingSources(t *testing.T) {
	absurd := fakeSource{name: "absurd", fetch: func(context.Context) (payd.Quotes, error) {
		return quotes(t, map[string]string{"BTC": "0.64"}), nil
	}}
	gbp := fakeSource{name: "gbp", fetch: func(context.Context) (payd.Quotes, error) {
		return quotes(t, map[string]string{"GBP": "1.29"}), nil
	}}
	b := setup(t, failing("down"), absurd, gbp)
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	x, err := b.r.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Sources, []string{"static", "gbp"}) {
		t.Errorf("sources = %v", x.Sources)
	}
	if !payd.HasPrefix(x.ID, "xr_") || !x.CreatedAt.Equal(b.clock.Now()) {
		t.Errorf("id %q at %s", x.ID, x.CreatedAt)
	}
	// The median of static's 1.27 and gbp's 1.29; absurd's BTC is left out.
	if x.Fiat[money.GBP].String() != "1.28" || x.Coins[money.BTC] != 6_400_000 {
		t.Errorf("GBP %s, BTC %d", x.Fiat[money.GBP], x.Coins[money.BTC])
	}
	stored, _ := b.store.LatestExchangeRates(context.Background())
	if stored != x {
		t.Errorf("stored %v, served %v", stored.ID, x.ID)
	}
	for _, want := range []string{"source=down", "connection refused", "source=absurd", "BTC at 0.64"} {
		if !strings.Contains(b.logged(), want) {
			t.Errorf("log lacks %q:\n%s", want, b.logged())
		}
	}
}

func TestRefresherDoesNotWaitForAHangingSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		hanging := fakeSource{name: "hanging", fetch: func(context.Context) (payd.Quotes, error) {
			<-release // ignores its context on purpose
			return payd.Quotes{}, errors.New("too late")
		}}
		b := setup(t, hanging)
		done := make(chan error)
		go func() { done <- b.r.RunOnce(context.Background()) }()
		synctest.Wait() // static has answered; hanging has not
		b.clock.Advance(FetchTimeout - time.Nanosecond)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("RunOnce returned before the fetch timeout")
		default:
		}
		b.clock.Advance(time.Nanosecond)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		x, _ := b.r.Latest(context.Background())
		if !slices.Equal(x.Sources, []string{"static"}) {
			t.Errorf("sources = %v", x.Sources)
		}
		if !strings.Contains(b.logged(), "source=hanging") {
			t.Errorf("log: %s", b.logged())
		}
	})
}

func TestRefresherStaleRatesAreUnavailable(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(DefaultMaxAge - time.Second)
	if _, err := b.r.Fresh(ctx); err != nil {
		t.Fatalf("9m59s old: %v", err)
	}
	b.clock.Advance(time.Second)
	_, err := b.r.Fresh(ctx)
	wantUnavailable(t, err)
	if !strings.Contains(err.Error(), "10m0s old") {
		t.Errorf("err = %v", err)
	}
	if _, err := b.r.Latest(ctx); err != nil {
		t.Errorf("Latest must still show stale rates: %v", err)
	}
}

func TestRefresherWithNoRatesAtAll(t *testing.T) {
	b := setup(t, failing("down"))
	// A stablecoin alone: nothing but the fixed values, so no snapshot.
	b.static.Set(payd.Quotes{Coins: map[money.Asset]money.Rate{money.USDC: money.MustRate("1")}})
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "no source reported BTC, ETH, SOL, EUR, GBP, CAD, AUD") {
		t.Fatalf("RunOnce = %v", err)
	}
	_, err := b.r.Latest(ctx)
	wantUnavailable(t, err)
	_, err = b.r.Fresh(ctx)
	wantUnavailable(t, err)
	if b.store.len() != 0 {
		t.Errorf("stored %d snapshots", b.store.len())
	}
}

func TestRefresherKeepsTheLastSnapshotWhenARefreshFails(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := b.r.Latest(ctx)
	b.store.fail = errors.New("disk full")
	b.static.Set(DevQuotes())
	if err := b.r.RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("RunOnce = %v", err)
	}
	if x, _ := b.r.Latest(ctx); x != first {
		t.Errorf("Latest = %s, want the first snapshot %s", x.ID, first.ID)
	}
}

func TestRefresherPrunesHistory(t *testing.T) {
	b := setup(t)
	now := b.clock.Now()
	old := &payd.ExchangeRates{ID: "xr_old", CreatedAt: now.Add(-History - time.Second)}
	recent := &payd.ExchangeRates{ID: "xr_recent", CreatedAt: now.Add(-History + time.Second)}
	b.store.rows = []*payd.ExchangeRates{old, recent}
	if err := b.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range b.store.rows {
		ids = append(ids, x.ID)
	}
	if len(ids) != 2 || ids[0] != "xr_recent" {
		t.Errorf("kept %v, want xr_recent and the new snapshot", ids)
	}
	if !slices.Equal(b.store.pruned, []time.Time{now.Add(-History)}) {
		t.Errorf("pruned before %v", b.store.pruned)
	}
}

func TestRefresherRestartServesTheStoredSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		b.r = NewRefresher([]payd.RateSource{failing("down")}, b.store, b.clock, b.r.log, 0, 0)
		stored := &payd.ExchangeRates{ID: "xr_stored", CreatedAt: b.clock.Now().Add(-2 * time.Minute),
			Coins: map[money.Asset]int64{money.BTC: 6_400_000}}
		b.store.rows = []*payd.ExchangeRates{stored}
		b.r.Start(context.Background())
		defer b.r.Stop()
		for _, get := range []func(context.Context) (*payd.ExchangeRates, error){b.r.Latest, b.r.Fresh} {
			if x, err := get(context.Background()); err != nil || x.ID != "xr_stored" {
				t.Errorf("got %v, %v; want the stored snapshot", x, err)
			}
		}
		synctest.Wait() // the background refresh failed and was logged
		if !strings.Contains(b.logged(), "source=down") {
			t.Errorf("log: %s", b.logged())
		}
	})
}

func TestRefresherLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		b.r.Start(ctx)
		// A new database gets its first snapshot before Start returns.
		if b.store.len() != 1 {
			t.Fatalf("after Start: %d snapshots", b.store.len())
		}
		if _, err := b.r.Fresh(ctx); err != nil {
			t.Fatal(err)
		}
		for i := 2; i <= 3; i++ {
			synctest.Wait()
			b.clock.Advance(DefaultInterval)
			synctest.Wait()
			if b.store.len() != i {
				t.Fatalf("after %d ticks: %d snapshots", i-1, b.store.len())
			}
		}
		cancel()
		b.r.Stop()
		b.clock.Advance(DefaultInterval)
		synctest.Wait()
		if b.store.len() != 3 {
			t.Errorf("refreshed after Stop: %d snapshots", b.store.len())
		}
	})
}

func TestRefresherStopWithoutStart(t *testing.T) {
	setup(t).r.Stop()
}
