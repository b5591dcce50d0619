package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestLoad measures the full middleware chain against bare handlers in one
// run with wrk (issue: foundation, "Done when"). It runs only when asked:
//
//	PAYD_LOAD=1 go test -run TestLoad -v -timeout 30m ./api
//
// Each target runs PAYD_LOAD_RUNS times (default 3) for PAYD_LOAD_SECONDS
// (default 10) with PAYD_LOAD_CONNS connections (default 64); the medians
// and ratios are printed. PAYD_LOAD_TARGETS, a regular expression, keeps
// only the targets whose names match (for profiling one of them).
func TestLoad(t *testing.T) {
	if os.Getenv("PAYD_LOAD") == "" {
		t.Skip("set PAYD_LOAD=1 to run the load benchmark (needs wrk)")
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed (apt-get install wrk)")
	}
	runs, secs, conns := envInt("PAYD_LOAD_RUNS", 3), envInt("PAYD_LOAD_SECONDS", 10), envInt("PAYD_LOAD_CONNS", 64)
	lua := writeLua(t)
	type target struct {
		name, url, script string
	}
	var targets []target

	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusOK, "application/json", []byte(`{"data":{"kind":"exchange_rates"}}`))
	}))
	defer bare.Close()
	targets = append(targets, target{"bare net/http GET", bare.URL + "/", ""})

	insertDB := storetest.OpenSQLite(t)
	bareInsert := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := benchInsert(r.Context(), insertDB); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeRaw(w, http.StatusCreated, "application/json", []byte(`{"data":{}}`))
	}))
	defer bareInsert.Close()
	targets = append(targets, target{"bare group-committed SQLite insert (FULL)", bareInsert.URL + "/", lua})

	dbs := []*store.DB{storetest.OpenSQLite(t)}
	if os.Getenv("PAYD_TEST_POSTGRES") != "" {
		dbs = append(dbs, storetest.OpenPostgres(t))
	}
	for _, db := range dbs {
		var srv *Server // the handler needs the server setup makes
		b := setup(t, db, route{method: "POST", path: "/_test/objects", access: access{area: payd.AreaPayments, level: payd.AccessWrite},
			h: func(w http.ResponseWriter, r *http.Request) error { return benchCreate(srv)(w, r) }, inTx: true})
		srv = b.srv
		b.srv.log = slog.New(slog.DiscardHandler) // keep the access log off the measurement
		tb := b.newBusiness(false)
		if db.Dialect() == "sqlite" {
			targets = append(targets, target{"payd GET /exchange-rates (key, sqlite)", b.base + "/exchange-rates?key=" + tb.live, lua})
		}
		targets = append(targets, target{"payd idempotent POST (key, " + db.Dialect() + ")", b.base + "/_test/objects?key=" + tb.live, lua})
	}

	targets = keepLoadTargets(targets, func(tg target) string { return tg.name })
	// Rounds interleave the targets, so that the machine's load and the
	// tables' growth weigh on each alike.
	type series struct{ rps, p50, p99 []float64 }
	all := make([]series, len(targets))
	for range runs {
		for i, tg := range targets {
			r := runWrk(t, tg.url, tg.script, secs, conns)
			all[i].rps, all[i].p50, all[i].p99 = append(all[i].rps, r.rps), append(all[i].p50, r.p50), append(all[i].p99, r.p99)
		}
	}
	t.Logf("wrk: 2 threads, %d connections, %d s per run, %d rounds", conns, secs, runs)
	results := map[string]loadResult{}
	for i, tg := range targets {
		a := all[i]
		results[tg.name] = loadResult{median(a.rps), median(a.p50), median(a.p99)}
		t.Logf("%-45s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (runs: %.0f; p99s: %.1f)", tg.name, median(a.rps), median(a.p50), median(a.p99), a.rps, a.p99)
	}
	get, post := results["payd GET /exchange-rates (key, sqlite)"], results["payd idempotent POST (key, sqlite)"]
	t.Logf("GET  full chain / bare handler:        %.0f%%", 100*get.rps/results["bare net/http GET"].rps)
	t.Logf("POST full chain / bare SQLite insert:  %.0f%%", 100*post.rps/results["bare group-committed SQLite insert (FULL)"].rps)
}

type loadResult struct{ rps, p50, p99 float64 }

// keepLoadTargets keeps the targets whose names match PAYD_LOAD_TARGETS, a
// regular expression (all of them when it is unset).
func keepLoadTargets[T any](targets []T, name func(T) string) []T {
	re := os.Getenv("PAYD_LOAD_TARGETS")
	if re == "" {
		return targets
	}
	keep := regexp.MustCompile(re)
	return slices.DeleteFunc(targets, func(tg T) bool { return !keep.MatchString(name(tg)) })
}

// benchCreate is the small object the POST measurement creates: one row,
// written through the same store call as the bare insert handler, answered
// the way every writing handler answers (writeTx).
func benchCreate(s *Server) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req thingRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
			if err := benchInsert(ctx, q); err != nil {
				return nil, err
			}
			return map[string]string{"id": payd.NewID("obj_"), "name": req.Name}, nil
		})
	}
}

func benchInsert(ctx context.Context, db payd.PauseStore) error {
	return db.SetPause(ctx, payd.Pause{Name: "bench:" + payd.NewID(""), Reason: "load test"})
}

// writeLua writes the wrk script: POSTs carry a unique Idempotency-Key, and
// the key query parameter becomes the Authorization header.
func writeLua(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "post.lua")
	script := `
local n = 0
local threads = 0
-- setup runs in the main state; tid becomes a global of each thread's state.
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
function init(args)
  math.randomseed(os.time() * 1000 + tid) -- no key repeats across runs
  local key = wrk.path:match("key=([%w_]+)")
  wrk.path = wrk.path:gsub("%?key=.*", "")
  if key then wrk.headers["Authorization"] = "Bearer " .. key end
  wrk.headers["Content-Type"] = "application/json"
  if not wrk.path:match("exchange%-rates") then wrk.method = "POST"; wrk.body = '{"name":"widget"}' end
end
function request()
  n = n + 1
  if wrk.method == "POST" then
    wrk.headers["Idempotency-Key"] = "load-" .. tid .. "-" .. n .. "-" .. math.random(1000000000)
  end
  return wrk.format()
end
local shown = false
function response(status, headers, body)
  if status >= 300 and not shown then shown = true; io.write("first failure: ", status, " ", body, "\n") end
end
`
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	rpsRe = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	latRe = regexp.MustCompile(`(?m)^\s+(50|99)(?:\.000)?%\s+([0-9.]+)(us|ms|s)`)
	badRe = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// runWrk runs wrk once and parses requests/s and the p50/p99 latencies.
func runWrk(t *testing.T, url, script string, secs, conns int) loadResult {
	t.Helper()
	args := []string{"-t2", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(secs) + "s", "--latency"}
	if script != "" {
		args = append(args, "-s", script)
	}
	out, err := exec.Command("wrk", append(args, url)...).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	if m := badRe.FindSubmatch(out); m != nil {
		t.Fatalf("%s: %s non-2xx responses\n%s", url, m[1], out)
	}
	var r loadResult
	if m := rpsRe.FindSubmatch(out); m != nil {
		r.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	for _, m := range latRe.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		v *= map[string]float64{"us": 0.001, "ms": 1, "s": 1000}[string(m[3])]
		if string(m[1]) == "50" {
			r.p50 = v
		} else {
			r.p99 = v
		}
	}
	return r
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
