package payd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// recordingQueries is the store at the seam SavePayment writes through: it
// records the writes, and any other call panics on the nil Queries.
type recordingQueries struct {
	Queries
	calls []string
	fail  string // the call that fails, if any
}

func (r *recordingQueries) record(call string) error {
	r.calls = append(r.calls, call)
	if strings.HasPrefix(call, r.fail+" ") || call == r.fail {
		return errors.New(call + " failed")
	}
	return nil
}

func (r *recordingQueries) CreatePayment(_ context.Context, p *Payment) error {
	return r.record("CreatePayment " + p.ID)
}

func (r *recordingQueries) UpdatePayment(_ context.Context, p *Payment) error {
	return r.record(fmt.Sprintf("UpdatePayment %s %d", p.ID, len(p.Events)))
}

func (r *recordingQueries) AddCustomerStats(_ context.Context, _, id string, d StatsDelta) error {
	return r.record(fmt.Sprintf("AddCustomerStats %s %d/%d", id, d.Payments, d.Succeeded))
}

func (r *recordingQueries) AddLinkStats(_ context.Context, _, id string, d StatsDelta) error {
	return r.record(fmt.Sprintf("AddLinkStats %s %d/%d", id, d.Payments, d.Succeeded))
}

func (r *recordingQueries) AppendEvents(_ context.Context, events []*Event) error {
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	return r.record("AppendEvents " + strings.Join(types, ","))
}

func (r *recordingQueries) CreateCheckout(_ context.Context, c *Checkout) error {
	return r.record("CreateCheckout " + c.ID)
}

// typesOnly renders an event of each type with no data.
type typesOnly struct{}

func (typesOnly) PaymentEvents(old, p *Payment, _ Actor) ([]*Event, error) {
	var out []*Event
	for _, t := range PaymentEventTypes(old, p) {
		out = append(out, &Event{Type: t})
	}
	return out, nil
}

func (typesOnly) CheckoutEvents(old CheckoutStatus, c *Checkout, _ Actor) ([]*Event, error) {
	if t := CheckoutEventType(old, c); t != "" {
		return []*Event{{Type: t}}, nil
	}
	return nil, nil
}

// TestSavePayment shows that the owner of a payment change writes the
// row with its history, the stats and the events together, whatever the
// change, and stops at the first failure.
func TestSavePayment(t *testing.T) {
	linked := func(in *PaymentParams) { in.CustomerID, in.LinkID = "cus_1", "lnk_1" }
	tests := []struct {
		name   string
		change func(t *testing.T) (old, p *Payment)
		more   []*Event
		fail   string
		want   []string
	}{
		{"Created", func(t *testing.T) (*Payment, *Payment) { return nil, mustPayment(t, linked) }, nil, "",
			[]string{"CreatePayment P", "AddCustomerStats cus_1 1/0", "AddLinkStats lnk_1 1/0", "AppendEvents payment.created"}},
		{"Canceled", func(t *testing.T) (*Payment, *Payment) {
			p := mustPayment(t)
			old := *p
			if _, err := p.Cancel(testNow); err != nil {
				t.Fatal(err)
			}
			return &old, p
		}, nil, "", []string{"UpdatePayment P 2", "AppendEvents payment.failed"}},
		{"Succeeded", func(t *testing.T) (*Payment, *Payment) {
			p := mustPayment(t, linked)
			old := *p
			p.Status = PaymentSucceeded
			p.addEvent(EventSucceeded, nil, testNow)
			return &old, p
		}, []*Event{{Type: EventCheckoutCompleted}}, "", []string{"UpdatePayment P 2", "AddCustomerStats cus_1 0/1",
			"AddLinkStats lnk_1 0/1", "AppendEvents payment.succeeded,checkout.completed"}},
		{"RowFails", func(t *testing.T) (*Payment, *Payment) { return nil, mustPayment(t, linked) }, nil, "CreatePayment",
			[]string{"CreatePayment P"}},
		{"StatsFail", func(t *testing.T) (*Payment, *Payment) { return nil, mustPayment(t, linked) }, nil, "AddCustomerStats",
			[]string{"CreatePayment P", "AddCustomerStats cus_1 1/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, p := tt.change(t)
			p.ID = "P"
			q := &recordingQueries{fail: tt.fail}
			err := SavePayment(context.Background(), q, typesOnly{}, old, p, SystemActor, tt.more...)
			if (err != nil) != (tt.fail != "") {
				t.Fatalf("err = %v, want a failure of %q", err, tt.fail)
			}
			if !slices.Equal(q.calls, tt.want) {
				t.Fatalf("calls = %q\nwant %q", q.calls, tt.want)
			}
		})
	}
}

// TestSaveOpenedCheckout shows that an opened checkout is stored with the
// payment's change, its stats and both subjects' events.
func TestSaveOpenedCheckout(t *testing.T) {
	p := mustPayment(t, func(in *PaymentParams) { in.CustomerID = "cus_1" })
	p.ID = "P"
	c := &Checkout{ID: "C", Status: CheckoutOpen}
	p.addEvent(EventMethodSelected, nil, testNow)
	q := &recordingQueries{}
	if err := SaveOpenedCheckout(context.Background(), q, typesOnly{}, nil, p, c, SystemActor); err != nil {
		t.Fatal(err)
	}
	want := []string{"CreatePayment P", "AddCustomerStats cus_1 1/0",
		"AppendEvents payment.created,payment.method_selected,checkout.created", "CreateCheckout C"}
	if !slices.Equal(q.calls, want) {
		t.Fatalf("calls = %q\nwant %q", q.calls, want)
	}
}

// TestStampAfter keeps a payment's events ahead of the events its save
// carries, which were rendered first, without reordering either group.
func TestStampAfter(t *testing.T) {
	at := func(us int) time.Time { return testNow.Add(time.Duration(us) * time.Microsecond) }
	events := []*Event{{Type: "payment.created", CreatedAt: at(10)}, {Type: "payment.method_selected", CreatedAt: at(11)}}
	more := []*Event{{Type: "checkout.created", CreatedAt: at(2)}, {Type: "checkout.x", CreatedAt: at(3)}}
	stampAfter(events, more)
	if !more[0].CreatedAt.Equal(at(12)) || !more[1].CreatedAt.Equal(at(13)) {
		t.Fatalf("more stamped at %s, %s; want just after %s", more[0].CreatedAt, more[1].CreatedAt, at(11))
	}
	later := []*Event{{CreatedAt: at(50)}}
	if stampAfter(events, later); !later[0].CreatedAt.Equal(at(50)) {
		t.Fatalf("an event already after the payment's moved to %s", later[0].CreatedAt)
	}
}
