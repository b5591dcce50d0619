package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
	"payd/webhook"
)

// nextDue is the earliest next attempt of the endpoint's deliveries, or
// false when none is scheduled.
func (b *bundle) nextDue(t *testing.T, bizID, hook string) (time.Time, bool) {
	t.Helper()
	ds, err := b.db.ListDeliveries(context.Background(), bizID, payd.DeliveryFilter{WebhookID: &hook, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var next time.Time
	for _, d := range ds {
		if d.NextAttemptAt != nil && (next.IsZero() || d.NextAttemptAt.Before(next)) {
			next = *d.NextAttemptAt
		}
	}
	return next, !next.IsZero()
}

// advanceTo moves the dev clock to at, if it is not there yet.
func (b *bundle) advanceTo(at time.Time) {
	if d := at.Sub(b.clock.Now()); d > 0 {
		b.clock.Advance(d)
	}
}

// testDeliverOutage: events spread over a 30-hour outage, the loop running
// punctually (the clock stepped to each due time). Every event reaches
// the receiver once it is up: automatically for every event whose retry
// window (27 h 35 min 5 s) outlasts the outage, by resend for the others.
func testDeliverOutage(t *testing.T, b *bundle, d *webhook.Deliverer) {
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	rc.status.Store(503)
	hook, _ := b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	start := b.clock.Now()
	up := start.Add(30 * time.Hour)
	var events []time.Time
	for _, h := range []time.Duration{0, 1, 6, 12, 20, 29} {
		events = append(events, start.Add(h*time.Hour))
	}
	created := map[string]time.Time{}
	for {
		next, ok := b.nextDue(t, biz.biz.ID, hook)
		if len(events) > 0 && (!ok || events[0].Before(next)) {
			next, ok = events[0], true
		}
		if !ok {
			break
		}
		if rc.status.Load() != 200 && !next.Before(up) {
			b.advanceTo(up)
			rc.status.Store(200)
		}
		b.advanceTo(next)
		if len(events) > 0 && !b.clock.Now().Before(events[0]) {
			created[b.customer(t, biz.live)] = b.clock.Now()
			events = events[1:]
		}
		run(t, d)
	}
	window := time.Duration(0)
	for _, w := range webhook.RetryDelays {
		window += w
	}
	c := clTest{t, b}
	for _, dl := range b.deliveries(t, biz.live, hook) {
		at := created[dl["subject"].(map[string]any)["id"].(string)]
		lost := at.Add(window).Before(up)
		if (dl["status"] == "failed") != lost {
			t.Fatalf("event of +%s: %s; lost to the outage: %v", at.Sub(start), dl["status"], lost)
		}
		if lost {
			c.call(request{method: "POST", path: "/webhook-deliveries/" + dl["id"].(string) + "/resend", key: biz.live}, 200)
		}
	}
	delivered := map[string]bool{}
	for _, r := range rc.requests() {
		if r.status == 200 {
			var ev struct{ Subject struct{ ID string } }
			_ = json.Unmarshal(r.body, &ev)
			delivered[ev.Subject.ID] = true
		}
	}
	for id := range created {
		if !delivered[id] {
			t.Errorf("customer %s never reached the receiver", id)
		}
	}
	if rest := b.deliveries(t, biz.live, hook); len(rest) != len(created) {
		t.Fatalf("%d deliveries for %d events", len(rest), len(created))
	}
}

func testDeliverDisabled(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz, rc, hook, _ := b.failedOnce(t, d)
	patch := func(on bool) {
		c.call(request{method: "PATCH", path: "/webhooks/" + hook, key: biz.live, body: jsonBody(map[string]any{"enabled": on})}, 200)
	}
	patch(false)
	b.customer(t, biz.live)
	b.clock.Advance(5 * time.Second)
	run(t, d)
	patch(true)
	b.clock.Advance(24 * time.Hour)
	run(t, d)
	ds := b.deliveries(t, biz.live, hook)
	if n := len(rc.requests()); n != 1 || len(ds) != 1 {
		t.Fatalf("off endpoint: %d requests, %d deliveries; want 1 and 1", n, len(ds))
	}
	if ds[0]["status"] != "failed" || ds[0]["next_retry_at"] != nil || ds[0]["attempt"] != 1.0 {
		t.Fatalf("a retry due while off was not dropped: %v", ds[0])
	}
}

func testDeliverDeleted(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz, rc, hook, _ := b.failedOnce(t, d)
	id := b.deliveries(t, biz.live, hook)[0]["id"].(string)
	c.call(request{method: "DELETE", path: "/webhooks/" + hook, key: biz.live}, 200)
	c.call(request{method: "GET", path: "/webhook-deliveries/" + id, key: biz.live}, 404, "not_found")
	b.clock.Advance(time.Hour)
	run(t, d)
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("a deleted endpoint got %d requests", n)
	}
}

func testDeliverSlow(t *testing.T, b *bundle, d *webhook.Deliverer) {
	biz := b.newBusiness(true)
	slow, fast := newReceiver(t), newReceiver(t)
	slow.delay = 2 * time.Second
	b.endpoint(t, biz.live, slow, payd.EventCustomerCreated)
	b.endpoint(t, biz.live, fast, payd.EventCustomerCreated)
	b.customer(t, biz.live)
	start := clock.Real{}.Now()
	run(t, d)
	f, s := fast.requests(), slow.requests()
	if len(f) != 1 || len(s) != 1 {
		t.Fatalf("fast got %d, slow got %d", len(f), len(s))
	}
	if f[0].at.Sub(start) > time.Second || s[0].at.Sub(start) < 2*time.Second {
		t.Fatalf("fast answered after %s, slow after %s", f[0].at.Sub(start), s[0].at.Sub(start))
	}
}

// testDeliverSlowOverflow: an endpoint whose attempts take 5 s of the
// service clock is slow (4 attempts in flight). Ten events for it: the
// rows a claim takes past those 4 are handed back due, not left to wait a
// minute on their lease, so a few runs deliver all of them while the
// clock moves far less than the lease.
func testDeliverSlowOverflow(t *testing.T, b *bundle, d *webhook.Deliverer) {
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	rc.during = func() { b.clock.Advance(5 * time.Second) }
	b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	b.customer(t, biz.live)
	run(t, d) // one attempt of 5 s: slow from now on
	for range 10 {
		b.customer(t, biz.live)
	}
	start := b.clock.Now()
	for range 4 {
		run(t, d)
	}
	if n := len(rc.requests()); n != 11 {
		t.Fatalf("%d of 11 events delivered after %v of the service clock", n, b.clock.Now().Sub(start))
	}
	if moved := b.clock.Now().Sub(start); moved >= payd.DeliveryLease {
		t.Fatalf("the clock moved %v, past a lease: the test proves nothing", moved)
	}
}

// testDeliverLease: a holder claims a due delivery and crashes before
// recording it; nobody else attempts it until the lease lapses, then the
// loop does.
func testDeliverLease(t *testing.T, b *bundle, d *webhook.Deliverer) {
	biz, rc, hook, _ := b.failedOnce(t, d)
	b.clock.Advance(5 * time.Second)
	now := b.clock.Now()
	claimed, err := b.db.ClaimDueDeliveries(context.Background(), now, now.Add(payd.DeliveryLease), 1000)
	if err != nil || len(claimed) == 0 {
		t.Fatalf("claim: %v, %d", err, len(claimed))
	}
	rc.status.Store(200)
	run(t, d)
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("a leased delivery was attempted: %d requests", n)
	}
	b.clock.Advance(payd.DeliveryLease)
	run(t, d)
	ds := b.deliveries(t, biz.live, hook)
	if n := len(rc.requests()); n != 2 || ds[0]["status"] != "succeeded" {
		t.Fatalf("after the lease lapsed: %d requests, %v", n, ds[0])
	}
}

// TestWebhookTestSend covers POST /webhooks/{id}/test (spec 4.7), resends
// and their shared limit, on both databases.
func TestWebhookTestSend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		d := b.deliverer()
		t.Run("sent once as 4.7 says", func(t *testing.T) { testWebhookTestSend(t, b, d) })
		t.Run("resend", func(t *testing.T) { testResend(t, b, d) })
		t.Run("10 per minute per business", func(t *testing.T) { testWebhookSendLimit(t, b, d) })
	})
}

func testWebhookTestSend(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	hook, secret := b.endpoint(t, biz.live, rc, payd.EventPaymentSucceeded, payd.EventCustomerCreated)
	dl := c.data(request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live}, 201)
	payload := dl["payload"].(map[string]any)
	subject := payload["subject"].(map[string]any)
	data := payload["data"].(map[string]any)
	if payload["test"] != true || payload["type"] != payd.EventPaymentSucceeded || !strings.Contains(subject["id"].(string), "_test_") ||
		len(data) != 1 || data["id"] != subject["id"] || dl["status"] != "succeeded" || dl["next_retry_at"] != nil {
		t.Fatalf("test delivery %v", dl)
	}
	if a := dl["attempts"].([]any); len(a) != 1 || a[0].(map[string]any)["trigger"] != "manual" {
		t.Fatalf("attempts %v", a)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d", len(got))
	}
	verify(t, b, secret, got[0])
	c.call(request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live, body: `{"event_type":"link.created"}`},
		400, "invalid_request", "event_type")
	c.call(request{method: "POST", path: "/webhooks/whk_nothing/test", key: biz.live}, 404, "not_found")
	rc.status.Store(500)
	failed := c.data(request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live,
		body: `{"event_type":"customer.created"}`}, 201)
	if failed["status"] != "failed" || failed["next_retry_at"] != nil || failed["response_status"] != 500.0 {
		t.Fatalf("failed test %v", failed)
	}
	b.clock.Advance(24 * time.Hour)
	run(t, d)
	if n := len(rc.requests()); n != 2 {
		t.Fatalf("a test delivery was retried: %d requests", n)
	}
	if ids := c.list(biz.live, "/customers", 10); len(ids) != 0 {
		t.Fatalf("a test send changed business data: %v", ids)
	}
	testResendTest(t, b, d, biz, rc, hook, failed)
}

// testResendTest resends the failed test delivery: a manual resend is not
// a retry (spec 6.3 rule 4), so it is one more attempt on the same test
// delivery, the same bytes and webhook-id, scheduling nothing, also to an
// endpoint that is turned off (as a test send may). A real event's
// delivery to a turned-off endpoint is a conflict, not a bad field.
func testResendTest(t *testing.T, b *bundle, d *webhook.Deliverer, biz *testBusiness, rc *receiver, hook string, failed map[string]any) {
	c := clTest{t, b}
	rc.status.Store(200)
	off := request{method: "PATCH", path: "/webhooks/" + hook, key: biz.live, body: `{"enabled":false}`}
	c.data(off, 200)
	resend := request{method: "POST", path: "/webhook-deliveries/" + failed["id"].(string) + "/resend", key: biz.live}
	dl := c.data(resend, 200)
	attempts := dl["attempts"].([]any)
	if dl["test"] != true || dl["status"] != "succeeded" || dl["next_retry_at"] != nil || len(attempts) != 2 ||
		attempts[1].(map[string]any)["trigger"] != "manual" || dl["id"] != failed["id"] {
		t.Fatalf("resent test delivery %v", dl)
	}
	got := rc.requests()
	if len(got) != 3 || string(got[2].body) != string(got[1].body) || got[2].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
		t.Fatalf("the resend did not send the test event again: %d requests", len(got))
	}
	rc.status.Store(500)
	if dl = c.data(resend, 200); dl["status"] != "failed" || dl["next_retry_at"] != nil {
		t.Fatalf("a failed resend of a test delivery scheduled a retry: %v", dl)
	}
	b.clock.Advance(24 * time.Hour)
	run(t, d)
	if n := len(rc.requests()); n != 4 {
		t.Fatalf("a resent test delivery was retried: %d requests", n)
	}
	rc.status.Store(200)
	c.data(request{method: "PATCH", path: "/webhooks/" + hook, key: biz.live, body: `{"enabled":true}`}, 200)
	b.customer(t, biz.live)
	run(t, d)
	c.data(off, 200)
	real := b.deliveries(t, biz.live, hook)[0]
	if real["test"] != false {
		t.Fatalf("the newest delivery is not the customer's event: %v", real)
	}
	c.call(request{method: "POST", path: "/webhook-deliveries/" + real["id"].(string) + "/resend", key: biz.live}, 409, "conflict")
}

func testResend(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz, rc, hook, secret := b.failedOnce(t, d)
	id := b.deliveries(t, biz.live, hook)[0]["id"].(string)
	rc.status.Store(200)
	dl := c.data(request{method: "POST", path: "/webhook-deliveries/" + id + "/resend", key: biz.live}, 200)
	attempts := dl["attempts"].([]any)
	if dl["status"] != "succeeded" || dl["next_retry_at"] != nil || len(attempts) != 2 ||
		attempts[1].(map[string]any)["trigger"] != "manual" {
		t.Fatalf("after resend: %v", dl)
	}
	got := rc.requests()
	if len(got) != 2 || got[0].header.Get("webhook-id") != got[1].header.Get("webhook-id") || string(got[0].body) != string(got[1].body) {
		t.Fatalf("a resend must send the same event: %d requests", len(got))
	}
	verify(t, b, secret, got[1])
	b.clock.Advance(time.Hour)
	run(t, d)
	if n := len(rc.requests()); n != 2 {
		t.Fatalf("retries went on after a successful resend: %d", n)
	}
	c.call(request{method: "POST", path: "/webhook-deliveries/dlv_nothing/resend", key: biz.live}, 404, "not_found")
}

func testWebhookSendLimit(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	hook, _ := b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	b.customer(t, biz.live)
	run(t, d)
	resend := request{method: "POST", path: "/webhook-deliveries/" + b.deliveries(t, biz.live, hook)[0]["id"].(string) + "/resend", key: biz.live}
	test := request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live}
	b.advanceTo(b.clock.Now().Truncate(time.Minute).Add(time.Minute)) // a fresh window
	c.call(resend, 200)
	for range 9 {
		c.call(test, 201)
	}
	r := b.do(test)
	if code, _ := r.errorCode(t); r.status != 429 || code != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("11th send: %d %s, Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	c.call(resend, 429, "rate_limited")
	b.clock.Advance(time.Minute) // the next window
	c.call(test, 201)
}
