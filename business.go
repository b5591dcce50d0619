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
	// ReferralCode is the business's own code, which it shares to refer
	// others (NewReferralCode); ReferredBy is the id of the business whose
	// code referred this one, "" for none.
	ReferralCode string
	ReferredBy   string
	CreatedAt    time.Time
	UpdatedAt    time.Time
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
	return &Business{ID: NewID(PrefixBusiness), Name: name, Email: email, Live: live, ReferralCode: NewReferralCode(),
		CreatedAt: now, UpdatedAt: now}, nil
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
	// CreateBusiness stores a new business, giving it a referral code
	// when it has none; conflict when its id or referral code is taken.
	CreateBusiness(ctx context.Context, b *Business) error
	// BusinessByID returns the business; not_found otherwise.
	BusinessByID(ctx context.Context, id string) (*Business, error)
	// BusinessByReferralCode returns the business whose own referral code
	// is code (normalised); not_found otherwise.
	BusinessByReferralCode(ctx context.Context, code string) (*Business, error)
	// SetReferrer sets (referrerID) or clears ("") the business that
	// referred business id, in one statement: referral_locked when the
	// business has or had a wallet, not_found when there is no such
	// business.
	SetReferrer(ctx context.Context, id, referrerID string) error
	// SetBusinessSuspended suspends (at, non-nil) or reinstates (nil) a business; not_found otherwise.
	SetBusinessSuspended(ctx context.Context, id string, at *time.Time) error
}
