// Package ops is what payd shows its operator beside the API, on the
// listener of --ops-addr (CONTRACT.md, docs/operations.md): Prometheus
// metrics at /metrics and Go's profiler under /debug/pprof/. It never
// serves on the public listener: profiles and metrics describe the
// machine and the traffic, not a business.
package ops

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"payd"
	"payd/clock"
)

// State is what the metrics read when they are scraped, rather than count
// as it happens: the store's pools and figures, the followers' status and
// the exchange rates. Any func may be nil; its families are then left out.
type State struct {
	Pools         func() map[string]payd.PoolStats
	WriterQueue   func() int
	Chains        func(ctx context.Context) ([]payd.ChainStatus, error)
	Rates         func(ctx context.Context) (*payd.ExchangeRates, error)
	PaymentTotals func(ctx context.Context) (map[payd.PaymentStatus]int64, error)
}

// Metrics are payd's Prometheus metrics (docs/operations.md, "Metrics").
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	deliveries  *prometheus.CounterVec
	deliveryLag prometheus.Histogram
	checkouts   *prometheus.CounterVec
}

// New makes the metrics; state is read at each scrape, on clk.
func New(state State, clk clock.Clock, log *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "payd_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_webhook_deliveries_total",
			Help: "Automatic webhook delivery attempts, by outcome: succeeded, failed (retried or given up), dropped."},
			[]string{"outcome"}),
		deliveryLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "payd_webhook_delivery_lag_seconds",
			Help:    "From an event's delivery being created (its commit) to the end of its first attempt.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}),
		checkouts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payd_checkouts_opened_total",
			Help: "Checkouts opened by this process, by rail and network (empty for a card checkout's own)."},
			[]string{"rail", "network"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.deliveries, m.deliveryLag, m.checkouts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{state: state, clock: clk, log: log})
	return m
}

// Handler serves /metrics and /debug/pprof/ for the ops listener.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// HTTP counts and times every request next answers, labelled by the
// pattern of the route that served it (the request's Pattern once the
// muxes have routed it: "POST /api/v1/payments", "GET /p/{code}"), never
// by the path, whose ids would make a series per payment.
func (m *Metrics) HTTP(next http.Handler, clk clock.Clock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := clk.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(route, strconv.Itoa(rec.code)).Inc()
		m.latency.WithLabelValues(route).Observe(clk.Now().Sub(start).Seconds())
	})
}

// Delivered records one automatic webhook attempt's outcome and, for a
// delivery's first attempt, how long after its creation it ended.
func (m *Metrics) Delivered(outcome string, first bool, lag time.Duration) {
	m.deliveries.WithLabelValues(outcome).Inc()
	if first {
		m.deliveryLag.Observe(lag.Seconds())
	}
}

// CheckoutOpened counts a checkout opened on rail and network.
func (m *Metrics) CheckoutOpened(rail, network string) {
	m.checkouts.WithLabelValues(rail, network).Inc()
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines) through the recorder.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
