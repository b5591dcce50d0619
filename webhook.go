package payd

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Webhook endpoints (spec 6, docs/webhooks.md): where a business receives
// signed events, and the catalogue of event types it can subscribe to.

// Event types an endpoint can subscribe to (spec 6.1 leaves the list to
// us). Every change of a payment's status has its own type, so that a
// receiver never has to diff payment objects to learn what happened.
const (
	EventPaymentCreated            = "payment.created"
	EventPaymentMethodSelected     = "payment.method_selected"
	EventPaymentProcessing         = "payment.processing"
	EventPaymentSucceeded          = "payment.succeeded"
	EventPaymentUnderpaid          = "payment.underpaid"
	EventPaymentNeedsReview        = "payment.needs_review"
	EventPaymentExpired            = "payment.expired"
	EventPaymentFailed             = "payment.failed"
	EventPaymentRemainderRequested = "payment.remainder_requested"
	EventPaymentFundsReceived      = "payment.funds_received"
	EventPaymentCardUpdated        = "payment.card_updated"
	EventCheckoutCreated           = "checkout.created"
	EventCheckoutCompleted         = "checkout.completed"
	EventCheckoutExpired           = "checkout.expired"
	EventCheckoutCanceled          = "checkout.canceled"
	EventCheckoutFailed            = "checkout.failed"
	EventCustomerCreated           = "customer.created"
	EventCustomerUpdated           = "customer.updated"
	EventLinkCreated               = "link.created"
	EventLinkUpdated               = "link.updated"
	EventLinkArchived              = "link.archived"
	EventLinkRestored              = "link.restored"
	EventLinkDeleted               = "link.deleted"
	EventLinkDisabled              = "link.disabled"
	// EventTypeAll subscribes an endpoint to every type, including types
	// added in later versions; it must be the endpoint's only entry.
	EventTypeAll = "*"
)

// EventTypeInfo is one entry of the event catalogue.
type EventTypeInfo struct {
	Type string
	// Description says in one line when an event of this type is sent.
	Description string
}

// EventCatalogue lists every event type in a stable order, with what
// triggers it. The OpenAPI document's WebhookEventType schema and
// docs/webhooks.md repeat it; a test keeps the three in step.
var EventCatalogue = []EventTypeInfo{
	{EventPaymentCreated, "A payment was created (status pending), by the API or by a checkout of a link."},
	{EventPaymentMethodSelected, "The customer chose how to pay: a rail, and for crypto a coin and network."},
	{EventPaymentProcessing, "A transfer to the payment's deposit was seen on chain and is waiting for confirmations."},
	{EventPaymentSucceeded, "The payment succeeded: it was paid in full, or the business accepted it."},
	{EventPaymentUnderpaid, "Less than the quoted amount arrived and confirmed (status underpaid)."},
	{EventPaymentNeedsReview, "The payment needs the business's decision: funds arrived late or in the wrong coin, or the customer claimed a transaction."},
	{EventPaymentExpired, "The payment expired before it was paid."},
	{EventPaymentFailed, "The payment failed; failure_code says why (canceled when the business canceled it)."},
	{EventPaymentRemainderRequested, "A checkout was opened to collect the rest of an underpaid payment."},
	{EventPaymentFundsReceived, "Funds that pay nothing (sent late, or in another coin) reached the wallet for a payment that had succeeded or was in review already; its status stays."},
	{EventPaymentCardUpdated, "A card attempt changed status (awaiting_payment, challenge, processing, delivered, declined); the payment's history entry card_updated has the details."},
	{EventCheckoutCreated, "A customer opened a checkout (a quote for one coin on one network, or a card attempt)."},
	{EventCheckoutCompleted, "A checkout was paid, or its payment was accepted."},
	{EventCheckoutExpired, "A checkout's quote ended before it was paid."},
	{EventCheckoutCanceled, "A checkout was canceled by the customer, the business or a replacement checkout."},
	{EventCheckoutFailed, "A card checkout failed: its last attempt was declined and no other is left."},
	{EventCustomerCreated, "A customer was created, by the API or at checkout."},
	{EventCustomerUpdated, "A customer's name, email, note or blocked flag changed."},
	{EventLinkCreated, "A payment link was created."},
	{EventLinkUpdated, "A payment link's name, description, price or success URL changed."},
	{EventLinkArchived, "A payment link was archived and takes no new payments."},
	{EventLinkRestored, "An archived payment link was made active again."},
	{EventLinkDeleted, "A payment link was deleted."},
	{EventLinkDisabled, "The operator disabled a payment link; it cannot be restored."},
}

// KnownEventType reports whether t is in the catalogue ("*" is not).
func KnownEventType(t string) bool {
	return slices.ContainsFunc(EventCatalogue, func(i EventTypeInfo) bool { return i.Type == t })
}

// PaymentStatusEventType is the event type sent when a payment enters
// status s; pending is only ever entered by being created.
func PaymentStatusEventType(s PaymentStatus) string {
	if s == PaymentPending {
		return EventPaymentCreated
	}
	return "payment." + string(s)
}

// Limits and lifetimes of webhook endpoints (spec 8.1, docs/webhooks.md).
const (
	MaxWebhookDescription = 500
	// WebhookSecretPrefix starts every signing secret (spec 6.2); the rest
	// is the standard base64 of WebhookSecretBytes random bytes.
	WebhookSecretPrefix = "whsec_"
	WebhookSecretBytes  = 32
	// WebhookSecretOverlap is how long the old secret keeps signing beside
	// the new one after a rotation, so receivers can switch without a gap.
	WebhookSecretOverlap = 24 * time.Hour
)

// WebhookEndpointUpdate holds the fields a create or PATCH sets; nil leaves
// one as it is.
type WebhookEndpointUpdate struct {
	URL         *string
	EventTypes  *[]string
	Description *string
	Enabled     *bool
}

// WebhookEndpoint is an address that receives a business's events.
// The secrets are kept as they are, not hashed: payd needs them to sign
// every delivery (HMAC-SHA256), where an API key only has to be recognised.
type WebhookEndpoint struct {
	ID          string
	BusinessID  string
	URL         string
	EventTypes  []string // in the order given; ["*"] for every type
	Description string
	// Enabled is false while the business has turned the endpoint off:
	// no new deliveries are made for it.
	Enabled bool
	// Secret is the current signing secret.
	Secret string
	// PreviousSecret signs beside Secret until PreviousSecretExpiresAt;
	// "" and nil when the endpoint was never rotated.
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// NewWebhookEndpoint validates a new, enabled endpoint with a fresh secret.
// url and event_types are required. dev (payd serve --dev) allows plain
// http and local addresses, which production refuses.
func NewWebhookEndpoint(businessID string, f WebhookEndpointUpdate, dev bool, now time.Time) (*WebhookEndpoint, error) {
	if f.URL == nil || *f.URL == "" {
		return nil, FieldError("url", "url is required: the https address that receives the events")
	}
	if f.EventTypes == nil {
		return nil, FieldError("event_types", `event_types is required: a list of event types, or ["*"] for all`)
	}
	e := &WebhookEndpoint{ID: NewID(PrefixWebhook), BusinessID: businessID, Enabled: true,
		Secret: NewWebhookSecret(), CreatedAt: now}
	if err := e.Update(f, dev, now); err != nil {
		return nil, err
	}
	return e, nil
}

// Update validates u and writes it to e, all or nothing.
func (e *WebhookEndpoint) Update(u WebhookEndpointUpdate, dev bool, now time.Time) error {
	next := *e
	if u.URL != nil {
		if err := CheckWebhookURL(*u.URL, dev); err != nil {
			return err
		}
		next.URL = *u.URL
	}
	if u.EventTypes != nil {
		if err := CheckEventTypes(*u.EventTypes); err != nil {
			return err
		}
		next.EventTypes = slices.Clone(*u.EventTypes)
	}
	if u.Description != nil {
		if err := CheckText("description", *u.Description, MaxWebhookDescription, true); err != nil {
			return err
		}
		next.Description = *u.Description
	}
	if u.Enabled != nil {
		next.Enabled = *u.Enabled
	}
	next.UpdatedAt = now
	*e = next
	return nil
}

// Receives reports whether the endpoint is subscribed to event type t.
func (e *WebhookEndpoint) Receives(t string) bool {
	return slices.Contains(e.EventTypes, EventTypeAll) || slices.Contains(e.EventTypes, t)
}

// RotateSecret gives the endpoint a new secret and returns it. The current
// one keeps signing for WebhookSecretOverlap; a secret older than that
// stops at once, so at most two ever sign.
func (e *WebhookEndpoint) RotateSecret(now time.Time) string {
	until := now.Add(WebhookSecretOverlap)
	e.PreviousSecret, e.PreviousSecretExpiresAt = e.Secret, &until
	e.Secret, e.UpdatedAt = NewWebhookSecret(), now
	return e.Secret
}

// Secrets returns the secrets that sign a delivery made at now, the
// current one first (spec 6.2: one v1 signature each).
func (e *WebhookEndpoint) Secrets(now time.Time) []string {
	out := []string{e.Secret}
	if e.PreviousSecretOverlap(now) != nil {
		out = append(out, e.PreviousSecret)
	}
	return out
}

// PreviousSecretOverlap returns when the previous secret stops signing,
// or nil when at now it no longer does (or there is none).
func (e *WebhookEndpoint) PreviousSecretOverlap(now time.Time) *time.Time {
	exp := e.PreviousSecretExpiresAt
	if e.PreviousSecret == "" || exp == nil || !now.Before(*exp) {
		return nil
	}
	return exp
}

// NewWebhookSecret returns a fresh signing secret: whsec_ and the standard
// base64 of 32 random bytes, the form Standard Webhooks libraries read.
func NewWebhookSecret() string {
	b := make([]byte, WebhookSecretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+).
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// CheckEventTypes checks an endpoint's subscription: one or more distinct
// types of the catalogue, or "*" alone. Errors name field event_types.
func CheckEventTypes(types []string) error {
	if len(types) == 0 {
		return FieldError("event_types", `event_types needs at least one event type, or ["*"] for all`)
	}
	for i, t := range types {
		switch {
		case t == EventTypeAll && len(types) > 1:
			return FieldError("event_types", `"*" already means every event type; send it alone`)
		case t != EventTypeAll && !KnownEventType(t):
			return FieldError("event_types", "%.100q is not an event type; the API document lists them (WebhookEventType)", t)
		case slices.Contains(types[:i], t):
			return FieldError("event_types", "event_types names %q twice", t)
		}
	}
	return nil
}

// CheckWebhookURL checks where deliveries go: an absolute https URL with a
// host, no user name or password, no fragment and a port (if any) from 1
// to 65535, at most MaxURLLength characters. Outside dev it must also not
// name a local host by its spelling, nor an address the table of
// ForbiddenAddress refuses; package webhook checks the address it actually
// connects to against the same table, since a public name can still
// resolve away from it. Errors name field url.
func CheckWebhookURL(s string, dev bool) error {
	if len(s) > MaxURLLength {
		return FieldError("url", "url is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" || u.Opaque != "" ||
		strings.ContainsAny(s, " \t\r\n"):
		return FieldError("url", "url must be an absolute URL such as https://example.com/webhooks")
	case u.User != nil:
		return FieldError("url", "url may not contain a user name or password")
	case strings.Contains(s, "#"):
		return FieldError("url", "url may not contain a fragment (#...); receivers never see it")
	case !validPort(u.Port()):
		return FieldError("url", "url's port must be a number from 1 to 65535")
	case u.Scheme == "http" && dev:
		return nil
	case u.Scheme != "https":
		return FieldError("url", "url must use https")
	case dev:
		return nil
	}
	return checkPublicHost(u.Hostname())
}

// validPort reports whether a URL's port is absent (the scheme's default)
// or a TCP port a receiver can listen on: 1 to 65535. url.Parse checks
// only that it is digits, so :0 and :99999 get this far.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0
}

// localSuffixes are name suffixes that resolve only inside a network.
var localSuffixes = []string{".localhost", ".local", ".internal", ".home.arpa"}

// checkPublicHost refuses a host that by its spelling is not public: an
// IP literal the address table refuses, localhost, a one-label name
// (a search domain makes it local), a name ending in a number (which
// resolvers read as an IPv4 address, such as 127.1 or 0x7f000001), or a
// name under a local-only suffix.
func checkPublicHost(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if reason := ForbiddenAddress(ip); reason != "" {
			return FieldError("url", "url must reach a public address; %s is %s", host, reason)
		}
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	local := h == "localhost" || slices.ContainsFunc(localSuffixes, func(s string) bool { return strings.HasSuffix(h, s) })
	switch {
	case local:
		return FieldError("url", "url must reach a public host; %s is local", host)
	case !strings.Contains(h, ".") || endsInNumber(h):
		return FieldError("url", "url's host must be a public domain name such as example.com or an IP address")
	}
	return nil
}

// endsInNumber reports whether the last label of host is a number (decimal
// or 0x hex), which makes resolvers parse the whole name as an address.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// Why a delivery attempt failed, as the delivery log shows it
// (attempts[].error, docs/webhook-delivery.md): a fixed vocabulary, so
// that the log tells a business what went wrong without showing payd's
// network (resolver addresses, internal hosts), which raw Go errors carry.
// Package webhook maps every failure onto it and logs the detail. An
// answer other than 2xx is "http " and its status (AttemptHTTPStatus).
const (
	AttemptTimeout           = "timeout"
	AttemptConnectionRefused = "connection refused"
	AttemptConnectionClosed  = "connection closed"
	AttemptUnreachable       = "network unreachable"
	AttemptForbiddenAddress  = "forbidden address"
	AttemptDNSFailure        = "dns failure"
	AttemptTLSError          = "tls error"
	AttemptInvalidURL        = "invalid url"
	AttemptConnectionError   = "connection error"
	AttemptInternalError     = "internal error"
)

// AttemptErrors lists the vocabulary but for the "http NNN" family, in
// the order the documentation gives it.
var AttemptErrors = []string{AttemptTimeout, AttemptConnectionRefused, AttemptConnectionClosed, AttemptUnreachable,
	AttemptForbiddenAddress, AttemptDNSFailure, AttemptTLSError, AttemptInvalidURL, AttemptConnectionError,
	AttemptInternalError}

// AttemptHTTPStatus is the error of an attempt answered with status, not
// 2xx: "http 500", "http 302".
func AttemptHTTPStatus(status int) string { return "http " + strconv.Itoa(status) }

// AttemptErrorShown is the error an attempt shows for the stored text s:
// s itself when it belongs to the vocabulary, else AttemptConnectionError.
// Attempts recorded before the vocabulary existed kept the raw Go error,
// which may name internal hosts; they are never shown as they are.
func AttemptErrorShown(s string) string {
	if s == "" || slices.Contains(AttemptErrors, s) {
		return s
	}
	if code, ok := strings.CutPrefix(s, "http "); ok {
		if n, err := strconv.Atoi(code); err == nil && n >= 100 && n <= 999 && AttemptHTTPStatus(n) == s {
			return s
		}
	}
	return AttemptConnectionError
}

// WebhookEndpointFilter pages through a business's endpoints, newest first.
type WebhookEndpointFilter struct {
	// AfterCreated and AfterID are the position of the last endpoint of the
	// previous page; a zero AfterID starts at the newest.
	AfterCreated time.Time
	AfterID      string
	// Limit is how many endpoints to return at most.
	Limit int
}

// WebhookStore keeps webhook endpoints. Every method is scoped by business:
// another business's endpoint is not_found.
type WebhookStore interface {
	// CreateWebhookEndpoint stores a new endpoint with its event types;
	// conflict if its id is taken.
	CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error
	// WebhookEndpointByID returns the business's endpoint; not_found otherwise.
	WebhookEndpointByID(ctx context.Context, businessID, id string) (*WebhookEndpoint, error)
	// ListWebhookEndpoints returns up to f.Limit of the business's
	// endpoints, newest first (created_at, then id, descending).
	ListWebhookEndpoints(ctx context.Context, businessID string, f WebhookEndpointFilter) ([]*WebhookEndpoint, error)
	// UpdateWebhookEndpoint writes every mutable field (url, event types,
	// description, enabled, secrets, updated_at); not_found otherwise.
	UpdateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error
	// DeleteWebhookEndpoint removes the business's endpoint and everything
	// queued for it; not_found otherwise, so a second delete is not_found.
	DeleteWebhookEndpoint(ctx context.Context, businessID, id string) error
	// EndpointsFor returns the business's enabled endpoints subscribed to
	// eventType (by name or by "*"), oldest first: the fan-out of one event.
	EndpointsFor(ctx context.Context, businessID, eventType string) ([]*WebhookEndpoint, error)
	// EnabledEndpoints returns the enabled endpoints of the businesses,
	// oldest first: the fan-out of a page of events in one read.
	EnabledEndpoints(ctx context.Context, businessIDs []string) ([]*WebhookEndpoint, error)
}
