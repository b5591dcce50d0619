package payd

import (
	"context"
	"time"
)

// ListStore lists and searches payments, customers and links, and sums
// payments for metrics. Every method is scoped by business.
type ListStore interface {
	// ListPayments returns at most f.Limit of the business's payments
	// matching f, in f.Sort order after f.After, with their events.
	ListPayments(ctx context.Context, f PaymentFilter) ([]*Payment, error)
	// PaymentStatusCounts counts the payments matching f per status,
	// ignoring f.Status, f.Sort, f.After and f.Limit. Every status is
	// present, with 0 when none match.
	PaymentStatusCounts(ctx context.Context, f PaymentFilter) (map[PaymentStatus]int64, error)
	// PaymentDays returns the business's daily payment totals for the UTC
	// days from through to (both dates, inclusive), one row per day,
	// status and rail that has payments.
	PaymentDays(ctx context.Context, businessID string, from, to time.Time) ([]PaymentDay, error)
	// FoldRollups moves the deltas payment changes append into the daily
	// totals and the customers' and links' stats, which read the same
	// before and after, and returns how many it moved; 0 means none were
	// left. SQLite moves at most max of each table (its one writer waits
	// meanwhile); PostgreSQL all it sees.
	FoldRollups(ctx context.Context, max int) (int, error)
}

// PaymentSort orders a payment list; ties are broken by id in the same
// direction, so that the order is total and stable across pages.
type PaymentSort string

// The payment sorts of spec 4.3.
const (
	SortCreatedDesc PaymentSort = "-created_at"
	SortCreatedAsc  PaymentSort = "created_at"
	SortAmountDesc  PaymentSort = "-amount"
	SortAmountAsc   PaymentSort = "amount"
)

// Descending reports whether the sort puts larger values first.
func (s PaymentSort) Descending() bool { return s == SortCreatedDesc || s == SortAmountDesc }

// ByAmount reports whether the sort is on amount rather than created_at.
func (s PaymentSort) ByAmount() bool { return s == SortAmountAsc || s == SortAmountDesc }

// PaymentFilter selects and orders a page of payments (spec 4.3). Nil and
// empty fields do not filter.
type PaymentFilter struct {
	BusinessID string
	// Query is the q search term.
	Query      string
	Status     *PaymentStatus
	Rail       *Rail
	Reference  *string
	CustomerID *string
	LinkID     *string
	// Metadata pairs must all match.
	Metadata []MetadataPair
	// CreatedAfter is inclusive, CreatedBefore exclusive.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Sort          PaymentSort
	// After is the position of the last payment of the previous page; nil
	// for the first page.
	After *PaymentPosition
	Limit int
}

// MetadataPair is one metadata[key]=value filter.
type MetadataPair struct {
	Key, Value string
}

// PaymentPosition is where a payment sits in a sorted list: its sort value
// (CreatedAt or Amount, as the sort says) and its id.
type PaymentPosition struct {
	CreatedAt time.Time
	Amount    int64
	ID        string
}

// PositionOf returns p's position under sort s.
func PositionOf(p *Payment, s PaymentSort) PaymentPosition {
	if s.ByAmount() {
		return PaymentPosition{Amount: p.Amount, ID: p.ID}
	}
	return PaymentPosition{CreatedAt: p.CreatedAt, ID: p.ID}
}

// PaymentDay is the total of the payments created on one UTC day with one
// status and rail. Rail is "" for payments whose customer has not chosen
// how to pay.
type PaymentDay struct {
	Date   time.Time
	Status PaymentStatus
	Rail   Rail
	// Payments counts the payments; AmountUSD and FeeUSD sum their
	// reporting amount and fee in US cents.
	Payments  int64
	AmountUSD int64
	FeeUSD    int64
}
