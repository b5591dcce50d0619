package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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
