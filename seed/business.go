package seed

import (
	"fmt"
	"time"

	"payd"
	"payd/money"
)

// business is one seeded business with what its payments draw on.
type business struct {
	b        *payd.Business
	tpl      template
	walletID string
	// payments is how many payments the business gets.
	payments int
	links    []*payd.Link
	// linkPicks lists link indexes, one per payment a link got so far plus
	// one per link: drawing from it favours popular links (a Yule process,
	// the heavy tail of real sales).
	linkPicks []int
	customers []*payd.Customer
	// custPicks does the same for returning customers.
	custPicks []int
	emails    map[string]int
	// plant maps the index of a payment to the term it carries.
	plant map[int]*Term
	// counters number order ids and invoices.
	orders, invoices int
}

// newBusiness makes the i-th business. The first one is the big merchant
// the benchmark measures; the others are smaller tenants beside it.
func (g *gen) newBusiness(i, payments int) *business {
	tpl := templates[i%len(templates)]
	name := tpl.name
	if i >= len(templates) {
		name = fmt.Sprintf("%s %d", tpl.name, i/len(templates)+1)
	}
	created := g.cfg.Now.Add(-Year - 60*24*time.Hour - g.between(0, 90*24*time.Hour))
	b := &payd.Business{ID: g.id(payd.PrefixBusiness, created), Name: name, Email: "billing@" + tpl.domain,
		Website: "https://" + tpl.domain, SupportEmail: "support@" + tpl.domain, CreatedAt: created, UpdatedAt: created}
	return &business{b: b, tpl: tpl, walletID: g.id(payd.PrefixWallet, created), payments: payments,
		emails: map[string]int{}, orders: 100000 + g.r.IntN(50000), invoices: 1000 + g.r.IntN(500)}
}

// linksPer is how many links a business has, by its share of payments.
func linksPer(payments int) int {
	switch {
	case payments >= 100000:
		return 60
	case payments >= 1000:
		return 20
	}
	return 8
}

// newLinks makes the business's links: every product in every currency is
// possible, created over the year before the first payment and the year of
// payments; some are archived since, a few disabled by the operator.
func (g *gen) newLinks(b *business) {
	n := linksPer(b.payments)
	for i := range n {
		p := b.tpl.products[i%len(b.tpl.products)]
		c := money.Currencies[i%len(money.Currencies)]
		created := g.cfg.Now.Add(-Year - g.between(0, 45*24*time.Hour))
		if i >= n/2 {
			created = g.cfg.Now.Add(-Year + g.between(0, 300*24*time.Hour))
		}
		l := &payd.Link{ID: g.id(payd.PrefixLink, created), BusinessID: b.b.ID, Code: g.base62(payd.LinkCodeLength),
			Name: p.name, Description: p.description + " " + pick(g, linkExtras), Amount: p.price, Currency: c,
			Status: payd.LinkActive, CreatedAt: created, UpdatedAt: created}
		if g.chance(0.6) {
			l.SuccessURL = "https://" + b.tpl.domain + "/thanks"
		}
		g.retire(l)
		b.links = append(b.links, l)
		b.linkPicks = append(b.linkPicks, i)
	}
}

// retire archives about one link in seven and disables one in twenty,
// late in the year, so that they have payments from before.
func (g *gen) retire(l *payd.Link) {
	switch {
	case g.chance(0.14):
		at := g.cfg.Now.Add(-g.between(time.Hour, 60*24*time.Hour))
		l.Status, l.ArchivedAt, l.UpdatedAt = payd.LinkArchived, &at, at
	case g.chance(0.05):
		at := g.cfg.Now.Add(-g.between(time.Hour, 30*24*time.Hour))
		l.Status, l.DisabledAt, l.UpdatedAt = payd.LinkDisabled, &at, at
		l.DisabledReason = "Disabled in review: reported as misleading (seeded data)."
	}
}

// linkAt draws a link that was taking payments at t, or nil when none
// was, and counts the payment towards the link's popularity.
func (g *gen) linkAt(b *business, t time.Time) *payd.Link {
	for range 8 {
		i := pick(g, b.linkPicks)
		if l := b.links[i]; open(l, t) {
			b.linkPicks = append(b.linkPicks, i)
			return l
		}
	}
	return nil
}

// open reports whether l took payments at t.
func open(l *payd.Link, t time.Time) bool {
	end := l.ArchivedAt
	if end == nil {
		end = l.DisabledAt
	}
	return !t.Before(l.CreatedAt) && (end == nil || t.Before(*end))
}

// newCustomer makes a customer first seen at t.
func (g *gen) newCustomer(b *business, t time.Time) *payd.Customer {
	name, email := g.person(b)
	c := &payd.Customer{ID: g.id(payd.PrefixCustomer, t), BusinessID: b.b.ID, Name: name, Email: email,
		Note: pick(g, customerNotes), CreatedAt: t, UpdatedAt: t}
	if g.chance(0.03) {
		c.Email = "" // created in the dashboard before the email was known
	}
	b.customers = append(b.customers, c)
	b.custPicks = append(b.custPicks, len(b.customers)-1)
	return c
}

// customerFor draws the customer of a payment at t: none for about one
// payment in five (no email asked), a returning customer for about half of
// the rest, and a new one otherwise. fresh is true when c is new.
func (g *gen) customerFor(b *business, t time.Time) (c *payd.Customer, fresh bool) {
	switch {
	case g.chance(0.2):
		return nil, false
	case len(b.customers) > 0 && g.chance(0.55):
		i := pick(g, b.custPicks)
		b.custPicks = append(b.custPicks, i)
		return b.customers[i], false
	}
	return g.newCustomer(b, t), true
}
