package ops

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"payd"
	"payd/clock"
)

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 5 * time.Second

var (
	poolOpen = prometheus.NewDesc("payd_db_connections", "Database connections by pool and state (in_use, idle).",
		[]string{"pool", "state"}, nil)
	poolWaits = prometheus.NewDesc("payd_db_waits_total", "Times a request waited for a connection of the pool.",
		[]string{"pool"}, nil)
	poolWaited = prometheus.NewDesc("payd_db_wait_seconds_total", "Time spent waiting for connections of the pool.",
		[]string{"pool"}, nil)
	writerQueue = prometheus.NewDesc("payd_db_writer_queue", "Write jobs waiting for SQLite's one writer (0 on PostgreSQL).",
		nil, nil)
	chainTip = prometheus.NewDesc("payd_chain_tip_height", "The followed node's best block, by network.",
		[]string{"network"}, nil)
	chainHead = prometheus.NewDesc("payd_chain_head_height", "The last block the follower processed, by network.",
		[]string{"network"}, nil)
	chainLag = prometheus.NewDesc("payd_chain_lag_blocks", "How many blocks the follower is behind the node's tip.",
		[]string{"network"}, nil)
	chainErr = prometheus.NewDesc("payd_chain_error", "1 while the network's node cannot be read, else 0.",
		[]string{"network"}, nil)
	chainAge = prometheus.NewDesc("payd_chain_read_age_seconds", "Time since any replica last read the network's node.",
		[]string{"network"}, nil)
	ratesAge  = prometheus.NewDesc("payd_rates_age_seconds", "Age of the newest exchange-rate snapshot.", nil, nil)
	sourceAge = prometheus.NewDesc("payd_rate_source_age_seconds",
		"Age of each rate source's values in the newest snapshot (from their reference date).", []string{"source"}, nil)
	sourceUp = prometheus.NewDesc("payd_rate_source_up",
		"1 when the source answered the newest snapshot's refresh, 0 when it failed or was replaced by its cached report.",
		[]string{"source"}, nil)
	payments = prometheus.NewDesc("payd_payments", "Payments of every business by status.", []string{"status"}, nil)
)

// stateCollector reads State at each scrape.
type stateCollector struct {
	state State
	clock clock.Clock
	log   *slog.Logger
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolOpen, poolWaits, poolWaited, writerQueue, chainTip, chainHead, chainLag,
		chainErr, chainAge, ratesAge, sourceAge, sourceUp, payments} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := c.clock.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	failed := func(what string, err error) {
		c.log.Warn("metrics: reading the state failed", slog.String("what", what), slog.Any("error", err))
	}
	if c.state.Pools != nil {
		for name, s := range c.state.Pools() {
			gauge(poolOpen, float64(s.InUse), name, "in_use")
			gauge(poolOpen, float64(s.Idle), name, "idle")
			counter(poolWaits, float64(s.WaitCount), name)
			counter(poolWaited, s.WaitDuration.Seconds(), name)
		}
	}
	if c.state.WriterQueue != nil {
		gauge(writerQueue, float64(c.state.WriterQueue()))
	}
	if c.state.Chains != nil {
		all, err := c.state.Chains(ctx)
		if err != nil {
			failed("chains", err)
		}
		for _, s := range all {
			n := string(s.Network)
			gauge(chainTip, float64(s.Tip.Height), n)
			gauge(chainHead, float64(s.Head.Height), n)
			gauge(chainLag, float64(s.Lag()), n)
			e := 0.0
			if s.Error != "" {
				e = 1
			}
			gauge(chainErr, e, n)
			gauge(chainAge, now.Sub(s.CheckedAt).Seconds(), n)
		}
	}
	if c.state.Rates != nil {
		x, err := c.state.Rates(ctx)
		if err != nil {
			failed("rates", err)
		} else {
			gauge(ratesAge, now.Sub(x.CreatedAt).Seconds())
			if x.Detail != nil {
				for _, s := range x.Detail.Sources {
					up := 0.0
					if s.Status == payd.SourceAnswered {
						up = 1
					}
					gauge(sourceUp, up, s.Name)
					if !s.AsOf.IsZero() {
						gauge(sourceAge, now.Sub(s.AsOf).Seconds(), s.Name)
					}
				}
			}
		}
	}
	if c.state.PaymentTotals != nil {
		totals, err := c.state.PaymentTotals(ctx)
		if err != nil {
			failed("payments", err)
		}
		for s, n := range totals {
			gauge(payments, float64(n), string(s))
		}
	}
}
