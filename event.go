package payd

import (
	"context"
	"time"
)

// Actor kinds: who caused an event (spec 6.1).
const (
	ActorUser     = "user"
	ActorAPIKey   = "api_key"
	ActorCustomer = "customer"
	ActorSystem   = "system"
)

// Actor is who caused an event. ID and Name are "" when there is none
// (the system; a customer who gave no email).
type Actor struct {
	Kind string
	ID   string
	Name string
}

// SystemActor is payd itself: the watcher, the expirer, the operator's
// command line.
var SystemActor = Actor{Kind: ActorSystem}

// Event is one change a business is told about (spec 6.1). It is stored
// in the transaction of the change that causes it (the outbox), so a
// committed change always has its event and a rolled-back one never does;
// deliveries to the business's endpoints are made from the stored events.
type Event struct {
	ID         string
	BusinessID string
	Type       string
	// SubjectKind and SubjectID name the object concerned.
	SubjectKind string
	SubjectID   string
	// Data is the subject as its own endpoint returned it when the event
	// occurred, already encoded as JSON.
	Data      []byte
	Actor     Actor
	CreatedAt time.Time
}

// EventStore keeps events.
type EventStore interface {
	// AppendEvents stores events in the caller's transaction; conflict if
	// an id is taken.
	AppendEvents(ctx context.Context, events []*Event) error
	// EventByID returns the business's event; not_found otherwise.
	EventByID(ctx context.Context, businessID, id string) (*Event, error)
	// EventsOf returns the events of a subject, oldest first.
	EventsOf(ctx context.Context, businessID, subjectID string) ([]*Event, error)
}

// EventRecorder renders the events of a change, with its subject as the
// API shows it, for the change's own transaction to store (SavePayment
// stores a payment's). The API server implements it (it owns the wire
// shapes); the watcher and the expirer use it for the changes they make.
type EventRecorder interface {
	// PaymentEvents returns, unstored, the events of a change from old to p
	// (old is nil for a new payment): see PaymentEventTypes.
	PaymentEvents(old, p *Payment, actor Actor) ([]*Event, error)
	// CheckoutEvents returns, unstored, the events of a checkout that was in
	// status old ("" for a new checkout) and is now c: see CheckoutEventType.
	CheckoutEvents(old CheckoutStatus, c *Checkout, actor Actor) ([]*Event, error)
}

// historyEventTypes maps entries of a payment's history to the event
// types they announce. An `expired` entry is left out: an underpaid
// payment whose quote ended records one while its status stays underpaid,
// so payment.expired follows the status instead.
var historyEventTypes = map[string]string{
	EventCreated:            EventPaymentCreated,
	EventMethodSelected:     EventPaymentMethodSelected,
	EventDetected:           EventPaymentProcessing,
	EventSucceeded:          EventPaymentSucceeded,
	EventUnderpaid:          EventPaymentUnderpaid,
	EventNeedsReview:        EventPaymentNeedsReview,
	EventCanceled:           EventPaymentFailed,
	EventFailed:             EventPaymentFailed,
	EventRemainderRequested: EventPaymentRemainderRequested,
	EventFundsReceived:      EventPaymentFundsReceived,
	EventCardUpdated:        EventPaymentCardUpdated,
}

// PaymentEventTypes lists the event types of a change from old to p (old
// nil for a new payment), in the order they happened: one per history
// entry that announces something, and payment.expired when p expired.
// Every status change has its event. An entry marked Unannounced (a
// transfer detected after its checkout stopped taking funds) sends none:
// nothing is being paid, and its arrival is told once it confirms
// (payment.needs_review, or payment.funds_received).
func PaymentEventTypes(old, p *Payment) []string {
	from := 0
	if old != nil {
		from = len(old.Events)
	}
	var out []string
	for _, e := range p.Events[min(from, len(p.Events)):] {
		if e.Unannounced {
			continue
		}
		if t, ok := historyEventTypes[e.Type]; ok {
			out = append(out, t)
		}
	}
	if p.Status == PaymentExpired && (old == nil || old.Status != PaymentExpired) {
		out = append(out, EventPaymentExpired)
	}
	return out
}

// CheckoutEventType is the event type of a checkout that was in status
// old ("" when new) and is now in c.Status, or "" when nothing is to be
// told (the statuses in between, such as processing, are told through
// the payment).
func CheckoutEventType(old CheckoutStatus, c *Checkout) string {
	if old == c.Status {
		return ""
	}
	switch c.Status {
	case CheckoutOpen:
		if old == "" {
			return EventCheckoutCreated
		}
	case CheckoutCompleted:
		return EventCheckoutCompleted
	case CheckoutExpired:
		return EventCheckoutExpired
	case CheckoutCanceled:
		return EventCheckoutCanceled
	case CheckoutFailed:
		return EventCheckoutFailed
	}
	return ""
}
