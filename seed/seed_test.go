package seed

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

var testNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// testRates is the development table (rate.DevQuotes) as a snapshot.
func testRates() *payd.ExchangeRates {
	return &payd.ExchangeRates{ID: "xr_test",
		Coins: map[money.Asset]int64{money.USDC: 100, money.USDT: 100, money.BTC: 6_400_000, money.ETH: 320_000, money.SOL: 15_000},
		Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1"), money.EUR: money.MustRate("1.08"),
			money.GBP: money.MustRate("1.27"), money.CAD: money.MustRate("0.73"), money.AUD: money.MustRate("0.66")},
		CreatedAt: testNow}
}

func testConfig(n int, s uint64) Config {
	return Config{Payments: n, Businesses: 3, Seed: s, Now: testNow, Rates: testRates(), BatchSize: 100}
}

// generated is everything a seeding would write, made without a database.
type generated struct {
	businesses []*business
	batches    []*batch
	sum        *Summary
}

func generate(t *testing.T, cfg Config) *generated {
	t.Helper()
	g, bs, sum, _, err := prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan *batch, 1)
	errc := make(chan error, 1)
	go func() { defer close(out); errc <- g.generate(context.Background(), bs, sum, out) }()
	got := &generated{businesses: bs, sum: sum}
	for bt := range out {
		got.batches = append(got.batches, bt)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	sum.Terms = g.terms
	return got
}

func (gd *generated) payments() []*payd.Payment {
	var ps []*payd.Payment
	for _, bt := range gd.batches {
		ps = append(ps, bt.payments...)
	}
	return ps
}

func (gd *generated) customers() []*payd.Customer {
	var cs []*payd.Customer
	for _, bt := range gd.batches {
		cs = append(cs, bt.customers...)
	}
	return cs
}

// fingerprint hashes every generated object.
func (gd *generated) fingerprint(t *testing.T) [32]byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, b := range gd.businesses {
		must(t, enc.Encode(b.b))
		must(t, enc.Encode(b.links))
	}
	must(t, enc.Encode(gd.customers()))
	must(t, enc.Encode(gd.payments()))
	return [32]byte(h.Sum(nil))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := generate(t, testConfig(700, 7)), generate(t, testConfig(700, 7))
	if a.fingerprint(t) != b.fingerprint(t) {
		t.Fatal("the same seed gave different data")
	}
	if c := generate(t, testConfig(700, 8)); c.fingerprint(t) == a.fingerprint(t) {
		t.Fatal("another seed gave the same data")
	}
	if len(a.payments()) != 700 || a.sum.Payments != 700 {
		t.Fatalf("made %d payments (summary %d), want 700", len(a.payments()), a.sum.Payments)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ n, count int }{{1000, 1}, {1000, 3}, {7, 4}, {1_000_000, 3}, {0, 2}} {
		sum := 0
		for i := range tc.count {
			sum += share(tc.n, i, tc.count)
		}
		if sum != tc.n {
			t.Errorf("share(%d, ·, %d) adds up to %d", tc.n, tc.count, sum)
		}
	}
}

func TestStatusesAndRails(t *testing.T) {
	gd := generate(t, testConfig(3000, 1))
	rails := map[payd.Rail]int{}
	for _, p := range gd.payments() {
		if p.Method != nil {
			rails[p.Method.Rail]++
		}
	}
	for _, s := range payd.PaymentStatuses {
		if gd.sum.Statuses[s] == 0 {
			t.Errorf("no %s payment in 3,000", s)
		}
	}
	if rails[payd.RailCard] == 0 || rails[payd.RailCrypto] == 0 {
		t.Errorf("rails %v: want both", rails)
	}
	if s := gd.sum.Statuses; s[payd.PaymentSucceeded] < 1800 {
		t.Errorf("statuses %v: most payments should succeed", s)
	}
}

// TestPlantedTerms checks that every occurrence of a planted term is one
// the summary counts: no vocabulary, id or hash contains one by chance.
func TestPlantedTerms(t *testing.T) {
	gd := generate(t, testConfig(5000, 3))
	terms := gd.sum.Terms
	for _, term := range []Term{terms.Rare, terms.Mid, terms.Broad} {
		if term.Payments == 0 {
			t.Fatalf("%q planted nowhere", term.Query)
		}
		found := 0
		for _, p := range gd.payments() {
			b, _ := json.Marshal(p)
			if strings.Contains(strings.ToLower(string(b)), term.Query) {
				found++
				if p.BusinessID != gd.sum.Targets.BusinessID {
					t.Errorf("%q planted in another business's payment %s", term.Query, p.ID)
				}
			}
		}
		if found != term.Payments {
			t.Errorf("%q is in %d payments, the summary says %d", term.Query, found, term.Payments)
		}
		for _, c := range gd.customers() {
			if strings.Contains(strings.ToLower(c.Name+c.Email+c.Note), term.Query) {
				t.Errorf("%q in customer %s", term.Query, c.ID)
			}
		}
	}
	if terms.Rare.Payments != 2 || terms.Mid.Payments != 90 || terms.Broad.Payments != 225 {
		t.Errorf("planted %d/%d/%d, want 2/90/225 for 4,500 payments", terms.Rare.Payments, terms.Mid.Payments, terms.Broad.Payments)
	}
}

// TestSeed seeds a small database on each store and reads it back: every
// payment as generated, customer and link stats equal to their payments'
// sums, and a second run with the same seed refused.
func TestSeed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := testConfig(500, 11)
		sum, err := Run(ctx, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gd := generate(t, cfg)
		if sum.Payments != 500 || sum.Customers != len(gd.customers()) || sum.Terms != gd.sum.Terms {
			t.Fatalf("summary %+v differs from the generation", sum)
		}
		checkPayments(t, db, gd)
		checkStats(t, db, gd)
		if _, err := Run(ctx, db, cfg); !errors.Is(err, ErrSeeded) {
			t.Fatalf("second run: %v, want ErrSeeded", err)
		}
	})
}

func checkPayments(t *testing.T, db *store.DB, gd *generated) {
	t.Helper()
	for i, want := range gd.payments() {
		if i%7 != 0 {
			continue
		}
		got, err := db.PaymentByID(context.Background(), want.BusinessID, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("payment %s read back as\n%s\nwant\n%s", want.ID, gj, wj)
		}
	}
}

func checkStats(t *testing.T, db *store.DB, gd *generated) {
	t.Helper()
	ctx := context.Background()
	custs, links := map[string]payd.StatsDelta{}, map[string]payd.StatsDelta{}
	for _, p := range gd.payments() {
		d := payd.PaymentStatsDelta(nil, p)
		if p.CustomerID != "" {
			custs[p.CustomerID] = merge(custs[p.CustomerID], d)
		}
		if p.LinkID != "" {
			links[p.LinkID] = merge(links[p.LinkID], d)
		}
	}
	for _, c := range gd.customers() {
		got, err := db.CustomerByID(ctx, c.BusinessID, c.ID)
		must(t, err)
		if want := custs[c.ID]; !sameStats(got.Stats, want) {
			t.Fatalf("customer %s stats %+v, want %+v", c.ID, got.Stats, want)
		}
	}
	for _, b := range gd.businesses {
		for _, l := range b.links {
			got, err := db.LinkByID(ctx, l.BusinessID, l.ID)
			must(t, err)
			if want := links[l.ID]; got.Stats.Payments != want.Payments || got.Stats.VolumeUSD != want.VolumeUSD {
				t.Fatalf("link %s stats %+v, want %+v", l.ID, got.Stats, want)
			}
		}
	}
}

func sameStats(s payd.Stats, d payd.StatsDelta) bool {
	sameTime := (s.LastPaymentAt == nil) == (d.LastPaymentAt == nil) &&
		(s.LastPaymentAt == nil || s.LastPaymentAt.Equal(*d.LastPaymentAt))
	return s.Payments == d.Payments && s.Succeeded == d.Succeeded && s.VolumeUSD == d.VolumeUSD &&
		s.Crypto == d.Crypto && s.Card == d.Card && sameTime
}
