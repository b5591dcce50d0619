package payd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// everyHour is a test retry policy: three automatic attempts, an hour apart.
func everyHour(n int, last time.Time) (time.Time, bool) {
	if n >= 3 {
		return time.Time{}, false
	}
	return last.Add(time.Hour), true
}

func TestDeliveryRecord(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	due := t0.Add(time.Minute)
	auto := func(status int) DeliveryAttempt {
		return DeliveryAttempt{At: t0, ResponseStatus: status, Trigger: TriggerAutomatic}
	}
	manual := func(status int) DeliveryAttempt {
		return DeliveryAttempt{At: t0, ResponseStatus: status, Trigger: TriggerManual}
	}
	tests := []struct {
		name     string
		before   []DeliveryAttempt
		next     *time.Time
		test     bool
		attempt  DeliveryAttempt
		want     DeliveryStatus
		wantNext *time.Time
	}{
		{"first attempt succeeds", nil, &due, false, auto(204), DeliverySucceeded, nil},
		{"first attempt fails", nil, &due, false, auto(500), DeliveryRetrying, ptr(t0.Add(time.Hour))},
		{"no answer is a failure", nil, &due, false, DeliveryAttempt{At: t0, Trigger: TriggerAutomatic, Error: "timeout"}, DeliveryRetrying, ptr(t0.Add(time.Hour))},
		{"a 3xx is a failure", nil, &due, false, auto(302), DeliveryRetrying, ptr(t0.Add(time.Hour))},
		{"last automatic attempt fails", []DeliveryAttempt{auto(500), auto(500)}, &due, false, auto(500), DeliveryFailed, nil},
		{"a resend does not use up the schedule", []DeliveryAttempt{auto(500), manual(500)}, &due, false, auto(500), DeliveryRetrying, ptr(t0.Add(time.Hour))},
		{"failed resend keeps the schedule", []DeliveryAttempt{auto(500)}, &due, false, manual(500), DeliveryRetrying, &due},
		{"failed resend of a failed delivery", []DeliveryAttempt{auto(500)}, nil, false, manual(503), DeliveryFailed, nil},
		{"successful resend ends the retries", []DeliveryAttempt{auto(500)}, &due, false, manual(200), DeliverySucceeded, nil},
		{"a test is never retried", nil, nil, true, manual(500), DeliveryFailed, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lease := t0.Add(time.Minute)
			d := &WebhookDelivery{Attempts: tc.before, NextAttemptAt: tc.next, Test: tc.test, LeaseUntil: &lease}
			d.Record(tc.attempt, map[string]string{"webhook-id": "evt_1"}, t0, everyHour)
			if d.Status != tc.want || !sameTime(d.NextAttemptAt, tc.wantNext) || d.LeaseUntil != nil ||
				d.Attempt() != len(tc.before)+1 || d.RequestHeaders["webhook-id"] != "evt_1" {
				t.Fatalf("status %s next %v lease %v attempts %d; want %s next %v", d.Status, d.NextAttemptAt,
					d.LeaseUntil, d.Attempt(), tc.want, tc.wantNext)
			}
		})
	}
}

func TestDeliveryDrop(t *testing.T) {
	next := time.Unix(100, 0)
	d := &WebhookDelivery{Status: DeliveryRetrying, NextAttemptAt: &next, LeaseUntil: &next}
	d.Drop(DropEndpointDisabled, next)
	if d.Status != DeliveryFailed || d.NextAttemptAt != nil || d.LeaseUntil != nil || d.Error != DropEndpointDisabled {
		t.Fatalf("dropped: %+v", d)
	}
}

func TestNewDeliveries(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := &Event{ID: "evt_1", BusinessID: "biz_1", Type: EventCustomerCreated, SubjectKind: "customer", SubjectID: "cst_1",
		Data: []byte(`{"id": "cst_1"}`), Actor: Actor{Kind: ActorAPIKey, ID: "key_1"}, CreatedAt: t0}
	old := &WebhookEndpoint{ID: "whk_old", CreatedAt: t0.Add(-time.Hour)}
	later := &WebhookEndpoint{ID: "whk_new", CreatedAt: t0.Add(time.Second)}
	ds, err := NewDeliveries(ev, []*WebhookEndpoint{old, later}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].WebhookID != old.ID || ds[0].Status != DeliveryPending || !ds[0].NextAttemptAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("deliveries %+v; an endpoint made after the event must not get it", ds)
	}
	want := `{"id":"evt_1","kind":"event","type":"customer.created","subject":{"kind":"customer","id":"cst_1"},` +
		`"data":{"id":"cst_1"},"actor":{"kind":"api_key","id":"key_1","name":null},"mode":"live","api_version":"v1",` +
		`"created_at":"2030-01-02T03:04:05.000Z"}`
	if string(ds[0].Payload) != want {
		t.Fatalf("payload\n%s\nwant\n%s", ds[0].Payload, want)
	}
}

func TestNewTestDelivery(t *testing.T) {
	e := &WebhookEndpoint{ID: "whk_1", BusinessID: "biz_1", EventTypes: []string{EventTypeAll}}
	d, err := NewTestDelivery(e, TestEventType(e), SystemActor, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Type    string
		Test    bool
		Subject struct{ Kind, ID string }
		Data    map[string]any
	}
	if err := json.Unmarshal(d.Payload, &body); err != nil {
		t.Fatal(err)
	}
	if !d.Test || d.NextAttemptAt != nil || body.Type != EventCatalogue[0].Type || !body.Test ||
		!strings.HasPrefix(body.Subject.ID, "pmt_test_") || len(body.Data) != 1 || body.Data["id"] != body.Subject.ID {
		t.Fatalf("test delivery %+v, body %s", d, d.Payload)
	}
}

func ptr(t time.Time) *time.Time { return &t }

func sameTime(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}
