package payd

import (
	"context"
	"math/big"
	"strings"
	"time"

	"payd/money"
)

// Text limits of customers, in characters (docs/customers-and-links.md).
const (
	MaxCustomerName = 200
	MaxCustomerNote = 5000
)

// Customer is someone who pays a business (spec 2.3). Email is unique per
// business, compared without regard to case; it may be empty.
type Customer struct {
	ID         string
	BusinessID string
	Name       string
	Email      string
	Note       string
	Blocked    bool
	Stats      Stats
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// NewCustomer validates a customer's fields and returns it to store. The
// name is trimmed; an empty email means the customer has none.
func NewCustomer(businessID, name, email, note string, now time.Time) (*Customer, error) {
	c := &Customer{ID: NewID(PrefixCustomer), BusinessID: businessID, CreatedAt: now, UpdatedAt: now}
	err := c.Apply(CustomerUpdate{Name: &name, Email: &email, Note: &note}, now)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CustomerUpdate holds the fields a PATCH changes; nil leaves one as it is.
type CustomerUpdate struct {
	Name, Email, Note *string
	Blocked           *bool
}

// Apply validates u and writes it to c, all or nothing. An empty email
// removes the customer's email.
func (c *Customer) Apply(u CustomerUpdate, now time.Time) error {
	next := *c
	if u.Name != nil {
		next.Name = strings.TrimSpace(*u.Name)
		if err := CheckText("name", next.Name, MaxCustomerName, false); err != nil {
			return err
		}
	}
	if u.Email != nil {
		if *u.Email != "" {
			if err := CheckEmail("email", *u.Email); err != nil {
				return err
			}
		}
		next.Email = *u.Email
	}
	if u.Note != nil {
		if err := CheckText("note", *u.Note, MaxCustomerNote, true); err != nil {
			return err
		}
		next.Note = *u.Note
	}
	if u.Blocked != nil {
		next.Blocked = *u.Blocked
	}
	next.UpdatedAt = now
	*c = next
	return nil
}

// EmailKey is the form under which an email is unique per business: the
// whole address in lower case, since people type the same address in
// different cases and mail servers treat them as one in practice.
func EmailKey(email string) string { return strings.ToLower(email) }

// Stats are the running totals kept on a customer or a link as its payments
// change: each change adds its StatsDelta in the transaction that changes
// the payment, so the totals can never drift from the payments.
type Stats struct {
	// Payments counts every payment, whatever its status.
	Payments int64
	// Succeeded counts payments whose status is succeeded.
	Succeeded int64
	// VolumeUSD is the US-cent value (reporting.amount) of succeeded payments.
	VolumeUSD int64
	// Crypto and Card count succeeded payments by rail (preferred_rail).
	Crypto int64
	Card   int64
	// LastPaymentAt is when the newest payment was created; nil without one.
	LastPaymentAt *time.Time
}

// Incomplete counts payments that have not succeeded (incomplete_count).
func (s Stats) Incomplete() int64 { return s.Payments - s.Succeeded }

// AverageUSD is the average US-cent value of a succeeded payment, rounded
// to the nearest cent (half away from zero), and 0 without one.
func (s Stats) AverageUSD() int64 {
	if s.Succeeded == 0 {
		return 0
	}
	return money.Round(big.NewRat(s.VolumeUSD, s.Succeeded)).Int64()
}

// PreferredRail is the rail of most succeeded payments, crypto on a tie,
// and "" when no payment has succeeded.
func (s Stats) PreferredRail() Rail {
	switch {
	case s.Crypto == 0 && s.Card == 0:
		return ""
	case s.Card > s.Crypto:
		return RailCard
	}
	return RailCrypto
}

// StatsDelta is what one payment change adds to its customer's and link's
// Stats. LastPaymentAt, when set, moves the last payment time forward (never
// back).
type StatsDelta struct {
	Payments, Succeeded, VolumeUSD, Crypto, Card int64
	LastPaymentAt                                *time.Time
}

// Add adds d to s; the last payment time only moves forward.
func (s *Stats) Add(d StatsDelta) {
	s.Payments += d.Payments
	s.Succeeded += d.Succeeded
	s.VolumeUSD += d.VolumeUSD
	s.Crypto += d.Crypto
	s.Card += d.Card
	if d.LastPaymentAt != nil && (s.LastPaymentAt == nil || d.LastPaymentAt.After(*s.LastPaymentAt)) {
		at := *d.LastPaymentAt
		s.LastPaymentAt = &at
	}
}

// IsZero reports whether the delta changes nothing.
func (d StatsDelta) IsZero() bool {
	return d.Payments == 0 && d.Succeeded == 0 && d.VolumeUSD == 0 && d.Crypto == 0 && d.Card == 0 && d.LastPaymentAt == nil
}

// CustomerFilter selects customers for ListCustomers. Zero fields select
// everything.
type CustomerFilter struct {
	// Query matches customers whose name or email contains it, ignoring case.
	Query string
	// Email matches the customer with exactly this email, ignoring case.
	Email string
	// Blocked, when set, matches blocked or unblocked customers only.
	Blocked *bool
	// CreatedAfter is inclusive and CreatedBefore exclusive (spec 4.3).
	CreatedAfter, CreatedBefore *time.Time
	// AfterCreated and AfterID are the position of the last customer of the
	// previous page (newest first); a zero AfterID starts at the newest.
	AfterCreated time.Time
	AfterID      string
	// Limit is how many customers to return at most.
	Limit int
}

// CustomerStore keeps customers. Every method is scoped by business: another
// business's customer is not_found.
type CustomerStore interface {
	// CreateCustomer stores a new customer; customer_exists when another
	// customer of the business has the same email.
	CreateCustomer(ctx context.Context, c *Customer) error
	// CustomerByID returns the business's customer; not_found otherwise.
	// Inside a transaction it is the read of an edit: on PostgreSQL the
	// row stays locked until commit, so two edits take turns.
	CustomerByID(ctx context.Context, businessID, id string) (*Customer, error)
	// CustomerByEmail returns the business's customer with this email
	// (case-insensitive); not_found otherwise. It never locks the row, and
	// its Stats are those folded so far (store/rollup.go), without the
	// latest payments' deltas: a payment finds its customer by it and
	// needs no stats, and summing a busy customer's deltas at every
	// payment would cost more the more it pays. Read CustomerByID for
	// exact stats.
	CustomerByEmail(ctx context.Context, businessID, email string) (*Customer, error)
	// CustomersByID returns the business's customers among ids, keyed by id;
	// ids that match nothing are left out. It never locks the rows: a
	// payment reads its customer with it (or CustomerByEmail), so that one
	// customer's payments never take turns on its row.
	CustomersByID(ctx context.Context, businessID string, ids []string) (map[string]*Customer, error)
	// UpdateCustomer writes name, email, note, blocked and updated_at;
	// not_found or customer_exists.
	UpdateCustomer(ctx context.Context, c *Customer) error
	// AddCustomerStats adds d to the customer's stats without locking its
	// row (an appended delta), so concurrent payments neither lose an
	// update nor wait for each other; not_found otherwise.
	AddCustomerStats(ctx context.Context, businessID, id string, d StatsDelta) error
	// ListCustomers returns up to f.Limit of the business's customers that
	// match f, newest first (created_at, then id, descending).
	ListCustomers(ctx context.Context, businessID string, f CustomerFilter) ([]*Customer, error)
}
