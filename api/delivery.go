package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"payd"
)

// Webhook deliveries (spec 2.10, 4.7, 6.3, docs/webhook-delivery.md): the
// delivery log, resends and test sends. The loop that makes automatic
// attempts is package webhook's Deliverer, which also makes the manual
// attempts here through Options.Deliveries.

// deliveryListName binds cursors to GET /webhook-deliveries.
const deliveryListName = "webhook-deliveries"

// deliveryListParams are the query parameters GET /webhook-deliveries takes.
var deliveryListParams = []string{"webhook_id", "event_id", "status", "limit", "cursor"}

// webhookDelivery is a delivery on the wire (spec 2.10).
type webhookDelivery struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	WebhookID string     `json:"webhook_id"`
	EventID   string     `json:"event_id"`
	EventType string     `json:"event_type"`
	Subject   subjectRef `json:"subject"`
	Status    string     `json:"status"`
	// ResponseStatus and DurationMS are the last attempt's; null before
	// the first, and ResponseStatus also when there was no answer.
	ResponseStatus *int              `json:"response_status"`
	DurationMS     *int64            `json:"duration_ms"`
	Attempt        int               `json:"attempt"`
	Attempts       []deliveryAttempt `json:"attempts"`
	NextRetryAt    *Time             `json:"next_retry_at"`
	// RequestHeaders are the last attempt's; null before the first.
	RequestHeaders map[string]string `json:"request_headers"`
	Payload        json.RawMessage   `json:"payload"`
	Test           bool              `json:"test"`
	CreatedAt      Time              `json:"created_at"`
}

// subjectRef names an event's subject.
type subjectRef struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// deliveryAttempt is one attempt on the wire.
type deliveryAttempt struct {
	At             Time    `json:"at"`
	ResponseStatus *int    `json:"response_status"`
	DurationMS     int64   `json:"duration_ms"`
	Trigger        string  `json:"trigger"`
	Error          *string `json:"error"`
}

// toDelivery renders a delivery as key k may see it (see payloadFor).
func toDelivery(d *payd.WebhookDelivery, k *payd.APIKey) (webhookDelivery, error) {
	payload, err := payloadFor(d, k)
	if err != nil {
		return webhookDelivery{}, err
	}
	out := webhookDelivery{ID: d.ID, Kind: "webhook_delivery", WebhookID: d.WebhookID, EventID: d.EventID,
		EventType: d.EventType, Subject: subjectRef{d.SubjectKind, d.SubjectID}, Status: string(d.Status),
		Attempt: d.Attempt(), Attempts: make([]deliveryAttempt, len(d.Attempts)), NextRetryAt: timePtr(d.NextAttemptAt),
		RequestHeaders: d.RequestHeaders, Payload: payload, Test: d.Test, CreatedAt: Time(d.CreatedAt)}
	for i, a := range d.Attempts {
		out.Attempts[i] = deliveryAttempt{At: Time(a.At), ResponseStatus: statusPtr(a.ResponseStatus),
			DurationMS: a.DurationMS, Trigger: a.Trigger, Error: stringPtr(payd.AttemptErrorShown(a.Error))}
	}
	if last := d.Last(); last != nil {
		ms := last.DurationMS
		out.ResponseStatus, out.DurationMS = statusPtr(last.ResponseStatus), &ms
	}
	return out, nil
}

// subjectAreas is the area whose data an event's subject is: what a
// restricted key must read to see a delivery's payload.data. A checkout
// belongs to its payment.
var subjectAreas = map[string]payd.Area{
	"payment": payd.AreaPayments, "checkout": payd.AreaPayments,
	"customer": payd.AreaCustomers, "link": payd.AreaLinks,
}

// payloadFor is d's payload as k may see it. webhooks:read alone must not
// read customers (or payments, or links) through the events sent about
// them, so a restricted key that cannot read the subject's area sees the
// payload with data reduced to the subject's id, the shape of a test
// event, and a customer actor's name (their email) withheld. A test
// payload holds nothing more than that and is shown as it is. A subject
// kind missing from subjectAreas is withheld from every restricted key.
func payloadFor(d *payd.WebhookDelivery, k *payd.APIKey) (json.RawMessage, error) {
	if d.Test || k.Can(subjectAreas[d.SubjectKind], payd.AccessRead) {
		return d.Payload, nil
	}
	var ev withheldEvent
	if err := json.Unmarshal(d.Payload, &ev); err != nil {
		return nil, err
	}
	ev.Data, _ = json.Marshal(map[string]string{"id": d.SubjectID}) // strings always marshal
	if ev.Actor.Kind == payd.ActorCustomer && !k.Can(payd.AreaCustomers, payd.AccessRead) {
		ev.Actor.Name = nil
	}
	return json.Marshal(ev)
}

// withheldEvent is an event body (spec 6.1) in its field order, parsed
// only as far as payloadFor needs to reduce it.
type withheldEvent struct {
	ID      json.RawMessage `json:"id"`
	Kind    json.RawMessage `json:"kind"`
	Type    json.RawMessage `json:"type"`
	Subject json.RawMessage `json:"subject"`
	Data    json.RawMessage `json:"data"`
	Actor   struct {
		Kind string          `json:"kind"`
		ID   json.RawMessage `json:"id"`
		Name json.RawMessage `json:"name"`
	} `json:"actor"`
	Mode       json.RawMessage `json:"mode"`
	APIVersion json.RawMessage `json:"api_version"`
	Test       json.RawMessage `json:"test,omitempty"`
	CreatedAt  json.RawMessage `json:"created_at"`
}

// statusPtr is nil for "no answer".
func statusPtr(s int) *int {
	if s == 0 {
		return nil
	}
	return &s
}

// stringPtr is nil for "".
func stringPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// getDelivery serves GET /webhook-deliveries/{id}.
func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	d, err := s.store.DeliveryByID(r.Context(), c.biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeDelivery(w, http.StatusOK, d, c.key)
}

// writeDelivery answers one delivery as key k may see it.
func writeDelivery(w http.ResponseWriter, status int, d *payd.WebhookDelivery, k *payd.APIKey) error {
	out, err := toDelivery(d, k)
	if err != nil {
		return err
	}
	writeJSON(w, status, single{out})
	return nil
}

// listDeliveries serves GET /webhook-deliveries, newest first, filtered
// by webhook_id, event_id and status.
func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	if err := refuseUnknownParams(v, deliveryListParams); err != nil {
		return err
	}
	f, err := deliveryFilter(v)
	if err != nil {
		return err
	}
	pg, err := parsePage(r.Context(), v, s.cursors, deliveryListName)
	if err != nil {
		return err
	}
	if f.AfterCreated, f.AfterID, err = createdPosition(pg.After, payd.PrefixDelivery); err != nil {
		return err
	}
	f.Limit = pg.Limit + 1
	ds, err := s.store.ListDeliveries(r.Context(), callOf(r.Context()).biz.ID, f)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(ds))}
	if len(ds) > pg.Limit {
		ds = ds[:pg.Limit]
		last := ds[len(ds)-1]
		out.setNext(pg, last.CreatedAt.UnixMicro(), last.ID)
	}
	for _, d := range ds {
		dl, err := toDelivery(d, callOf(r.Context()).key)
		if err != nil {
			return err
		}
		out.Data = append(out.Data, dl)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deliveryFilter reads the list's filters; each may be given once.
func deliveryFilter(v url.Values) (payd.DeliveryFilter, error) {
	var f payd.DeliveryFilter
	for _, p := range []struct {
		name, prefix string
		dst          **string
	}{{"webhook_id", payd.PrefixWebhook, &f.WebhookID}, {"event_id", payd.PrefixEvent, &f.EventID}} {
		s, ok, err := onlyValue(v, p.name)
		if err != nil {
			return f, err
		}
		if ok && !payd.HasPrefix(s, p.prefix) {
			return f, payd.FieldError(p.name, "%s must be an id starting with %s", p.name, p.prefix)
		}
		if ok {
			*p.dst = &s
		}
	}
	st, ok, err := onlyValue(v, "status")
	if err != nil || !ok {
		return f, err
	}
	status := payd.DeliveryStatus(st)
	if !slices.Contains(payd.DeliveryStatuses, status) {
		return f, payd.FieldError("status", "status must be pending, retrying, succeeded or failed")
	}
	f.Status = &status
	return f, nil
}

// testWebhookRequest is the body of POST /webhooks/{id}/test.
type testWebhookRequest struct {
	EventType *string `json:"event_type"`
}

// testWebhook serves POST /webhooks/{id}/test (spec 4.7): a signed sample
// event with a made-up subject, sent once now and never retried. Nothing
// but the delivery log changes. A turned-off endpoint can be tested: the
// business asks for it explicitly.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	var req testWebhookRequest
	if len(callOf(r.Context()).body) > 0 {
		if err := decode(r, &req); err != nil {
			return err
		}
	}
	biz := callOf(r.Context()).biz
	e, err := s.store.WebhookEndpointByID(r.Context(), biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	typ := payd.TestEventType(e)
	if req.EventType != nil {
		typ = *req.EventType
		if !payd.KnownEventType(typ) || !e.Receives(typ) {
			return payd.FieldError("event_type", "event_type must be an event type the endpoint receives")
		}
	}
	sender, err := s.webhookSend(r.Context(), biz.ID)
	if err != nil {
		return err
	}
	d, err := payd.NewTestDelivery(e, typ, actorOf(r.Context(), ""), s.clock.Now())
	if err != nil {
		return err
	}
	ctx := context.WithoutCancel(r.Context())
	a, headers, ended := sender.Attempt(ctx, e, d, payd.TriggerManual)
	d.Record(a, headers, ended, sender.Retry)
	if err := s.store.CreateDeliveries(ctx, []*payd.WebhookDelivery{d}); err != nil {
		return err
	}
	return writeDelivery(w, http.StatusCreated, d, callOf(r.Context()).key)
}

// resendDelivery serves POST /webhook-deliveries/{id}/resend: one manual
// attempt made now, during the request, recorded on the same delivery
// (same payload and webhook-id, fresh timestamp and signature). A success
// ends any pending retries; a failure leaves the automatic schedule as
// it was. The delivery is answered as it stands after the attempt.
//
// A test delivery can be resent too (spec 6.3 rule 4 lets any failed
// delivery be resent): a manual resend is not one of the retries that
// 4.7 and 6.3 rule 6 rule out, so it is one more attempt, recorded on
// the test delivery, and it schedules nothing. Like a test send it may go
// to an endpoint that is turned off; a real event's delivery may not
// (409 conflict), since turning an endpoint off stops its deliveries.
func (s *Server) resendDelivery(w http.ResponseWriter, r *http.Request) error {
	if len(callOf(r.Context()).body) > 0 {
		if err := decode(r, &struct{}{}); err != nil {
			return err
		}
	}
	biz := callOf(r.Context()).biz
	d, err := s.store.DeliveryByID(r.Context(), biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	e, err := s.store.WebhookEndpointByID(r.Context(), biz.ID, d.WebhookID)
	if err != nil {
		return err
	}
	if !e.Enabled && !d.Test {
		return payd.Errorf(payd.ErrConflict, "the endpoint is turned off; turn it on before resending")
	}
	sender, err := s.webhookSend(r.Context(), biz.ID)
	if err != nil {
		return err
	}
	ctx := context.WithoutCancel(r.Context())
	now := s.clock.Now()
	if d, err = s.store.ClaimDelivery(ctx, biz.ID, d.ID, now, now.Add(payd.DeliveryLease)); err != nil {
		return err
	}
	a, headers, ended := sender.Attempt(ctx, e, d, payd.TriggerManual)
	d.Record(a, headers, ended, sender.Retry)
	if err := s.store.SaveDelivery(ctx, d); err != nil {
		return err
	}
	return writeDelivery(w, http.StatusOK, d, callOf(r.Context()).key)
}

// webhookSend counts one test send or resend against the business's
// budget (spec 4.7, 6.3 rule 4: 10 per minute together, on the service
// clock) and returns the sender that makes it.
func (s *Server) webhookSend(ctx context.Context, bizID string) (payd.DeliverySender, error) {
	if s.opts.Deliveries == nil {
		return nil, payd.Errorf(payd.ErrTemporarilyUnavailable, "webhook delivery is not running on this server")
	}
	now := s.clock.Now()
	start := now.Truncate(time.Minute)
	end := start.Add(time.Minute)
	n, err := s.opts.Counter.CountRateHit(ctx, "webhook_sends|"+bizID, start, end)
	if err != nil {
		return nil, err
	}
	if n > payd.MaxDeliveriesPerMinute {
		return nil, &payd.Error{Code: payd.ErrRateLimited, RetryAfter: end.Sub(now),
			Message: "at most 10 webhook tests and resends per minute; wait for Retry-After seconds"}
	}
	return s.opts.Deliveries, nil
}
