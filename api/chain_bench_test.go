package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"payd"
	"payd/store/storetest"
)

// BenchmarkChainGET measures the common chain in process, without sockets:
// an authenticated GET /exchange-rates, the route the load test compares
// against a bare handler.
func BenchmarkChainGET(b *testing.B) {
	db := storetest.OpenSQLite(b)
	bd := setup(b, db)
	bd.srv.log = slog.New(slog.DiscardHandler)
	tb := bd.newBusiness(false)
	req := httptest.NewRequest("GET", BasePath+"/exchange-rates", nil)
	req.Header.Set("Authorization", "Bearer "+tb.live)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		bd.srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkChainPOST measures an idempotent POST that inserts one row,
// from 64 concurrent callers, in process: "read first" looks the key up
// before the handler runs, as a route not marked inTx does; "deferred" is
// an inTx route, whose key SQLite looks up only when needed.
func BenchmarkChainPOST(b *testing.B) {
	for _, inTx := range []bool{false, true} {
		name := map[bool]string{false: "read first", true: "deferred"}[inTx]
		b.Run(name, func(b *testing.B) { benchChainPOST(b, inTx) })
	}
}

func benchChainPOST(b *testing.B, inTx bool) {
	db := storetest.OpenSQLite(b)
	var srv *Server // the handler needs the server setup makes
	bd := setup(b, db, route{method: "POST", path: "/_test/objects", access: access{area: payd.AreaPayments, level: payd.AccessWrite},
		h: func(w http.ResponseWriter, r *http.Request) error { return benchCreate(srv)(w, r) }, inTx: inTx})
	srv = bd.srv
	bd.srv.log = slog.New(slog.DiscardHandler)
	tb := bd.newBusiness(false)
	var n atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", BasePath+"/_test/objects", strings.NewReader(`{"name":"widget"}`))
			req.Header.Set("Authorization", "Bearer "+tb.live)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "bench-"+strconv.FormatInt(n.Add(1), 10))
			w := httptest.NewRecorder()
			bd.srv.ServeHTTP(w, req)
			if w.Code != http.StatusCreated {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
}
