package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"payd/api"
	"payd/clock"
	"payd/ops"
	"payd/store"
)

// opsServer is the operator's listener of --ops-addr, or nothing without
// it: every method of a nil one does nothing.
type opsServer struct {
	m *ops.Metrics
}

// newMetrics makes the metrics when --ops-addr is set, reading the state
// of db and the rates at each scrape.
func newMetrics(cfg *Config, db *store.DB, rates pricer, clk clock.Clock, log *slog.Logger) *opsServer {
	if cfg.OpsAddr == "" {
		return nil
	}
	return &opsServer{m: ops.New(ops.State{
		Pools:         db.PoolStats,
		WriterQueue:   db.WriterQueue,
		Chains:        db.ChainStatuses,
		Rates:         rates.Latest,
		PaymentTotals: db.PaymentStatusTotals,
	}, clk, log)}
}

// delivered is the webhook deliverer's Observe.
func (o *opsServer) delivered() func(string, bool, time.Duration) {
	if o == nil {
		return nil
	}
	return o.m.Delivered
}

// observer is the API's Observer.
func (o *opsServer) observer() api.Observer {
	if o == nil {
		return nil
	}
	return o.m
}

// wrap counts and times the requests h answers.
func (o *opsServer) wrap(h http.Handler, clk clock.Clock) http.Handler {
	if o == nil {
		return h
	}
	return o.m.HTTP(h, clk)
}

// serve listens on --ops-addr until ctx ends; the returned func stops it.
func (o *opsServer) serve(ctx context.Context, cfg *Config, log *slog.Logger) (func(), error) {
	if o == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", cfg.OpsAddr)
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: o.m.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("the ops listener stopped", slog.Any("error", err))
		}
	}()
	log.Info("ops listener: metrics and profiles", slog.String("metrics_url", "http://"+ln.Addr().String()+"/metrics"))
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}, nil
}
