package payd

import (
	"context"
	"strings"
	"time"
)

// Business is a merchant using payd. Everything else belongs to exactly one
// business, and no query crosses businesses.
type Business struct {
	ID    string
	Name  string
	Email string
	// Website and SupportEmail are shown to customers on public pages; ""
	// when unset.
	Website      string
	SupportEmail string
	// Live marks a business that takes real money: its test keys cannot
	// create payments, open checkouts or change what customers see or pay.
	Live bool
	// SuspendedAt, when set, stops new payments and checkouts.
	SuspendedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewBusiness validates name and email and returns a business to store.
func NewBusiness(name, email string, live bool, now time.Time) (*Business, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return nil, FieldError("name", "a business name of 1 to 200 characters is required")
	}
	if err := CheckEmail("email", email); err != nil {
		return nil, err
	}
	return &Business{ID: NewID(PrefixBusiness), Name: name, Email: email, Live: live, CreatedAt: now, UpdatedAt: now}, nil
}

// RefuseTestKey returns test_mode_unavailable when a test key acts on a live
// business for something that moves real money or changes what customers
// see or pay (spec 5.3).
func (b *Business) RefuseTestKey(k *APIKey) error {
	if b.Live && k != nil && k.Mode == ModeTest {
		return Errorf(ErrTestModeUnavailable, "test keys cannot do this on a live business; use a live key")
	}
	return nil
}

// BusinessStore keeps businesses.
type BusinessStore interface {
	// CreateBusiness stores a new business.
	CreateBusiness(ctx context.Context, b *Business) error
	// BusinessByID returns the business; not_found otherwise.
	BusinessByID(ctx context.Context, id string) (*Business, error)
	// SetBusinessSuspended suspends (at, non-nil) or reinstates (nil) a business; not_found otherwise.
	SetBusinessSuspended(ctx context.Context, id string, at *time.Time) error
}
