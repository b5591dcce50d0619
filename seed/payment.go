package seed

import (
	"encoding/json"
	"fmt"
	"time"

	"payd"
	"payd/money"
)

// outcome is where a seeded payment ends up.
type outcome int

const (
	outSucceeded outcome = iota
	outExpired
	outCanceled
	outUnderpaid
	outReview
	outPending
)

// outcomeWeights is the share of each outcome, in outcome order: most
// payments succeed, about one in seven expires unpaid, a few are canceled,
// under- or overpaid, and some invoices simply stay open.
var outcomeWeights = []int{72, 13, 5, 4, 2, 4}

// route is an asset on a network with how often customers choose it.
type route struct {
	asset   money.Asset
	network money.Network
	weight  int
}

// routes are the coins customers pay with, stablecoins on cheap networks first.
var routes = []route{
	{money.USDC, money.Polygon, 24}, {money.USDT, money.Tron, 20}, {money.USDC, money.Ethereum, 9},
	{money.USDT, money.Ethereum, 5}, {money.USDC, money.Solana, 10}, {money.USDT, money.Solana, 4},
	{money.BTC, money.Bitcoin, 13}, {money.ETH, money.Ethereum, 9}, {money.SOL, money.Solana, 6},
}

var routeWeights = func() []int {
	w := make([]int, len(routes))
	for i, r := range routes {
		w[i] = r.weight
	}
	return w
}()

// Confirmations is how many confirmations the seeded history shows per
// network before a payment succeeds (one confirmation event each). They are
// plausible, modest values for development data, not payd's policy, which
// is the chain watcher's configuration.
var Confirmations = map[money.Network]int{money.Bitcoin: 2, money.Ethereum: 3, money.Polygon: 5, money.Solana: 1, money.Tron: 3}

// blockTime is how long one confirmation takes on each network.
var blockTime = map[money.Network]time.Duration{money.Bitcoin: 10 * time.Minute, money.Ethereum: 12 * time.Second,
	money.Polygon: 2 * time.Second, money.Solana: 400 * time.Millisecond, money.Tron: 3 * time.Second}

// newPayment makes the i-th payment of b at t, in its final state, with
// a history that leads there. cust and link may be nil.
func (g *gen) newPayment(b *business, i int, t time.Time, cust *payd.Customer, link *payd.Link) (*payd.Payment, error) {
	in := g.params(b, t, cust, link)
	if term := b.plant[i]; term != nil {
		term.apply(&in)
	}
	p, err := payd.NewPayment(b.b.ID, in, g.rates, false, t)
	if err != nil {
		return nil, fmt.Errorf("seed: payment %d of %s: %w", i, b.b.ID, err)
	}
	p.ID, p.Code = g.id(payd.PrefixPayment, t), g.base62(20)
	if err := g.play(b, p, g.outcome(p, link)); err != nil {
		return nil, fmt.Errorf("seed: payment %s: %w", p.ID, err)
	}
	return p, nil
}

// outcome draws where p ends, keeping to what is possible: link payments
// cannot be canceled, and a payment still open must not be past its expiry.
func (g *gen) outcome(p *payd.Payment, link *payd.Link) outcome {
	o := outcome(g.weighted(outcomeWeights))
	if o == outCanceled && link != nil {
		o = outExpired
	}
	if o == outPending && p.ExpiresAt != nil && !p.ExpiresAt.After(g.cfg.Now) {
		o = outExpired
	}
	if o == outPending && link != nil && p.CreatedAt.Before(g.cfg.Now.Add(-time.Hour)) {
		o = outExpired // a link's checkout lasts a quote window, not a year
	}
	return o
}

// params is what the business asked for: a link's price, or an order or
// invoice made through the API.
func (g *gen) params(b *business, t time.Time, cust *payd.Customer, link *payd.Link) payd.PaymentParams {
	in := payd.PaymentParams{FeePayer: money.FeePayerBusiness, Metadata: map[string]string{}}
	if g.chance(0.1) {
		in.FeePayer = money.FeePayerCustomer
	}
	if cust != nil {
		in.CustomerID = cust.ID
	}
	if link != nil {
		in.LinkID, in.Amount, in.Currency, in.Description = link.ID, link.Amount, link.Currency, link.Name
		in.SuccessURL = link.SuccessURL
	} else {
		g.order(b, t, &in)
	}
	in.Country = g.country(in.Currency)
	g.metadata(b, &in)
	return in
}

// order fills an API-made payment: a shop order of one to three products,
// or an invoice with a reference and often an expiry.
func (g *gen) order(b *business, t time.Time, in *payd.PaymentParams) {
	p := pick(g, b.tpl.products)
	qty := int64(1 + g.weighted([]int{70, 20, 10}))
	in.Currency = g.currency()
	in.Amount = p.price * qty
	in.Description = p.name
	if qty > 1 {
		in.Description = fmt.Sprintf("%s ×%d", p.name, qty)
	}
	in.SuccessURL = "https://" + b.tpl.domain + "/orders/complete"
	in.CancelURL = "https://" + b.tpl.domain + "/cart"
	if g.chance(0.35) {
		b.invoices++
		in.Reference = fmt.Sprintf("INV-%d-%06d", t.Year(), b.invoices)
		in.Description = pick(g, invoiceNotes) + ": " + p.name
		in.SuccessURL, in.CancelURL = "", ""
	}
	if g.chance(0.5) {
		exp := t.Add(g.between(time.Hour, 7*24*time.Hour))
		in.ExpiresAt = &exp
	}
}

// metadata adds what shops typically attach: an order id (unique, for the
// exact metadata filter), the sales channel, sometimes a campaign and sku.
func (g *gen) metadata(b *business, in *payd.PaymentParams) {
	b.orders++
	in.Metadata["order_id"] = fmt.Sprintf("ORD-%d", b.orders)
	in.Metadata["channel"] = []string{"web", "mobile", "pos"}[g.weighted([]int{60, 25, 15})]
	if g.chance(0.2) {
		in.Metadata["campaign"] = pick(g, campaigns)
	}
	if g.chance(0.3) {
		in.Metadata["sku"] = fmt.Sprintf("SKU-%04d", g.r.IntN(10000))
	}
}

// event appends an entry with data encoded as JSON (nil for null).
func event(p *payd.Payment, typ string, data any, at time.Time) {
	var raw []byte
	if data != nil {
		raw, _ = json.Marshal(data) // maps of strings and ints always encode
	}
	p.Events = append(p.Events, payd.PaymentEvent{Type: typ, Data: raw, CreatedAt: at})
	p.UpdatedAt = at
}
