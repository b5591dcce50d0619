package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd"
	"payd/clock"
	"payd/store/storetest"
)

// The delivery crash test of issue 5: events are produced through the API
// and delivered to a local receiver while payd serve is killed with SIGKILL
// at random moments; every event the API acknowledged, and every event in
// the outbox, must reach the receiver at least once, each signed, and a
// repeat only ever under the same webhook-id (DESIGN §1.2, spec 6.3).
const (
	hookEvents    = 2000 // acknowledged creates, one event each
	hookPayEvery  = 5    // every fifth create is a payment, the rest customers
	hookProducers = 8
	hookMinKills  = 6
)

// TestCrashWebhook runs the real binary on each database with a receiver
// subscribed to every event type, creates 2,000 customers and payments
// from eight clients while killing the server at random moments (and a few
// times more while only deliveries are left), then moves the dev clock past
// the delivery lease, so deliveries a killed process held are claimed
// again, and waits until everything has arrived.
func TestCrashWebhook(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			start := clock.Real{}.Now()
			dsn := devDSN(t, dialect)
			h := newHookRun(t, bin, dsn)
			h.produceWhileKilling()
			produced := clock.Real{}.Now()
			h.settle()
			settled := clock.Real{}.Now()
			h.check(dsn)
			t.Logf("%d events acknowledged, %d received (%d repeats), %d kills (%d during delivery only), "+
				"%d answered 500 on purpose; producing %v, settling %v, in all %v",
				len(h.acked), h.rc.count(), h.rc.repeats.Load(), h.kills, h.lateKills, h.rc.refused.Load(),
				produced.Sub(start).Round(100*time.Millisecond), settled.Sub(produced).Round(100*time.Millisecond),
				clock.Real{}.Now().Sub(start).Round(100*time.Millisecond))
		})
	}
}

// hookRun is one database's run: the server, the receiver and what the API
// acknowledged.
type hookRun struct {
	*crashRun
	rc        *hookReceiver
	mu        sync.Mutex
	acked     map[string]string // subject id → the event type its create announces
	kills     int
	lateKills int // kills after the last create, while only deliveries were left
}

// newHookRun starts the server (as the confirmations crash test does),
// starts the receiver and registers it for every event type.
func newHookRun(t *testing.T, bin, dsn string) *hookRun {
	h := &hookRun{crashRun: newCrashRun(t, bin, dsn), rc: newHookReceiver(t), acked: map[string]string{}}
	d, err := h.c.want(201, "POST", "/webhooks", map[string]any{"url": h.rc.URL + "/hook", "event_types": []string{"*"}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(d["secret"].(string))
	if err != nil {
		t.Fatal(err)
	}
	h.rc.wh.Store(wh)
	h.rc.flaky.Store(true)
	return h
}

// produceWhileKilling creates the events from hookProducers clients while
// killing the server every 150–700 ms, then kills it twice more while
// deliveries are still going out.
func (h *hookRun) produceWhileKilling() {
	h.t.Helper()
	var next atomic.Int64
	errs := make(chan error, hookProducers)
	var wg sync.WaitGroup
	for range hookProducers {
		wg.Go(func() {
			for i := next.Add(1); i <= hookEvents; i = next.Add(1) {
				if err := h.create(int(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for producing := true; producing; {
		select {
		case <-done:
			producing = false
		case <-clockAfter(time.Duration(150+h.rnd.IntN(550)) * time.Millisecond):
			h.crash()
		}
	}
	close(errs)
	for err := range errs {
		h.t.Fatal(err)
	}
	for h.kills < hookMinKills || h.lateKills < 2 {
		<-clockAfter(time.Duration(h.rnd.IntN(300)) * time.Millisecond)
		h.crash()
		h.lateKills++
	}
}

// crash kills the server with SIGKILL and starts it again.
func (h *hookRun) crash() {
	h.t.Helper()
	if !h.srv.kill() {
		h.t.Fatalf("the server had stopped by itself:\n%s", h.srv.tail())
	}
	h.kills++
	if err := h.srv.start(); err != nil {
		h.t.Fatalf("restart %d: %v\n%s", h.kills, err, h.srv.tail())
	}
}

// create makes the i-th customer or payment, retrying through restarts.
// A retry is a new request (no Idempotency-Key: a claim its killed first
// try left would hold the key for minutes), so a try whose answer was lost
// may have made an object too: its event is in the outbox, unacknowledged,
// and check finds it there.
func (h *hookRun) create(i int) error {
	deadline := clockAfter(crashDeadline)
	for try := 0; ; try++ {
		path, typ := "/customers", "customer.created"
		body := map[string]any{"name": fmt.Sprint("Customer ", i), "email": fmt.Sprintf("c%d.%d@example.com", i, try)}
		if i%hookPayEvery == 0 {
			path, typ, body = "/payments", "payment.created", map[string]any{"amount": 100 + i, "currency": "USD"}
		}
		code, data, err := h.c.call("POST", path, body, nil)
		if err == nil {
			var v struct{ Data struct{ ID string } }
			if code != 201 || json.Unmarshal(data, &v) != nil || v.Data.ID == "" {
				return fmt.Errorf("POST %s: %d %s", path, code, data)
			}
			h.mu.Lock()
			h.acked[v.Data.ID] = typ
			h.mu.Unlock()
			return nil
		}
		select {
		case <-deadline:
			return fmt.Errorf("POST %s: server away for %v: %w", path, crashDeadline, err)
		case <-clockAfter(20 * time.Millisecond):
		}
	}
}

// settle stops the receiver's refusals, moves the service clock past the
// delivery lease (payd.DeliveryLease) so that what a killed process held is
// claimed again, and waits until every object the server lists has its
// event received and no delivery is pending or retrying.
func (h *hookRun) settle() {
	h.t.Helper()
	h.rc.flaky.Store(false)
	if _, err := h.c.want(200, "POST", "/devnet/clock", map[string]any{"advance_seconds": 61}, nil, true); err != nil {
		h.t.Fatal(err)
	}
	deadline := clockAfter(crashDeadline)
	for {
		missing, err := h.missing()
		if err != nil {
			h.t.Fatal(err)
		}
		if len(missing) == 0 {
			return
		}
		select {
		case <-deadline:
			h.t.Fatalf("after %v, %d objects have no event received, e.g. %v\n%s", crashDeadline, len(missing),
				missing[:min(5, len(missing))], h.srv.tail())
		case <-clockAfter(300 * time.Millisecond):
		}
	}
}

// missing lists the objects whose event the receiver has not got yet, and
// the deliveries still pending or retrying.
func (h *hookRun) missing() ([]string, error) {
	subjects, err := h.subjects()
	if err != nil {
		return nil, err
	}
	var out []string
	for id := range subjects {
		if !h.rc.hasSubject(id) {
			out = append(out, id)
		}
	}
	for _, status := range []string{"pending", "retrying"} {
		code, data, err := h.c.call("GET", "/webhook-deliveries?limit=10&status="+status, nil, nil)
		var page struct{ Data []struct{ ID string } }
		if err != nil || code != 200 || json.Unmarshal(data, &page) != nil {
			return nil, fmt.Errorf("GET /webhook-deliveries: %d %v %s", code, err, data)
		}
		for _, d := range page.Data {
			out = append(out, status+" "+d.ID)
		}
	}
	return out, nil
}

// subjects lists every customer and payment of the business, with the type
// of the event their create recorded.
func (h *hookRun) subjects() (map[string]string, error) {
	out := map[string]string{}
	for path, typ := range map[string]string{"/customers": "customer.created", "/payments": "payment.created"} {
		cursor := ""
		for range 100 {
			q := path + "?limit=100"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			code, data, err := h.c.call("GET", q, nil, nil)
			var page struct {
				Data       []struct{ ID string }
				HasMore    bool    `json:"has_more"`
				NextCursor *string `json:"next_cursor"`
			}
			if err != nil || code != 200 || json.Unmarshal(data, &page) != nil {
				return nil, fmt.Errorf("GET %s: %d %v %s", q, code, err, data)
			}
			for _, o := range page.Data {
				out[o.ID] = typ
			}
			if !page.HasMore || page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
	}
	return out, nil
}

// check asserts that every acknowledged create and every event stored has
// reached the receiver, that each object has exactly one event, that the
// receiver verified every request, and that the server logged no error.
func (h *hookRun) check(dsn string) {
	h.t.Helper()
	subjects, err := h.subjects()
	if err != nil {
		h.t.Fatal(err)
	}
	for id, typ := range h.acked {
		if subjects[id] != typ {
			h.t.Errorf("acknowledged %s %s is not listed", typ, id)
		}
	}
	if len(h.acked) != hookEvents {
		h.t.Errorf("%d creates acknowledged, want %d", len(h.acked), hookEvents)
	}
	if errs := h.srv.errorLines(); len(errs) > 0 {
		h.t.Errorf("the server logged %d errors, the first: %v", len(errs), errs[:min(len(errs), 5)])
	}
	h.srv.kill() // the store is opened here: on SQLite, one process at a time writes
	db := storetest.OpenDSN(h.t, dsn, clock.Real{})
	ctx := context.Background()
	if evs, err := db.UndispatchedEvents(ctx, 10); err != nil || len(evs) > 0 {
		h.t.Errorf("undispatched events left: %d (%v)", len(evs), err)
	}
	key, err := db.APIKeyByHash(ctx, payd.HashAPIKey(h.c.key))
	if err != nil {
		h.t.Fatal(err)
	}
	for id, typ := range subjects {
		if ev := h.rc.bySubject(id); ev == nil || ev.typ != typ {
			h.t.Errorf("%s %s: received %+v", typ, id, ev)
		}
	}
	stored := 0
	for id := range subjects {
		evs, err := db.EventsOf(ctx, key.BusinessID, id)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, e := range evs {
			stored++
			if got := h.rc.byID(e.ID); got == nil || got.subject != id || got.typ != e.Type {
				h.t.Errorf("stored event %s (%s of %s) was not received as such: %+v", e.ID, e.Type, id, got)
			}
		}
	}
	if n := h.rc.count(); stored != n || stored < hookEvents {
		h.t.Errorf("%d events stored, %d received", stored, n)
	}
	for _, msg := range h.rc.problems() {
		h.t.Error(msg)
	}
}

// hookReceiver is the webhook endpoint: it verifies every request with the
// official Standard Webhooks library and keeps each event by webhook-id.
// While flaky, it answers one request in twenty with 500, so that some
// deliveries go through their retries, but never the same event twice: a
// second failure would put the next retry 5 minutes away (RetryDelays).
type hookReceiver struct {
	*httptest.Server
	wh      atomic.Pointer[standardwebhooks.Webhook]
	flaky   atomic.Bool
	refused atomic.Int64
	repeats atomic.Int64

	mu        sync.Mutex
	refusedID map[string]bool
	events    map[string]*hookEvent // by webhook-id
	subjects  map[string]*hookEvent // by subject id
	complaint []string
}

// hookEvent is one event as received.
type hookEvent struct {
	id, typ, subject string
	body             []byte
	times            int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{events: map[string]*hookEvent{}, subjects: map[string]*hookEvent{}, refusedID: map[string]bool{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

// serve checks one request and records it.
func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	wh := rc.wh.Load()
	if err != nil || wh == nil {
		rc.complain("a request before the endpoint existed, or unreadable: %v", err)
		w.WriteHeader(400)
		return
	}
	if err := wh.Verify(body, r.Header); err != nil {
		rc.complain("the library refuses %s: %v", r.Header.Get("webhook-id"), err)
		w.WriteHeader(400)
		return
	}
	if rc.flaky.Load() && rand.IntN(20) == 0 && rc.refuseOnce(r.Header.Get("webhook-id")) {
		w.WriteHeader(500)
		return
	}
	var ev struct {
		ID, Type string
		Subject  struct{ ID string }
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != r.Header.Get("webhook-id") {
		rc.complain("webhook-id %q for the body %s (%v)", r.Header.Get("webhook-id"), body, err)
		w.WriteHeader(400)
		return
	}
	rc.record(&hookEvent{id: ev.ID, typ: ev.Type, subject: ev.Subject.ID, body: body})
	w.WriteHeader(200)
}

// record keeps ev, refusing a repeat whose body differs and a second event
// id for one subject.
func (rc *hookReceiver) record(ev *hookEvent) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if old := rc.events[ev.id]; old != nil {
		old.times++
		rc.repeats.Add(1)
		if string(old.body) != string(ev.body) {
			rc.complaint = append(rc.complaint, fmt.Sprintf("event %s repeated with another body:\n%s\n%s", ev.id, old.body, ev.body))
		}
		return
	}
	if old := rc.subjects[ev.subject]; old != nil {
		rc.complaint = append(rc.complaint, fmt.Sprintf("%s has two events: %s and %s", ev.subject, old.id, ev.id))
	}
	ev.times = 1
	rc.events[ev.id], rc.subjects[ev.subject] = ev, ev
}

// refuseOnce reports whether the event id was never refused, and notes it.
func (rc *hookReceiver) refuseOnce(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.refusedID[id] {
		return false
	}
	rc.refusedID[id] = true
	rc.refused.Add(1)
	return true
}

func (rc *hookReceiver) complain(format string, args ...any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.complaint = append(rc.complaint, fmt.Sprintf(format, args...))
}

func (rc *hookReceiver) hasSubject(id string) bool { return rc.bySubject(id) != nil }

func (rc *hookReceiver) bySubject(id string) *hookEvent {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.subjects[id]
}

func (rc *hookReceiver) byID(id string) *hookEvent {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.events[id]
}

func (rc *hookReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.events)
}

func (rc *hookReceiver) problems() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.complaint...)
}
