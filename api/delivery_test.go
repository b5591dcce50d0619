package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
	"payd/webhook"
)

// TestDeliveries covers webhook delivery (spec 6.2, 6.3, 2.10, 4.7) end to
// end on both databases: real events from API calls, the real delivery
// loop, receivers on loopback, the dev clock.
func TestDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		d := b.deliverer()
		t.Run("signed and verified by the official library", func(t *testing.T) { testDeliverSigned(t, b, d) })
		t.Run("signed with the real time after the dev clock moved", func(t *testing.T) { testDeliverWallTime(t, b, d) })
		t.Run("attempt errors in a fixed vocabulary", func(t *testing.T) { testDeliverErrorWords(t, b, d) })
		t.Run("restricted keys see payload data of readable subjects only", func(t *testing.T) { testDeliverPayloadAccess(t, b, d) })
		t.Run("eight attempts on schedule", func(t *testing.T) { testDeliverSchedule(t, b, d) })
		t.Run("receiver down for 30 hours", func(t *testing.T) { testDeliverOutage(t, b, d) })
		t.Run("disabled endpoint", func(t *testing.T) { testDeliverDisabled(t, b, d) })
		t.Run("deleted endpoint", func(t *testing.T) { testDeliverDeleted(t, b, d) })
		t.Run("slow receiver delays nobody", func(t *testing.T) { testDeliverSlow(t, b, d) })
		t.Run("lapsed lease is attempted again", func(t *testing.T) { testDeliverLease(t, b, d) })
		t.Run("a slow endpoint's overflow is not parked", func(t *testing.T) { testDeliverSlowOverflow(t, b, d) })
		t.Run("list filters", func(t *testing.T) { testDeliverList(t, b, d) })
	})
}

// deliverer makes the delivery loop of the bundle's server (not started:
// tests call RunOnce) and lets the server make manual attempts with it.
func (b *bundle) deliverer() *webhook.Deliverer {
	s := webhook.NewSender(webhook.ClientOptions{AllowPrivate: true, Clock: b.clock})
	d := webhook.NewDeliverer(b.db, s, b.clock, b.srv.log, webhook.DelivererOptions{})
	b.srv.opts.Deliveries = d
	return d
}

// receiver is a webhook endpoint on loopback that records what it gets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status atomic.Int32 // what it answers; 200 unless set
	delay  time.Duration
	// during, when set, runs while each request is handled (to move the
	// dev clock, say).
	during func()
}

// received is one request as the receiver read it.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
	status int
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.status.Store(200)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if rc.delay > 0 {
			clock.Sleep(clock.Real{}, rc.delay, nil)
		}
		if rc.during != nil {
			rc.during()
		}
		status := int(rc.status.Load())
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body, clock.Real{}.Now(), status})
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// requests returns what the receiver got so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// endpoint registers rc for types and returns the endpoint's id and secret.
func (b *bundle) endpoint(t *testing.T, key string, rc *receiver, types ...string) (id, secret string) {
	t.Helper()
	d := clTest{t, b}.dataOf(b.do(postWebhook(key, map[string]any{"url": rc.URL + "/hook", "event_types": types})), 201)
	return d["id"].(string), d["secret"].(string)
}

// customer creates a customer, which records customer.created.
func (b *bundle) customer(t *testing.T, key string) string {
	t.Helper()
	d := clTest{t, b}.data(request{method: "POST", path: "/customers", key: key,
		body: `{"name":"Grace","email":"grace.` + strings.ToLower(payd.RandomString(12)) + `@example.com"}`}, 201)
	return d["id"].(string)
}

// run runs the delivery loop once.
func run(t *testing.T, d *webhook.Deliverer) {
	t.Helper()
	if err := d.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// deliveries lists a business's deliveries to an endpoint, newest first.
func (b *bundle) deliveries(t *testing.T, key, webhookID string) []map[string]any {
	t.Helper()
	body := clTest{t, b}.call(request{method: "GET", path: "/webhook-deliveries?limit=100&webhook_id=" + webhookID, key: key}, 200)
	var out []map[string]any
	for _, v := range body["data"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// verify checks a received request with the official Standard Webhooks
// library, from the raw bytes read, timestamp included: the library judges
// it by the real clock, which is what a receiver has, however far a test
// has moved the dev clock.
func verify(t *testing.T, b *bundle, secret string, r received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Fatalf("the library refuses the delivery (service clock %s): %v\n%s", b.clock.Now(), err, r.body)
	}
	ts, err := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
	if err != nil || r.at.Sub(time.Unix(ts, 0)).Abs() > time.Minute {
		t.Fatalf("webhook-timestamp %q is not the real time of receipt %s", r.header.Get("webhook-timestamp"), r.at)
	}
}

func testDeliverSigned(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	hook, secret := b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	cst := b.customer(t, biz.live)
	run(t, d)
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	verify(t, b, secret, got[0])
	var ev map[string]any
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	subject := ev["subject"].(map[string]any)
	if ev["type"] != payd.EventCustomerCreated || subject["id"] != cst || ev["kind"] != "event" ||
		ev["mode"] != "live" || ev["api_version"] != "v1" || got[0].header.Get("webhook-id") != ev["id"] {
		t.Fatalf("event %s, headers %v", got[0].body, got[0].header)
	}
	if _, ok := ev["test"]; ok || ev["data"].(map[string]any)["id"] != cst {
		t.Fatalf("a real event carries test or lacks its data: %s", got[0].body)
	}
	list := b.deliveries(t, biz.live, hook)
	dl := c.data(request{method: "GET", path: "/webhook-deliveries/" + list[0]["id"].(string), key: biz.live}, 200)
	headers := dl["request_headers"].(map[string]any)
	if !reflect.DeepEqual(dl["payload"], ev) || headers["webhook-signature"] != got[0].header.Get("webhook-signature") ||
		dl["status"] != "succeeded" || dl["response_status"] != 200.0 || dl["next_retry_at"] != nil || dl["event_id"] != ev["id"] {
		t.Fatalf("delivery %v does not match what was sent: %s", dl, got[0].body)
	}
}

// testDeliverWallTime moves the dev clock two hours ahead through
// POST /devnet/clock: the event and its delivery are dated on the service
// clock, but webhook-timestamp is the real time, so the official library
// (five minutes' tolerance on the real clock) accepts the delivery, and a
// test send too.
func testDeliverWallTime(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	moved := c.data(request{method: "POST", path: "/devnet/clock", body: `{"advance_seconds":7200}`}, 200)
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	hook, secret := b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	b.customer(t, biz.live)
	run(t, d)
	c.data(request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live}, 201)
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}
	for _, r := range got {
		verify(t, b, secret, r)
		var ev map[string]any
		if err := json.Unmarshal(r.body, &ev); err != nil {
			t.Fatal(err)
		}
		if created := timeOf(t, ev["created_at"]); created.Before(timeOf(t, moved["now"])) {
			t.Fatalf("event created_at %v is not on the service clock (moved to %v)", ev["created_at"], moved["now"])
		}
	}
	dl := b.deliveries(t, biz.live, hook)[0]
	if at := attemptAt(t, dl["attempts"].([]any)[0]); at.Before(timeOf(t, moved["now"])) {
		t.Fatalf("the attempt is dated %s, before the service clock's %v", at, moved["now"])
	}
}

// testDeliverErrorWords sends to a name that does not resolve and to a
// receiver answering 500: the delivery log says "dns failure" and
// "http 500", never the resolver's address that Go's error names; payd's
// log has the detail with the delivery's id.
func testDeliverErrorWords(t *testing.T, b *bundle, _ *webhook.Deliverer) {
	c := clTest{t, b}
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	rc.status.Store(500)
	for url, want := range map[string]string{"http://hooks.payd-test.invalid/hook": "dns failure", rc.URL + "/hook": "http 500"} {
		hook := c.data(postWebhook(biz.live, map[string]any{"url": url, "event_types": []string{"*"}}), 201)["id"].(string)
		r := b.do(request{method: "POST", path: "/webhooks/" + hook + "/test", key: biz.live})
		dl := c.dataOf(r, 201)
		if got := dl["attempts"].([]any)[0].(map[string]any)["error"]; got != want || strings.Contains(string(r.body), "lookup") {
			t.Fatalf("%s: attempt error %v, want %q: %s", url, got, want, r.body)
		}
		if want == "dns failure" && !strings.Contains(b.logs.String(), "delivery="+dl["id"].(string)) {
			t.Fatalf("the log lacks the failed attempt of %s:\n%s", dl["id"], b.logs.String())
		}
	}
}

// testDeliverPayloadAccess reads the deliveries of a customer event and a
// link event with keys of different areas: webhooks:read alone must not
// read the customer's email through the payload, and sees data reduced
// to the subject's id; a key that can read the area sees it all, in the
// list and by id.
func testDeliverPayloadAccess(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz := b.newBusiness(true)
	rc := newReceiver(t)
	hook, _ := b.endpoint(t, biz.live, rc, "*")
	cst := b.customer(t, biz.live)
	lnk := c.data(request{method: "POST", path: "/links", key: biz.live,
		body: jsonBody(map[string]any{"name": "Print", "amount": 500, "currency": "USD"})}, 201)["id"].(string)
	run(t, d)
	hooksOnly := b.restricted(biz, "webhooks:read")
	withCustomers := b.restricted(biz, "webhooks:read,customers:read")
	full := map[string]bool{cst: true, lnk: true}
	for key, sees := range map[string]map[string]bool{biz.live: full, hooksOnly: {}, withCustomers: {cst: true}} {
		list := b.deliveries(t, key, hook)
		if len(list) != 2 {
			t.Fatalf("%d deliveries, want 2", len(list))
		}
		for _, dl := range list {
			one := c.data(request{method: "GET", path: "/webhook-deliveries/" + dl["id"].(string), key: key}, 200)
			for _, got := range []map[string]any{dl, one} {
				payload := got["payload"].(map[string]any)
				data := payload["data"].(map[string]any)
				subject := payload["subject"].(map[string]any)["id"].(string)
				if sees[subject] != (len(data) > 1) || data["id"] != subject || payload["type"] != got["event_type"] {
					t.Fatalf("key %s, subject %s (may read it: %v): payload %v", key[:12], subject, sees[subject], payload)
				}
				if _, email := data["email"]; email != (sees[subject] && subject == cst) {
					t.Fatalf("key %s: customer email shown %v: %v", key[:12], email, data)
				}
			}
		}
	}
}

// TestPayloadFor checks the reduced payload byte for byte: field order
// kept, data reduced to the subject's id, a customer actor's email
// withheld from a key that cannot read customers, test payloads as sent.
func TestPayloadFor(t *testing.T) {
	ev := &payd.Event{ID: "evt_1", Type: payd.EventCustomerCreated, SubjectKind: "customer", SubjectID: "cst_1",
		Data: []byte(`{"id":"cst_1","email":"ada@example.com"}`), Actor: payd.Actor{Kind: payd.ActorCustomer, Name: "ada@example.com"},
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	raw, err := payd.EventPayload(ev, false)
	if err != nil {
		t.Fatal(err)
	}
	d := &payd.WebhookDelivery{SubjectKind: "customer", SubjectID: "cst_1", Payload: raw}
	hooks := &payd.APIKey{Kind: payd.KeyRestricted, Permissions: payd.Permissions{payd.AreaWebhooks: payd.AccessRead}}
	want := `{"id":"evt_1","kind":"event","type":"customer.created","subject":{"kind":"customer","id":"cst_1"},"data":{"id":"cst_1"},` +
		`"actor":{"kind":"customer","id":null,"name":null},"mode":"live","api_version":"v1","created_at":"2026-01-02T03:04:05.000Z"}`
	if got, err := payloadFor(d, hooks); err != nil || string(got) != want {
		t.Errorf("reduced payload\n%s (%v), want\n%s", got, err, want)
	}
	for _, k := range []*payd.APIKey{{Kind: payd.KeySecret},
		{Kind: payd.KeyRestricted, Permissions: payd.Permissions{payd.AreaCustomers: payd.AccessRead}}} {
		if got, _ := payloadFor(d, k); string(got) != string(raw) {
			t.Errorf("%v sees %s, want the payload as sent", k.Permissions, got)
		}
	}
	d.Test = true
	if got, _ := payloadFor(d, hooks); string(got) != string(raw) {
		t.Errorf("a test payload was reduced: %s", got)
	}
}

func testDeliverSchedule(t *testing.T, b *bundle, d *webhook.Deliverer) {
	biz, rc, hook, _ := b.failedOnce(t, d)
	for i, wait := range webhook.RetryDelays {
		b.clock.Advance(wait - time.Second)
		run(t, d)
		if n := len(rc.requests()); n != i+1 {
			t.Fatalf("retry %d came %d early: %d requests", i+1, time.Second, n)
		}
		b.clock.Advance(time.Second)
		run(t, d)
		if n := len(rc.requests()); n != i+2 {
			t.Fatalf("after retry %d's delay: %d requests, want %d", i+1, n, i+2)
		}
	}
	b.clock.Advance(24 * time.Hour)
	run(t, d)
	got := rc.requests()
	if len(got) != webhook.MaxAttempts {
		t.Fatalf("receiver got %d attempts, want %d", len(got), webhook.MaxAttempts)
	}
	dl := b.deliveries(t, biz.live, hook)[0]
	attempts := dl["attempts"].([]any)
	if dl["status"] != "failed" || dl["next_retry_at"] != nil || len(attempts) != 8 || dl["attempt"] != 8.0 {
		t.Fatalf("after 8 failures: %v", dl)
	}
	first := attemptAt(t, attempts[0])
	var offset time.Duration
	for i, a := range attempts {
		if i > 0 {
			offset += webhook.RetryDelays[i-1]
		}
		if got := attemptAt(t, a).Sub(first); got < offset || got > offset+2*time.Second {
			t.Errorf("attempt %d at +%s, want +%s", i+1, got, offset)
		}
		if a.(map[string]any)["trigger"] != "automatic" || a.(map[string]any)["response_status"] != 500.0 {
			t.Errorf("attempt %d: %v", i+1, a)
		}
	}
	ids := map[string]bool{}
	for _, r := range got {
		ids[r.header.Get("webhook-id")] = true
	}
	if len(ids) != 1 {
		t.Fatalf("webhook-id changed across retries: %v", ids)
	}
}

// failedOnce makes a business whose one endpoint, a receiver answering
// 500, takes customer.created; creates a customer and runs the loop once,
// so the endpoint's first attempt has failed.
func (b *bundle) failedOnce(t *testing.T, d *webhook.Deliverer) (biz *testBusiness, rc *receiver, hook, secret string) {
	t.Helper()
	biz, rc = b.newBusiness(true), newReceiver(t)
	rc.status.Store(500)
	hook, secret = b.endpoint(t, biz.live, rc, payd.EventCustomerCreated)
	b.customer(t, biz.live)
	run(t, d)
	return biz, rc, hook, secret
}

// timeOf reads a timestamp of the API.
func timeOf(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(timeLayout, v.(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// attemptAt reads an attempt's at.
func attemptAt(t *testing.T, a any) time.Time {
	t.Helper()
	at, err := time.Parse(timeLayout, a.(map[string]any)["at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func testDeliverList(t *testing.T, b *bundle, d *webhook.Deliverer) {
	c := clTest{t, b}
	biz, other := b.newBusiness(true), b.newBusiness(true)
	rc := newReceiver(t)
	hook, _ := b.endpoint(t, biz.live, rc, payd.EventTypeAll)
	for range 3 {
		b.customer(t, biz.live)
	}
	run(t, d)
	if ids := c.list(biz.live, "/webhook-deliveries?webhook_id="+hook, 2); len(ids) != 3 {
		t.Fatalf("listed %d deliveries, want 3", len(ids))
	}
	if ids := c.list(biz.live, "/webhook-deliveries?status=failed&webhook_id="+hook, 2); len(ids) != 0 {
		t.Fatalf("%d failed deliveries", len(ids))
	}
	if ids := c.list(other.live, "/webhook-deliveries", 10); len(ids) != 0 {
		t.Fatalf("another business sees %d deliveries", len(ids))
	}
	id := b.deliveries(t, biz.live, hook)[0]["id"].(string)
	c.call(request{method: "GET", path: "/webhook-deliveries/" + id, key: other.live}, 404, "not_found")
	c.call(request{method: "GET", path: "/webhook-deliveries?status=done", key: biz.live}, 400, "invalid_request", "status")
	c.call(request{method: "GET", path: "/webhook-deliveries?webhook_id=cst_1", key: biz.live}, 400, "invalid_request", "webhook_id")
	ro := b.restricted(biz, "webhooks:read")
	c.call(request{method: "GET", path: "/webhook-deliveries/" + id, key: ro}, 200)
	c.call(request{method: "POST", path: "/webhook-deliveries/" + id + "/resend", key: ro}, 403, "permission_denied")
}
