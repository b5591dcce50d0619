package payd

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Webhook deliveries (spec 2.10, 6.2, 6.3, docs/webhook-delivery.md): one
// row per event and endpoint, which is at once the delivery log the API
// shows and the retry queue the delivery loop claims from.

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// Delivery statuses. The spec shows succeeded and leaves the others to us;
// pending is "not tried yet", retrying "failed, another attempt is due".
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryRetrying  DeliveryStatus = "retrying"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

// DeliveryStatuses lists every status, for filters and the API document.
var DeliveryStatuses = []DeliveryStatus{DeliveryPending, DeliveryRetrying, DeliverySucceeded, DeliveryFailed}

// Attempt triggers (spec 2.10): automatic for the loop's attempts, manual
// for test sends and resends.
const (
	TriggerAutomatic = "automatic"
	TriggerManual    = "manual"
)

// DeliveryLease is how long a claimed delivery is held before another
// replica may attempt it: it outlasts the 15-second answer deadline, so a
// holder that is still sending is never doubled, and a crashed holder's
// claim lapses within a minute.
const DeliveryLease = time.Minute

// MaxDeliveriesPerMinute is the budget of test sends and resends together
// per business (spec 4.7, 6.3 rule 4, 8.1).
const MaxDeliveriesPerMinute = 10

// DropEndpointDisabled is the Error of a delivery dropped because its
// endpoint was off when it fell due (spec 6.3 rule 5).
const DropEndpointDisabled = "endpoint disabled"

// DeliveryAttempt is one POST to an endpoint.
type DeliveryAttempt struct {
	At time.Time `json:"at"`
	// ResponseStatus is the HTTP status answered, 0 without an answer.
	ResponseStatus int    `json:"response_status"`
	DurationMS     int64  `json:"duration_ms"`
	Trigger        string `json:"trigger"`
	// Error says why there was no answer (timeout, refused address).
	Error string `json:"error,omitempty"`
}

// OK reports whether the attempt succeeded: a 2xx answer (spec 6.3 rule 1).
func (a DeliveryAttempt) OK() bool {
	return a.Error == "" && a.ResponseStatus >= 200 && a.ResponseStatus <= 299
}

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	ID          string
	BusinessID  string
	WebhookID   string
	EventID     string
	EventType   string
	SubjectKind string
	SubjectID   string
	Status      DeliveryStatus
	Attempts    []DeliveryAttempt
	// NextAttemptAt is when the loop attempts it next; nil when no
	// automatic attempt is coming (done, failed for good, or a test send).
	NextAttemptAt *time.Time
	// LeaseUntil is when a claim on it lapses; nil when nobody holds it.
	LeaseUntil *time.Time
	// Version counts every write, so that a holder whose lease lapsed and
	// was taken over cannot overwrite the new holder's result.
	Version int
	// Payload is the event body (spec 6.1) as sent: compact JSON rendered
	// once, so that every attempt signs and sends the same bytes.
	Payload []byte
	// RequestHeaders are the headers of the last attempt (spec 2.10).
	RequestHeaders map[string]string
	// Error says why a delivery was dropped without an attempt.
	Error     string
	Test      bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Attempt is the number of attempts made (spec 2.10 attempt).
func (d *WebhookDelivery) Attempt() int { return len(d.Attempts) }

// Last returns the latest attempt, or nil before the first.
func (d *WebhookDelivery) Last() *DeliveryAttempt {
	if len(d.Attempts) == 0 {
		return nil
	}
	return &d.Attempts[len(d.Attempts)-1]
}

// automatic counts the loop's attempts, which alone walk the retry
// schedule: a resend in between does not shorten it.
func (d *WebhookDelivery) automatic() int {
	n := 0
	for _, a := range d.Attempts {
		if a.Trigger == TriggerAutomatic {
			n++
		}
	}
	return n
}

// RetryPolicy says when to try again after the n-th automatic attempt
// failed at last; ok is false when there is no further attempt.
// webhook.NextAttempt is the policy of spec 6.3.
type RetryPolicy func(n int, last time.Time) (next time.Time, ok bool)

// Record adds an attempt that ended at ended and moves the delivery on:
// succeeded on a 2xx; after an automatic failure, retrying at the
// policy's next time or failed for good; after a manual failure the
// automatic schedule stands (failed when there is none). A test delivery
// is never retried. The lease is released.
func (d *WebhookDelivery) Record(a DeliveryAttempt, headers map[string]string, ended time.Time, policy RetryPolicy) {
	d.Attempts = append(d.Attempts, a)
	d.RequestHeaders, d.LeaseUntil, d.UpdatedAt = headers, nil, ended
	switch {
	case a.OK():
		d.Status, d.NextAttemptAt = DeliverySucceeded, nil
	case d.Test:
		d.Status, d.NextAttemptAt = DeliveryFailed, nil
	case a.Trigger == TriggerAutomatic:
		d.NextAttemptAt = nil
		if next, ok := policy(d.automatic(), ended); ok {
			d.NextAttemptAt = &next
		}
		d.Status = statusFor(d.NextAttemptAt)
	default:
		d.Status = statusFor(d.NextAttemptAt)
	}
}

// statusFor is the status of a failed attempt: retrying while an
// automatic attempt is due, failed otherwise.
func statusFor(next *time.Time) DeliveryStatus {
	if next != nil {
		return DeliveryRetrying
	}
	return DeliveryFailed
}

// Drop ends a delivery without an attempt: its endpoint was off when it
// fell due, so the retry is discarded (spec 6.3 rule 5).
func (d *WebhookDelivery) Drop(reason string, now time.Time) {
	d.Status, d.NextAttemptAt, d.LeaseUntil, d.Error, d.UpdatedAt = DeliveryFailed, nil, nil, reason, now
}

// NewDeliveries makes the pending deliveries of ev, one per endpoint that
// existed when the event occurred, all due at now and sharing one payload.
func NewDeliveries(ev *Event, endpoints []*WebhookEndpoint, now time.Time) ([]*WebhookDelivery, error) {
	payload, err := EventPayload(ev, false)
	if err != nil {
		return nil, err
	}
	var out []*WebhookDelivery
	for _, e := range endpoints {
		if e.CreatedAt.After(ev.CreatedAt) {
			continue
		}
		due := now
		out = append(out, &WebhookDelivery{ID: NewID(PrefixDelivery), BusinessID: ev.BusinessID, WebhookID: e.ID,
			EventID: ev.ID, EventType: ev.Type, SubjectKind: ev.SubjectKind, SubjectID: ev.SubjectID,
			Status: DeliveryPending, NextAttemptAt: &due, Payload: payload, CreatedAt: now, UpdatedAt: now})
	}
	return out, nil
}

// NewTestDelivery makes the delivery of a test event of type typ to e
// (spec 4.7): a made-up subject whose id contains _test_, data holding
// only that id, test true, never queued for the loop.
func NewTestDelivery(e *WebhookEndpoint, typ string, actor Actor, now time.Time) (*WebhookDelivery, error) {
	kind, _, _ := strings.Cut(typ, ".")
	subject := SubjectPrefix(kind) + "test_" + RandomString(20)
	data, _ := json.Marshal(map[string]string{"id": subject}) // strings always marshal
	ev := &Event{ID: NewID(PrefixEvent), BusinessID: e.BusinessID, Type: typ, SubjectKind: kind, SubjectID: subject,
		Data: data, Actor: actor, CreatedAt: now}
	payload, err := EventPayload(ev, true)
	if err != nil {
		return nil, err
	}
	return &WebhookDelivery{ID: NewID(PrefixDelivery), BusinessID: e.BusinessID, WebhookID: e.ID, EventID: ev.ID,
		EventType: typ, SubjectKind: kind, SubjectID: subject, Status: DeliveryPending, Payload: payload,
		Test: true, CreatedAt: now, UpdatedAt: now}, nil
}

// SubjectPrefix is the id prefix of a subject kind, so that a test
// subject looks like the real thing (pmt_test_…).
func SubjectPrefix(kind string) string {
	switch kind {
	case "payment":
		return PrefixPayment
	case "checkout":
		return PrefixCheckout
	case "customer":
		return PrefixCustomer
	case "link":
		return PrefixLink
	}
	return kind + "_"
}

// TestEventType is the type of a test send to e when none is asked for:
// the endpoint's first type, or the catalogue's first for "*" (spec 4.7).
func TestEventType(e *WebhookEndpoint) string {
	if len(e.EventTypes) == 0 || e.EventTypes[0] == EventTypeAll {
		return EventCatalogue[0].Type
	}
	return e.EventTypes[0]
}

// DeliveryFilter selects a page of a business's deliveries, newest first.
// Nil fields do not filter.
type DeliveryFilter struct {
	WebhookID *string
	EventID   *string
	Status    *DeliveryStatus
	// AfterCreated and AfterID are the last delivery of the previous page.
	AfterCreated time.Time
	AfterID      string
	Limit        int
}

// DeliveryStore keeps webhook deliveries. Reads are scoped by business:
// another business's delivery is not_found.
type DeliveryStore interface {
	// UndispatchedEvents returns up to limit events not yet fanned out,
	// oldest first; inside a PostgreSQL transaction they are locked and
	// events another transaction holds are skipped.
	UndispatchedEvents(ctx context.Context, limit int) ([]*Event, error)
	// DispatchEvents marks up to limit events not yet fanned out as
	// dispatched at at, oldest first, and returns them; on PostgreSQL
	// events another transaction holds are skipped. Call it in the
	// transaction that stores their deliveries.
	DispatchEvents(ctx context.Context, limit int, at time.Time) ([]*Event, error)
	// CreateDeliveries stores new deliveries; conflict if an id is taken,
	// not_found when an endpoint no longer exists.
	CreateDeliveries(ctx context.Context, ds []*WebhookDelivery) error
	// ClaimDueDeliveries leases up to limit deliveries whose next attempt
	// is due at now and whose lease is free, until until, oldest due first.
	// Each comes back with the version its holder must save with.
	// Deliveries to the endpoints in skip (ids) are left alone.
	ClaimDueDeliveries(ctx context.Context, now, until time.Time, limit int, skip ...string) ([]*WebhookDelivery, error)
	// ClaimDelivery leases the business's delivery for a manual attempt;
	// not_found, or conflict while another holder's lease runs.
	ClaimDelivery(ctx context.Context, businessID, id string, now, until time.Time) (*WebhookDelivery, error)
	// SaveDelivery writes d's state if its stored version is still
	// d.Version (the claim's), then counts d.Version on; conflict when the
	// lease was lost to another holder, not_found when it was deleted.
	SaveDelivery(ctx context.Context, d *WebhookDelivery) error
	// SaveDeliveries is SaveDelivery for many deliveries at once, each
	// fenced by its own version; it returns the ids of those not saved
	// (lease lost, or deleted) instead of failing. Outside a transaction
	// the save may be committed asynchronously: a database crash can then
	// undo the last of them, and those deliveries, still leased, are
	// attempted again when their leases lapse. SaveDelivery is durable.
	SaveDeliveries(ctx context.Context, ds []*WebhookDelivery) (lost []string, err error)
	// DeliveryByID returns the business's delivery; not_found otherwise.
	DeliveryByID(ctx context.Context, businessID, id string) (*WebhookDelivery, error)
	// ListDeliveries returns up to f.Limit of the business's deliveries
	// matching f, newest first (created_at, then id, descending).
	ListDeliveries(ctx context.Context, businessID string, f DeliveryFilter) ([]*WebhookDelivery, error)
}

// DeliverySender makes one signed attempt of a delivery to an endpoint
// now; package webhook implements it, and the API uses it for test sends
// and resends.
type DeliverySender interface {
	// Attempt posts d's payload to e, signed with e's secrets at the time
	// of sending, and returns the attempt, the headers sent and when it
	// ended. Failures are attempts, never errors.
	Attempt(ctx context.Context, e *WebhookEndpoint, d *WebhookDelivery, trigger string) (DeliveryAttempt, map[string]string, time.Time)
	// Retry is the automatic retry schedule.
	Retry(n int, last time.Time) (time.Time, bool)
}

// payloadTimeLayout is the API's timestamp layout (api/wire.go), which the
// event body repeats so a receiver parses one format.
const payloadTimeLayout = "2006-01-02T15:04:05.000Z"

// eventBody is the event of spec 6.1 in its field order.
type eventBody struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Type       string          `json:"type"`
	Subject    eventSubject    `json:"subject"`
	Data       json.RawMessage `json:"data"`
	Actor      eventActor      `json:"actor"`
	Mode       string          `json:"mode"`
	APIVersion string          `json:"api_version"`
	Test       bool            `json:"test,omitempty"`
	CreatedAt  string          `json:"created_at"`
}

type eventSubject struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

type eventActor struct {
	Kind string  `json:"kind"`
	ID   *string `json:"id"`
	Name *string `json:"name"`
}

// EventPayload renders ev as the compact JSON body of spec 6.1, with
// test true for a test send. Mode is always live: test and live keys
// share one business's data.
func EventPayload(ev *Event, test bool) ([]byte, error) {
	return json.Marshal(eventBody{ID: ev.ID, Kind: "event", Type: ev.Type,
		Subject: eventSubject{ev.SubjectKind, ev.SubjectID}, Data: json.RawMessage(ev.Data),
		Actor: eventActor{Kind: ev.Actor.Kind, ID: nullable(ev.Actor.ID), Name: nullable(ev.Actor.Name)},
		Mode:  "live", APIVersion: "v1", Test: test, CreatedAt: ev.CreatedAt.UTC().Format(payloadTimeLayout)})
}

// nullable is nil for "", so the JSON shows null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
