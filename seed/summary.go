package seed

import (
	"time"

	"payd"
)

// Summary is what a seeding made: the businesses with their keys, counts,
// and the targets a benchmark queries.
type Summary struct {
	Version    int                        `json:"version"`
	Seed       uint64                     `json:"seed"`
	Now        time.Time                  `json:"now"`
	Businesses []BusinessSummary          `json:"businesses"`
	Customers  int                        `json:"customers"`
	Links      int                        `json:"links"`
	Payments   int                        `json:"payments"`
	Statuses   map[payd.PaymentStatus]int `json:"statuses"`
	Terms      Terms                      `json:"terms"`
	Targets    Targets                    `json:"targets"`
}

// BusinessSummary is one seeded business and its keys. The keys are fresh
// random secrets on every run (only their hashes are stored), unlike the
// data, which the seed decides.
type BusinessSummary struct {
	ID             string `json:"business_id"`
	Name           string `json:"name"`
	Payments       int    `json:"payments"`
	SecretKey      string `json:"secret_key"`
	TestSecretKey  string `json:"test_secret_key"`
	PublishableKey string `json:"publishable_key"`
}

// Targets name objects of the first business that filters can select: the
// customer and the link with the most payments, and one payment's order id
// (metadata order_id, unique), from a third of the way into the year.
type Targets struct {
	BusinessID          string `json:"business_id"`
	TopCustomerID       string `json:"top_customer_id"`
	TopCustomerPayments int    `json:"top_customer_payments"`
	TopLinkID           string `json:"top_link_id"`
	TopLinkPayments     int    `json:"top_link_payments"`
	OrderID             string `json:"order_id"`
	OrderPaymentID      string `json:"order_payment_id"`
	// customers and links count payments per id of the first business.
	customers, links map[string]int
}

func newSummary(cfg Config) *Summary {
	return &Summary{Version: Version, Seed: cfg.Seed, Now: cfg.Now, Statuses: map[payd.PaymentStatus]int{},
		Targets: Targets{customers: map[string]int{}, links: map[string]int{}}}
}

// addBusiness records b and makes its live, test and publishable keys.
func (s *Summary) addBusiness(b *business, keys *[]*payd.APIKey) {
	at := b.b.CreatedAt
	sk, skRec := payd.NewAPIKey(b.b.ID, payd.KeySecret, payd.ModeLive, nil, at)
	tk, tkRec := payd.NewAPIKey(b.b.ID, payd.KeySecret, payd.ModeTest, nil, at)
	pk, pkRec := payd.NewAPIKey(b.b.ID, payd.KeyPublishable, payd.ModeLive, nil, at)
	*keys = append(*keys, skRec, tkRec, pkRec)
	s.Businesses = append(s.Businesses, BusinessSummary{ID: b.b.ID, Name: b.b.Name, Payments: b.payments,
		SecretKey: sk, TestSecretKey: tk, PublishableKey: pk})
	s.Links += len(b.links)
	if s.Targets.BusinessID == "" {
		s.Targets.BusinessID = b.b.ID
	}
}

// count records p; main marks the first business, order the payment whose
// order id is the target.
func (s *Summary) count(p *payd.Payment, main, order bool) {
	s.Payments++
	s.Statuses[p.Status]++
	if !main {
		return
	}
	t := &s.Targets
	if order {
		t.OrderID, t.OrderPaymentID = p.Metadata["order_id"], p.ID
	}
	if p.CustomerID != "" {
		if t.customers[p.CustomerID]++; t.customers[p.CustomerID] > t.TopCustomerPayments {
			t.TopCustomerID, t.TopCustomerPayments = p.CustomerID, t.customers[p.CustomerID]
		}
	}
	if p.LinkID != "" {
		if t.links[p.LinkID]++; t.links[p.LinkID] > t.TopLinkPayments {
			t.TopLinkID, t.TopLinkPayments = p.LinkID, t.links[p.LinkID]
		}
	}
}
