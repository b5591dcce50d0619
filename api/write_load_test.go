package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"payd"
	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// TestWriteLoad is the write benchmark of issue 21 (docs/benchmarks.md,
// "Writes at scale"): for one busy business on each database, the real
// POST /payments and POST /checkouts against bare handlers that write the
// very rows each writes (captured from one real request, copied with fresh
// ids in one transaction through the same store), and the chain's test
// route against a bare one-row insert on the same pool. It runs only when
// asked:
//
//	PAYD_LOAD=1 go test -run TestWriteLoad -v -timeout 30m ./api
//
// PAYD_LOAD_CONNS clients (default 64), PAYD_LOAD_RUNS interleaved rounds
// (default 3) of PAYD_LOAD_SECONDS (default 10); PostgreSQL too with
// PAYD_TEST_POSTGRES; PAYD_LOAD_TARGETS as for TestLoad. Goals are logged,
// not asserted; an answer other than 201 fails the test.
func TestWriteLoad(t *testing.T) {
	if os.Getenv("PAYD_LOAD") == "" {
		t.Skip("set PAYD_LOAD=1 to run the write load benchmark")
	}
	runs, secs, conns := envInt("PAYD_LOAD_RUNS", 3), envInt("PAYD_LOAD_SECONDS", 10), envInt("PAYD_LOAD_CONNS", 64)
	dbs := []func(testing.TB) *store.DB{storetest.OpenSQLite}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbs = append(dbs, storetest.OpenPostgres)
	}
	var targets []loadTarget
	type goal struct {
		name, base string
		ratio      float64
		p99        float64 // ms, 0 for none
	}
	var goals []goal
	for _, open := range dbs {
		ts := writeTargets(t, open)
		d := ts[0].name[len(ts[0].name)-len("(sqlite)"):]
		if d != "(sqlite)" {
			d = "(postgres)"
		}
		p99 := 0.0
		if d == "(postgres)" {
			p99 = 50
		}
		goals = append(goals,
			goal{"payd POST /payments " + d, "same rows as POST /payments, bare " + d, 0.7, p99},
			goal{"payd POST /checkouts " + d, "same rows as POST /checkouts, bare " + d, 0.7, p99})
		if d == "(postgres)" {
			goals = append(goals, goal{"payd idempotent POST, test route " + d, "bare one-row insert " + d, 0.7, 0})
		}
		targets = append(targets, ts...)
	}
	targets = keepLoadTargets(targets, func(tg loadTarget) string { return tg.name })
	meds := runRounds(t, targets, runs, secs, conns)
	for _, g := range goals {
		m, b := meds[g.name], meds[g.base]
		if m.rps == 0 || b.rps == 0 {
			continue
		}
		ratio := m.rps / b.rps
		met := ratio >= g.ratio && (g.p99 == 0 || m.p99 < g.p99)
		t.Logf("%s / %s: %.0f%%, p99 %.1f ms (goal ≥ %.0f%%%s met: %t)", g.name, g.base, 100*ratio, m.p99, 100*g.ratio,
			map[bool]string{true: fmt.Sprintf(", p99 < %.0f ms", g.p99), false: ""}[g.p99 > 0], met)
	}
}

// writeTargets are one database's targets, in the order the rounds run
// them: each bare baseline beside what it is the baseline of.
func writeTargets(t *testing.T, open func(testing.TB) *store.DB) []loadTarget {
	db := open(t)
	d := " (" + db.Dialect() + ")"
	b, key, code := loadShop(t, db)
	// payd serve folds the rollups' deltas (a link's stats are read at
	// every checkout).
	folder := store.NewFolder(db, clock.Real{}, slog.New(slog.DiscardHandler))
	folder.Start(context.Background())
	t.Cleanup(folder.Stop)
	c := apiClient{base: b.base, hc: b.http.Client()}
	var n atomic.Int64
	paymentReq := func() *http.Request {
		req := jsonPost(b.base+"/payments", fmt.Sprintf(`{"amount":2500,"currency":"USD","description":"Print","metadata":{"order_id":"o-%d"}}`, n.Add(1)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "pay-"+strconv.FormatInt(n.Add(1), 10)+"-"+payd.RandomString(8))
		return req
	}
	checkoutReq := func() *http.Request { return checkoutRequest(b.base, code, "chk-"+payd.RandomString(6)+"-", n.Add(1)) }
	payment := sameRowsTarget(t, db, "same rows as POST /payments, bare"+d, func() error { return c.decode(paymentReq(), 201, nil) })
	checkout := sameRowsTarget(t, db, "same rows as POST /checkouts, bare"+d, func() error { return c.decode(checkoutReq(), 201, nil) })

	// The chain's test route and the bare insert it makes, each on a
	// database of its own with the same pool.
	var srv *Server
	tb := setup(t, open(t), route{method: "POST", path: "/_test/objects", access: access{area: payd.AreaPayments, level: payd.AccessWrite},
		h: func(w http.ResponseWriter, r *http.Request) error { return benchCreate(srv)(w, r) }, inTx: true})
	srv = tb.srv
	srv.log = b.srv.log
	live := tb.newBusiness(false).live
	bareDB := open(t)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := benchInsert(r.Context(), bareDB); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeRaw(w, http.StatusCreated, "application/json", []byte(`{"data":{}}`))
	}))
	t.Cleanup(bare.Close)
	var m atomic.Int64
	return []loadTarget{
		{name: "bare one-row insert" + d, next: func() *http.Request { return jsonPost(bare.URL+"/", `{"name":"widget"}`) }},
		{name: "payd idempotent POST, test route" + d, next: func() *http.Request {
			req := jsonPost(tb.base+"/_test/objects", `{"name":"widget"}`)
			req.Header.Set("Authorization", "Bearer "+live)
			req.Header.Set("Idempotency-Key", "obj-"+strconv.FormatInt(m.Add(1), 10)+"-"+payd.RandomString(8))
			return req
		}},
		payment,
		{name: "payd POST /payments" + d, next: paymentReq},
		checkout,
		{name: "payd POST /checkouts" + d, next: checkoutReq},
	}
}

// sameRowsTarget captures the rows one real request (send) inserts into
// db and serves a bare handler that inserts a fresh copy of them in one
// transaction per request.
func sameRowsTarget(t *testing.T, db *store.DB, name string, send func() error) loadTarget {
	set, err := db.RowsWritten(context.Background(), send)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", name, set.Tables())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := db.InsertCopy(r.Context(), set); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeRaw(w, http.StatusCreated, "application/json", []byte(`{"data":{}}`))
	}))
	t.Cleanup(hs.Close)
	return loadTarget{name: name, next: func() *http.Request { return jsonPost(hs.URL+"/", `{"name":"widget"}`) }}
}
