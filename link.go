package payd

import (
	"context"
	"errors"
	"strings"
	"time"

	"payd/money"
)

// LinkStatus is where a link is in its life (spec 3, Link). A deleted link
// is gone; an archived link takes no new payments; a disabled link was
// switched off by the operator and cannot be restored.
type LinkStatus string

// The link statuses.
const (
	LinkActive   LinkStatus = "active"
	LinkArchived LinkStatus = "archived"
	LinkDisabled LinkStatus = "disabled"
)

// Valid reports whether s is one of the link statuses.
func (s LinkStatus) Valid() bool { return s == LinkActive || s == LinkArchived || s == LinkDisabled }

// Limits of a link's text fields, in characters, and the length of its
// public code (docs/customers-and-links.md).
const (
	MaxLinkName        = 200
	MaxLinkDescription = 5000
	MaxURLLength       = 2048
	// LinkCodeLength base62 characters carry about 95 bits: nobody can
	// find links by guessing codes.
	LinkCodeLength = 16
)

// Link is a reusable payment link (spec 2.4), reached by its public Code.
type Link struct {
	ID          string
	BusinessID  string
	Code        string
	Name        string
	Description string
	Amount      int64
	Currency    money.Currency
	SuccessURL  string // "" when unset
	Status      LinkStatus
	ArchivedAt  *time.Time
	DisabledAt  *time.Time
	// DisabledReason is the operator's note from payd link disable; it is
	// never shown to the business or its customers.
	DisabledReason string
	// Stats uses Payments (payments_count) and VolumeUSD (volume).
	Stats     Stats
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LinkRules are what checking a link's fields needs beyond the fields.
type LinkRules struct {
	// Rates are the exchange rates in force, for the price range (spec
	// 2.11 rule 2); needed only when the price is set or changed.
	Rates *ExchangeRates
	// AllowHTTP lets success_url use plain http (development only);
	// otherwise it must be https.
	AllowHTTP bool
}

// LinkUpdate holds the fields a PATCH changes; nil leaves one as it is. An
// empty SuccessURL removes it.
type LinkUpdate struct {
	Name, Description *string
	Amount            *int64
	Currency          *money.Currency
	SuccessURL        *string
}

// NewLink validates a new active link with a fresh random code.
func NewLink(businessID string, f LinkUpdate, rules LinkRules, now time.Time) (*Link, error) {
	if f.Name == nil || strings.TrimSpace(*f.Name) == "" {
		return nil, FieldError("name", "name is required")
	}
	if f.Amount == nil {
		return nil, FieldError("amount", "amount is required, in minor units of currency")
	}
	if f.Currency == nil {
		return nil, FieldError("currency", "currency is required: one of USD, EUR, GBP, CAD, AUD")
	}
	l := &Link{ID: NewID(PrefixLink), BusinessID: businessID, Code: RandomString(LinkCodeLength),
		Status: LinkActive, CreatedAt: now}
	if err := l.apply(f, rules, now, true); err != nil {
		return nil, err
	}
	return l, nil
}

// Update validates u and writes it to l, all or nothing. The price range is
// checked again only when the amount or currency changes, so a link made
// under an older rate keeps working. A disabled link cannot change.
func (l *Link) Update(u LinkUpdate, rules LinkRules, now time.Time) error {
	if l.Status == LinkDisabled {
		return l.disabledError()
	}
	return l.apply(u, rules, now, l.PriceChange(u))
}

// PriceChange reports whether u would change l's price, so that a caller
// fetches exchange rates only when they are needed.
func (l *Link) PriceChange(u LinkUpdate) bool {
	return (u.Amount != nil && *u.Amount != l.Amount) || (u.Currency != nil && *u.Currency != l.Currency)
}

// apply writes u to a copy of l, checks it, and keeps it when it is valid.
func (l *Link) apply(u LinkUpdate, rules LinkRules, now time.Time, checkPrice bool) error {
	next := *l
	if u.Name != nil {
		next.Name = strings.TrimSpace(*u.Name)
		if next.Name == "" {
			return FieldError("name", "name cannot be empty")
		}
	}
	setString(&next.Description, u.Description)
	setString(&next.SuccessURL, u.SuccessURL)
	if u.Amount != nil {
		next.Amount = *u.Amount
	}
	if u.Currency != nil {
		next.Currency = *u.Currency
	}
	if err := next.check(rules, checkPrice); err != nil {
		return err
	}
	next.UpdatedAt = now
	*l = next
	return nil
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// check validates every field of l.
func (l *Link) check(rules LinkRules, checkPrice bool) error {
	if err := CheckText("name", l.Name, MaxLinkName, false); err != nil {
		return err
	}
	if err := CheckText("description", l.Description, MaxLinkDescription, true); err != nil {
		return err
	}
	if l.SuccessURL != "" {
		if err := CheckRedirectURL("success_url", l.SuccessURL, rules.AllowHTTP); err != nil {
			return err
		}
	}
	if !l.Currency.Valid() {
		return FieldError("currency", "currency %q is not one of USD, EUR, GBP, CAD, AUD", l.Currency)
	}
	if !checkPrice {
		return nil
	}
	return CheckPriceRange("amount", l.Amount, l.Currency, rules.Rates)
}

// CheckPriceRange checks a price against spec 2.11 rule 2 at the rates in
// force (x may be nil for USD): invalid_request on field when it is out of
// range, an internal error when there is no usable rate.
func CheckPriceRange(field string, amount int64, c money.Currency, x *ExchangeRates) error {
	if x == nil && NeedsRates(c, "") {
		return errors.New("payd: no exchange rates to check a price with")
	}
	err := money.CheckPrice(amount, c, x.USDPerUnit(c))
	if errors.Is(err, money.ErrPriceRange) {
		return FieldError(field, "%s", strings.TrimPrefix(err.Error(), money.ErrPriceRange.Error()+": "))
	}
	return err
}

// Archive stops a link from taking new payments. Archiving an archived link
// changes nothing; a disabled link cannot change (link_disabled).
func (l *Link) Archive(now time.Time) error {
	switch l.Status {
	case LinkDisabled:
		return l.disabledError()
	case LinkActive:
		l.Status, l.ArchivedAt, l.UpdatedAt = LinkArchived, &now, now
	}
	return nil
}

// Restore makes an archived link active again. Restoring an active link
// changes nothing; a disabled link cannot be restored (link_disabled).
func (l *Link) Restore(now time.Time) error {
	switch l.Status {
	case LinkDisabled:
		return l.disabledError()
	case LinkArchived:
		l.Status, l.ArchivedAt, l.UpdatedAt = LinkActive, nil, now
	}
	return nil
}

// CheckDelete says whether the link may be deleted: not when disabled
// (link_disabled) nor once it has payments (link_has_payments: archive it).
func (l *Link) CheckDelete() error {
	if l.Status == LinkDisabled {
		return l.disabledError()
	}
	if l.Stats.Payments > 0 {
		return Errorf(ErrLinkHasPayments, "link %s has %d payments and cannot be deleted; archive it instead", l.ID, l.Stats.Payments)
	}
	return nil
}

// CheckChange says whether the business may change the link at all: not
// once the operator disabled it (link_disabled).
func (l *Link) CheckChange() error {
	if l.Status == LinkDisabled {
		return l.disabledError()
	}
	return nil
}

func (l *Link) disabledError() error {
	return Errorf(ErrLinkDisabled, "link %s was disabled by the operator and cannot be changed or restored", l.ID)
}

// LinkFilter selects links for ListLinks. Zero fields select everything.
type LinkFilter struct {
	// Query matches links whose name, description or code contains it,
	// ignoring case.
	Query    string
	Status   LinkStatus
	Currency money.Currency
	// CreatedAfter is inclusive and CreatedBefore exclusive (spec 4.3).
	CreatedAfter, CreatedBefore *time.Time
	// AfterCreated and AfterID are the position of the last link of the
	// previous page (newest first); a zero AfterID starts at the newest.
	AfterCreated time.Time
	AfterID      string
	// Limit is how many links to return at most.
	Limit int
}

// LinkStore keeps links. Every method but LinkByCode and DisableLink is
// scoped by business.
type LinkStore interface {
	// CreateLink stores a new link; conflict if its code is taken.
	CreateLink(ctx context.Context, l *Link) error
	// LinkByID returns the business's link; not_found otherwise.
	LinkByID(ctx context.Context, businessID, id string) (*Link, error)
	// LinkByCode returns the link with the public code, whatever its
	// status; not_found otherwise. Its Stats are those folded so far
	// (store/rollup.go), without the latest payments' deltas: checkouts
	// and the public pages find a link by its code and never show them,
	// and summing a busy link's deltas at every checkout would cost more
	// the more it sells. Read LinkByID for exact stats.
	LinkByCode(ctx context.Context, code string) (*Link, error)
	// UpdateLink writes every mutable field (not the stats) and updated_at;
	// not_found, or link_disabled when the operator disabled the link since
	// it was read (a disabled link is never brought back).
	UpdateLink(ctx context.Context, l *Link) error
	// AddLinkStats adds d to the link's stats without locking its row
	// against other payments (an appended delta); not_found otherwise.
	AddLinkStats(ctx context.Context, businessID, id string, d StatsDelta) error
	// DeleteLink removes the business's link. It re-checks in the same
	// statement what CheckDelete decided, against concurrent payments and
	// the operator: not_found, link_has_payments or link_disabled.
	DeleteLink(ctx context.Context, businessID, id string) error
	// ListLinks returns up to f.Limit of the business's links that match f,
	// newest first (created_at, then id, descending).
	ListLinks(ctx context.Context, businessID string, f LinkFilter) ([]*Link, error)
	// DisableLink disables the link with this id, whatever its business
	// (the operator's payd link disable), and returns it; not_found
	// otherwise.
	DisableLink(ctx context.Context, id, reason string, now time.Time) (*Link, error)
}
