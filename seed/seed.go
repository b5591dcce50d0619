// Package seed fills a development database with realistic businesses,
// customers, links and payments (payd dev seed), and plants known search
// terms so that a benchmark over a million payments knows what each query
// must find. Everything is written through payd.Store's own methods, in
// large transactions; the same seed and Now give the same data.
package seed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"payd"
)

// Version changes whenever the same seed would give different data, so
// that cached benchmark databases are rebuilt.
const Version = 2

// Config says what to seed.
type Config struct {
	// Payments is how many payments to make in all; the first business
	// gets 90 % of them when there are several.
	Payments int
	// Businesses is how many businesses to make (default 3).
	Businesses int
	// Seed picks the data; the same Seed and Now give the same data.
	Seed uint64
	// Now is the end of the seeded year: payments are made before it, and
	// those still open are open at it.
	Now time.Time
	// Rates price the payments (rate.DevQuotes in payd dev seed).
	Rates *payd.ExchangeRates
	// BatchSize is how many payments each transaction writes (default 1,000).
	BatchSize int
	// Progress, when set, is called after each transaction with the number
	// of payments written so far.
	Progress func(done int)
}

// check fills defaults and refuses what cannot be seeded.
func (c *Config) check() error {
	if c.Businesses == 0 {
		c.Businesses = 3
	}
	if c.BatchSize == 0 {
		c.BatchSize = 1000
	}
	switch {
	case c.Payments < 0 || c.Businesses < 1 || c.BatchSize < 1:
		return errors.New("seed: payments must be 0 or more, businesses and the batch size 1 or more")
	case c.Now.IsZero():
		return errors.New("seed: Now is required")
	case c.Rates == nil:
		return errors.New("seed: exchange rates are required")
	}
	return nil
}

// share is how many of n payments business i of count gets.
func share(n, i, count int) int {
	if count == 1 {
		return n
	}
	main := n * 9 / 10
	if i == 0 {
		return main
	}
	rest := n - main
	each := rest / (count - 1)
	if i == count-1 {
		return rest - each*(count-2)
	}
	return each
}

// ErrSeeded is returned when the database already holds this seed's data.
var ErrSeeded = errors.New("seed: the database already holds the data of this seed")

// Run seeds st as cfg says and returns what it made. A failure leaves the
// transactions already committed in place; seed a fresh database again.
func Run(ctx context.Context, st payd.Store, cfg Config) (*Summary, error) {
	g, bs, sum, keys, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := st.BusinessByID(ctx, bs[0].b.ID); err == nil {
		return nil, fmt.Errorf("%w (business %s exists): use another --seed or a fresh database", ErrSeeded, bs[0].b.ID)
	} else if !payd.IsNotFound(err) {
		return nil, err
	}
	if err := setup(ctx, st, bs, keys); err != nil {
		return nil, err
	}
	if err := g.payments(ctx, st, bs, sum); err != nil {
		return nil, err
	}
	sum.Terms = g.terms
	return sum, nil
}

// prepare makes the businesses with their keys and links, and plans the
// planted terms: everything the payments draw on.
func prepare(cfg Config) (*gen, []*business, *Summary, []*payd.APIKey, error) {
	if err := cfg.check(); err != nil {
		return nil, nil, nil, nil, err
	}
	g := newGen(cfg)
	bs := make([]*business, cfg.Businesses)
	for i := range bs {
		bs[i] = g.newBusiness(i, share(cfg.Payments, i, cfg.Businesses))
	}
	sum := newSummary(cfg)
	var keys []*payd.APIKey
	for _, b := range bs {
		g.newLinks(b)
		sum.addBusiness(b, &keys)
	}
	g.plan(bs[0])
	return g, bs, sum, keys, nil
}

// setup writes the businesses, their keys and links in one transaction.
func setup(ctx context.Context, st payd.Store, bs []*business, keys []*payd.APIKey) error {
	return st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		for _, b := range bs {
			if err := q.CreateBusiness(ctx, b.b); err != nil {
				return err
			}
			for _, l := range b.links {
				if err := q.CreateLink(ctx, l); err != nil {
					return err
				}
			}
		}
		for _, k := range keys {
			if err := q.CreateAPIKey(ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// payments generates the payments on one goroutine while another writes
// the previous batch, so that generating costs no time on two cores.
func (g *gen) payments(ctx context.Context, st payd.Store, bs []*business, sum *Summary) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *batch, 2)
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		errc <- g.generate(ctx, bs, sum, batches)
	}()
	done := 0
	for bt := range batches {
		if err := bt.write(ctx, st); err != nil {
			cancel()
			for range batches { // let the generator finish
			}
			return err
		}
		done += len(bt.payments)
		if g.cfg.Progress != nil {
			g.cfg.Progress(done)
		}
	}
	return <-errc
}

// generate makes every business's payments in time order and sends them
// in batches.
func (g *gen) generate(ctx context.Context, bs []*business, sum *Summary, out chan<- *batch) error {
	for bi, b := range bs {
		bt := newBatch(b.b.ID)
		for i := range b.payments {
			if err := g.next(b, i, bt, sum, bi == 0); err != nil {
				return err
			}
			if len(bt.payments) >= g.cfg.BatchSize || i == b.payments-1 {
				select {
				case out <- bt:
				case <-ctx.Done():
					return ctx.Err()
				}
				bt = newBatch(b.b.ID)
			}
		}
	}
	return nil
}

// next makes the i-th payment of b, with a new customer when it brings
// one, and now and then a customer who has not paid yet.
func (g *gen) next(b *business, i int, bt *batch, sum *Summary, main bool) error {
	t := g.paymentTime(i, b.payments)
	if g.chance(0.02) {
		bt.customers = append(bt.customers, g.waiting(b, t))
		sum.Customers++
	}
	var link *payd.Link
	if g.chance(0.35) {
		link = g.linkAt(b, t)
	}
	cust, fresh := g.customerFor(b, t)
	if fresh {
		bt.customers = append(bt.customers, cust)
		sum.Customers++
	}
	p, err := g.newPayment(b, i, t, cust, link)
	if err != nil {
		return err
	}
	bt.add(p)
	sum.count(p, main, i == b.payments/3)
	return nil
}

// waiting makes a customer added before paying (from a sign-up form or
// the dashboard); one in four is blocked and can never be drawn to pay.
func (g *gen) waiting(b *business, t time.Time) *payd.Customer {
	c := g.newCustomer(b, t.Add(-g.between(time.Minute, 3*24*time.Hour)))
	if g.chance(0.25) {
		c.Blocked = true
		c.Note = "Blocked after a disputed card payment."
		b.custPicks = b.custPicks[:len(b.custPicks)-1]
	}
	return c
}

// batch is what one transaction writes: new customers first, then the
// payments, then the stats those payments add to customers and links.
type batch struct {
	businessID string
	customers  []*payd.Customer
	payments   []*payd.Payment
	custStats  map[string]payd.StatsDelta
	linkStats  map[string]payd.StatsDelta
}

func newBatch(businessID string) *batch {
	return &batch{businessID: businessID, custStats: map[string]payd.StatsDelta{}, linkStats: map[string]payd.StatsDelta{}}
}

// add queues p and what it adds to its customer's and link's stats.
func (bt *batch) add(p *payd.Payment) {
	bt.payments = append(bt.payments, p)
	d := payd.PaymentStatsDelta(nil, p)
	if p.CustomerID != "" {
		bt.custStats[p.CustomerID] = merge(bt.custStats[p.CustomerID], d)
	}
	if p.LinkID != "" {
		bt.linkStats[p.LinkID] = merge(bt.linkStats[p.LinkID], d)
	}
}

// merge adds two deltas; the later last payment wins.
func merge(a, b payd.StatsDelta) payd.StatsDelta {
	a.Payments += b.Payments
	a.Succeeded += b.Succeeded
	a.VolumeUSD += b.VolumeUSD
	a.Crypto += b.Crypto
	a.Card += b.Card
	if a.LastPaymentAt == nil || (b.LastPaymentAt != nil && b.LastPaymentAt.After(*a.LastPaymentAt)) {
		a.LastPaymentAt = b.LastPaymentAt
	}
	return a
}

// write commits the batch in one transaction. It only reads the batch,
// so the store may run it again after a busy or serialization failure.
func (bt *batch) write(ctx context.Context, st payd.Store) error {
	return st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		for _, c := range bt.customers {
			if err := q.CreateCustomer(ctx, c); err != nil {
				return err
			}
		}
		for _, p := range bt.payments {
			if err := q.CreatePayment(ctx, p); err != nil {
				return err
			}
		}
		for _, id := range sortedKeys(bt.custStats) {
			if err := q.AddCustomerStats(ctx, bt.businessID, id, bt.custStats[id]); err != nil {
				return err
			}
		}
		for _, id := range sortedKeys(bt.linkStats) {
			if err := q.AddLinkStats(ctx, bt.businessID, id, bt.linkStats[id]); err != nil {
				return err
			}
		}
		return nil
	})
}

// sortedKeys orders updates the same way in every transaction, so that
// two writers can never deadlock on PostgreSQL.
func sortedKeys(m map[string]payd.StatsDelta) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
