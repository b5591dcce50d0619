package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// thingServer is a test resource whose every creation is visible, so that a
// replay can be told from a second run.
type thingServer struct {
	runs    atomic.Int64
	fail    atomic.Bool
	started chan struct{}
	release chan struct{}
}

type thingRequest struct {
	Name string `json:"name"`
}

func (ts *thingServer) create(w http.ResponseWriter, r *http.Request) error {
	var req thingRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	ts.runs.Add(1)
	if ts.fail.Load() {
		return payd.FieldError("name", "refused for the test")
	}
	if req.Name == "slow" {
		close(ts.started)
		<-ts.release
	}
	writeJSON(w, http.StatusCreated, single{map[string]string{"id": payd.NewID("thg_"), "name": req.Name}})
	return nil
}

// TestIdempotency covers spec 4.8 rules 1–10 on both databases.
func TestIdempotency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ts := &thingServer{started: make(chan struct{}), release: make(chan struct{})}
		keyed := access{area: payd.AreaPayments, level: payd.AccessWrite}
		b := setup(t, db,
			route{method: "POST", path: "/_test/things", access: keyed, h: ts.create},
			route{method: "POST", path: "/_test/other", access: keyed, h: ts.create},
			route{method: "POST", path: "/_test/required", access: public, idem: idemRequired, h: ts.create},
			route{method: "POST", path: "/_test/secrets", access: keyed, idem: idemIgnored, h: ts.create},
			route{method: "PATCH", path: "/_test/things", access: keyed, h: ts.create},
		)
		biz := b.newBusiness(false)
		post := func(path, key, idem, body string) *response {
			t.Helper()
			hdr := map[string]string{}
			if idem != "" {
				hdr["Idempotency-Key"] = idem
			}
			return b.do(request{method: "POST", path: path, key: key, body: body, header: hdr})
		}
		t.Run("rule 1: key length", func(t *testing.T) {
			for _, k := range []string{strings.Repeat("k", 256), "has space", "tab\tkey"} {
				r := post("/_test/things", biz.live, k, `{"name":"a"}`)
				if code, field := r.errorCode(t); r.status != 400 || code != "invalid_request" || field != "Idempotency-Key" {
					t.Fatalf("%q: %d %s", k, r.status, r.body)
				}
			}
			if r := post("/_test/things", biz.live, strings.Repeat("k", 255), `{"name":"a"}`); r.status != 201 {
				t.Fatalf("255 characters: %d", r.status)
			}
		})
		t.Run("rule 2: 2xx replayed byte for byte with Idempotent-Replayed", func(t *testing.T) {
			before := ts.runs.Load()
			first := post("/_test/things", biz.live, "k-replay", `{"name":"a"}`)
			again := post("/_test/things", biz.live, "k-replay", `{"name":"a"}`)
			if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) {
				t.Fatalf("replay differs: %s / %s", first.body, again.body)
			}
			if first.header.Get("Idempotent-Replayed") != "" || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("Idempotent-Replayed: %q then %q", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
			}
			if first.header.Get("Service-Request-Id") == again.header.Get("Service-Request-Id") {
				t.Fatalf("a replay is a new request with its own id")
			}
			if ts.runs.Load() != before+1 {
				t.Fatalf("handler ran %d times", ts.runs.Load()-before)
			}
		})
		t.Run("rule 3: an error frees the key", func(t *testing.T) {
			ts.fail.Store(true)
			if r := post("/_test/things", biz.live, "k-err", `{"name":"a"}`); r.status != 400 {
				t.Fatalf("%d", r.status)
			}
			ts.fail.Store(false)
			if r := post("/_test/things", biz.live, "k-err", `{"name":"a"}`); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%d %v", r.status, r.header)
			}
		})
		t.Run("rule 4: same key, other method path or body", func(t *testing.T) {
			post("/_test/things", biz.live, "k-reuse", `{"name":"a"}`)
			for _, r := range []*response{
				post("/_test/things", biz.live, "k-reuse", `{"name":"b"}`),
				post("/_test/other", biz.live, "k-reuse", `{"name":"a"}`),
			} {
				if code, _ := r.errorCode(t); r.status != 409 || code != "idempotency_key_reused" {
					t.Fatalf("%d %s", r.status, r.body)
				}
			}
		})
		t.Run("rule 5: in use while the first runs", func(t *testing.T) {
			var wg sync.WaitGroup
			var first *response
			wg.Add(1)
			go func() { defer wg.Done(); first = post("/_test/things", biz.live, "k-slow", `{"name":"slow"}`) }()
			<-ts.started
			r := post("/_test/things", biz.live, "k-slow", `{"name":"slow"}`)
			if code, _ := r.errorCode(t); r.status != 409 || code != "idempotency_key_in_use" {
				t.Errorf("retry while running: %d %s", r.status, r.body)
			}
			close(ts.release)
			wg.Wait()
			if first.status != 201 {
				t.Fatalf("first: %d", first.status)
			}
			if r := post("/_test/things", biz.live, "k-slow", `{"name":"slow"}`); r.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("after: %d", r.status)
			}
		})
		t.Run("rule 5: concurrent first requests run once", func(t *testing.T) {
			before := ts.runs.Load()
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); post("/_test/things", biz.live, "k-race", `{"name":"r"}`) }()
			}
			wg.Wait()
			if n := ts.runs.Load() - before; n != 1 {
				t.Fatalf("handler ran %d times", n)
			}
		})
		t.Run("rule 6: scoped per business", func(t *testing.T) {
			other := b.newBusiness(false)
			a := post("/_test/things", biz.live, "k-scope", `{"name":"a"}`)
			o := post("/_test/things", other.live, "k-scope", `{"name":"a"}`)
			if o.status != 201 || o.header.Get("Idempotent-Replayed") != "" || string(a.body) == string(o.body) {
				t.Fatalf("another business's key must be its own: %s %s", a.body, o.body)
			}
		})
		t.Run("rules 7 and 8: keyless calls store key and body together; required key", func(t *testing.T) {
			if r := post("/_test/required", "", "", `{"name":"a"}`); r.status != 400 {
				t.Fatalf("%d", r.status)
			} else if code, _ := r.errorCode(t); code != "idempotency_key_required" {
				t.Fatalf("%s", code)
			}
			a := post("/_test/required", "", "k-pub", `{"name":"a"}`)
			a2 := post("/_test/required", "", "k-pub", `{"name":"a"}`)
			c := post("/_test/required", "", "k-pub", `{"name":"c"}`)
			if a2.header.Get("Idempotent-Replayed") != "true" || string(a.body) != string(a2.body) {
				t.Fatalf("same key and body must replay")
			}
			if c.status != 201 || c.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("same key, other body must be a new request: %d", c.status)
			}
		})
		t.Run("rule 9: PATCH ignores the header", func(t *testing.T) {
			h := map[string]string{"Idempotency-Key": "k-patch"}
			r1 := b.do(request{method: "PATCH", path: "/_test/things", key: biz.live, body: `{"name":"a"}`, header: h})
			r2 := b.do(request{method: "PATCH", path: "/_test/things", key: biz.live, body: `{"name":"a"}`, header: h})
			if string(r1.body) == string(r2.body) || r2.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("PATCH must run each time")
			}
		})
		t.Run("rule 10: routes that return a secret ignore the key", func(t *testing.T) {
			r1 := post("/_test/secrets", biz.live, "k-sec", `{"name":"a"}`)
			r2 := post("/_test/secrets", biz.live, "k-sec", `{"name":"a"}`)
			if string(r1.body) == string(r2.body) {
				t.Fatalf("a retried secret-returning POST creates again")
			}
		})
		t.Run("expiry after 24 hours and the reaper", func(t *testing.T) {
			first := post("/_test/things", biz.live, "k-exp", `{"name":"a"}`)
			b.clock.Advance(23 * time.Hour)
			if r := post("/_test/things", biz.live, "k-exp", `{"name":"a"}`); string(r.body) != string(first.body) {
				t.Fatalf("replayed within 24 h")
			}
			b.clock.Advance(time.Hour)
			if r := post("/_test/things", biz.live, "k-exp", `{"name":"a"}`); string(r.body) == string(first.body) {
				t.Fatalf("not replayed after 24 h")
			}
			b.clock.Advance(25 * time.Hour)
			rp := NewReaper(db, b.clock, b.srv.log, time.Minute)
			if err := rp.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			held, err := db.ClaimIdempotencyKey(context.Background(), &payd.IdempotencyRecord{Scope: biz.biz.ID, Key: "k-exp",
				Method: "POST", Path: "/x", CreatedAt: b.clock.Now(), LockedUntil: b.clock.Now().Add(time.Minute), ExpiresAt: b.clock.Now().Add(time.Hour)}, b.clock.Now())
			if err != nil || held != nil {
				t.Fatalf("reaped key should be free: %v %v", held, err)
			}
		})
	})
}

// storedThing creates a pause row (a stand-in for any object) through
// writeTx, failing after its write when asked, so that tests can see the
// change and its stored response commit together or not at all.
func storedThing(s **Server) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req thingRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		return (*s).writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
			if err := q.SetPause(ctx, payd.Pause{Name: "thing:" + req.Name + ":" + payd.NewID(""), PausedAt: (*s).clock.Now()}); err != nil {
				return nil, err
			}
			if strings.HasPrefix(req.Name, "fail") {
				return nil, payd.FieldError("name", "refused after the write")
			}
			return map[string]string{"id": payd.NewID("thg_"), "name": req.Name}, nil
		})
	}
}

// countThings counts the rows storedThing made for name.
func countThings(t *testing.T, db *store.DB, name string) int {
	t.Helper()
	ps, err := db.Pauses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if strings.HasPrefix(p.Name, "thing:"+name+":") {
			n++
		}
	}
	return n
}

// TestWriteTx checks that a writing handler's change and its stored
// response commit in one transaction.
func TestWriteTx(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var srv *Server
		b := setup(t, db, route{method: "POST", path: "/_test/stored", access: access{area: payd.AreaPayments, level: payd.AccessWrite}, h: storedThing(&srv)})
		srv = b.srv
		biz := b.newBusiness(false)
		post := func(idem, name string) *response {
			return b.do(request{method: "POST", path: "/_test/stored", key: biz.live, body: `{"name":"` + name + `"}`,
				header: map[string]string{"Idempotency-Key": idem}})
		}
		first, again := post("w-1", "a"), post("w-1", "a")
		if first.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || string(first.body) != string(again.body) {
			t.Fatalf("replay: %d %s / %s", first.status, first.body, again.body)
		}
		if n := countThings(t, db, "a"); n != 1 {
			t.Fatalf("the change ran %d times", n)
		}
		for i := 0; i < 2; i++ {
			r := post("w-2", "fail")
			if code, _ := r.errorCode(t); r.status != 400 || code != "invalid_request" {
				t.Fatalf("attempt %d: %d %s", i, r.status, r.body)
			}
		}
		if n := countThings(t, db, "fail"); n != 0 {
			t.Fatalf("a failed change left %d rows", n)
		}
		// A request whose claim lapsed and was taken over cannot commit: its
		// change is undone with the refused completion.
		now := b.clock.Now()
		stale := &payd.IdempotencyRecord{Scope: biz.biz.ID, Key: "w-3", Method: "POST", Path: BasePath + "/_test/stored",
			BodyHash: hashHex([]byte(`{"name":"late"}`)), CreatedAt: now.Add(-time.Hour), LockedUntil: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}
		if held, err := db.ClaimIdempotencyKey(context.Background(), stale, now.Add(-time.Hour)); err != nil || held != nil {
			t.Fatalf("stale claim: %v %v", held, err)
		}
		r := post("w-3", "late")
		if r.status != 201 || countThings(t, db, "late") != 1 {
			t.Fatalf("the lapsed claim is taken over: %d %s", r.status, r.body)
		}
		ctx := context.Background()
		err := db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			return q.CompleteIdempotencyKey(ctx, stale, 201, "application/json", []byte("{}"))
		})
		if !payd.IsNotFound(err) {
			t.Fatalf("the lapsed request completed the new claim: %v", err)
		}
	})
}

// TestIdempotencyAcrossReplicas runs two API servers, each with its own
// store, on one PostgreSQL database, as two `payd serve` processes would:
// concurrent first requests with one key, spread over both, run once, and
// the other replica replays the stored response: for a route that claims
// the key in the database first, and for an inTx route, which claims it
// only in memory and meets the other replica's record at the upsert.
func TestIdempotencyAcrossReplicas(t *testing.T) {
	for _, inTx := range []bool{false, true} {
		t.Run(fmt.Sprintf("inTx=%t", inTx), func(t *testing.T) { testIdempotencyAcrossReplicas(t, inTx) })
	}
}

func testIdempotencyAcrossReplicas(t *testing.T, inTx bool) {
	dsn := storetest.PostgresDSN(t)
	var srv1, srv2 *Server
	rt := func(s **Server) route {
		return route{method: "POST", path: "/_test/stored", access: access{area: payd.AreaPayments, level: payd.AccessWrite}, h: storedThing(s), inTx: inTx}
	}
	db1 := storetest.OpenDSN(t, dsn, clock.Real{})
	b1 := setup(t, db1, rt(&srv1))
	b2 := setup(t, storetest.OpenDSN(t, dsn, clock.Real{}), rt(&srv2))
	srv1, srv2 = b1.srv, b2.srv
	biz := b1.newBusiness(false)
	var wg sync.WaitGroup
	results := make([]*response, 20)
	for i := range results {
		b := []*bundle{b1, b2}[i%2]
		wg.Go(func() {
			results[i] = b.do(request{method: "POST", path: "/_test/stored", key: biz.live, body: `{"name":"replica"}`,
				header: map[string]string{"Idempotency-Key": "replicated"}})
		})
	}
	wg.Wait()
	var created []byte
	for _, r := range results {
		switch r.status {
		case 201:
			if created != nil && string(created) != string(r.body) {
				t.Fatalf("two different responses: %s / %s", created, r.body)
			}
			created = r.body
		case 409:
			if code, _ := r.errorCode(t); code != "idempotency_key_in_use" {
				t.Fatalf("409 %s", r.body)
			}
		default:
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	if n := countThings(t, db1, "replica"); n != 1 {
		t.Fatalf("the change ran %d times across replicas", n)
	}
	if r := b2.do(request{method: "POST", path: "/_test/stored", key: biz.live, body: `{"name":"replica"}`,
		header: map[string]string{"Idempotency-Key": "replicated"}}); r.header.Get("Idempotent-Replayed") != "true" || string(r.body) != string(created) {
		t.Fatalf("the other replica does not replay: %d %s", r.status, r.body)
	}
}

// TestDeferredClaim covers an inTx route, whose stored record SQLite reads
// only when the change meets it or the handler fails (Server.idempotent):
// every answer must be what an up-front read would have given.
func TestDeferredClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var srv *Server
		var failFirst atomic.Bool
		h := func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("X-Handler-Ran", "yes")
			if failFirst.Load() {
				return payd.Errorf(payd.ErrLinkDisabled, "refused before any change")
			}
			return storedThing(&srv)(w, r)
		}
		b := setup(t, db, route{method: "POST", path: "/_test/deferred", access: access{area: payd.AreaPayments, level: payd.AccessWrite}, h: h, inTx: true})
		srv = b.srv
		biz := b.newBusiness(false)
		post := func(idem, name string) *response {
			t.Helper()
			return b.do(request{method: "POST", path: "/_test/deferred", key: biz.live, body: `{"name":"` + name + `"}`,
				header: map[string]string{"Idempotency-Key": idem}})
		}
		first := post("d-1", "a")
		if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		again := post("d-1", "a")
		if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Fatalf("replay: %d %s / %s", again.status, again.body, first.body)
		}
		if n := countThings(t, db, "a"); n != 1 {
			t.Fatalf("the change committed %d times", n)
		}
		if r := post("d-1", "b"); r.status != 409 || countThings(t, db, "b") != 0 {
			t.Fatalf("reused key: %d %s, %d changes", r.status, r.body, countThings(t, db, "b"))
		} else if code, _ := r.errorCode(t); code != "idempotency_key_reused" {
			t.Fatalf("reused key: %s", code)
		}
		// A retry whose handler would now fail still gets the stored answer,
		// without the failed run's headers.
		failFirst.Store(true)
		r := post("d-1", "a")
		if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" || string(r.body) != string(first.body) || r.header.Get("X-Handler-Ran") != "" {
			t.Fatalf("replay over a failing handler: %d %s %v", r.status, r.body, r.header)
		}
		if r := post("d-2", "c"); r.status != 409 {
			t.Fatalf("a new key's failure is its own: %d %s", r.status, r.body)
		} else if code, _ := r.errorCode(t); code != "link_disabled" {
			t.Fatalf("a new key's failure is its own: %s", code)
		}
		failFirst.Store(false)
		if r := post("d-2", "c"); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" || countThings(t, db, "c") != 1 {
			t.Fatalf("after a failure the key is free: %d %s", r.status, r.body)
		}
		// A change that fails after its write leaves nothing and frees the key.
		if r := post("d-3", "fail"); r.status != 400 || countThings(t, db, "fail") != 0 {
			t.Fatalf("failed change: %d %s", r.status, r.body)
		}
		// Concurrent first requests with one key: one change, one answer.
		before := countThings(t, db, "race")
		var wg sync.WaitGroup
		bodies := make([]*response, 16)
		for i := range bodies {
			wg.Go(func() { bodies[i] = post("d-race", "race") })
		}
		wg.Wait()
		if n := countThings(t, db, "race") - before; n != 1 {
			t.Fatalf("concurrent first requests committed %d changes", n)
		}
		var created string
		for _, r := range bodies {
			if r.status == 201 {
				if created != "" && created != string(r.body) {
					t.Fatalf("two answers: %s / %s", created, r.body)
				}
				created = string(r.body)
			} else if code, _ := r.errorCode(t); r.status != 409 || code != "idempotency_key_in_use" {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
	})
}
