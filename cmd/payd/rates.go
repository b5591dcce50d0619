package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"payd"
	"payd/clock"
	"payd/rate"
)

// newRates starts the exchange-rate refresher: the static table with --dev
// or --rates static, the public sources (Coinbase, Kraken, CoinGecko for
// coins; the ECB and the Bank of Canada for fiat) combined by median
// otherwise (docs/rates.md).
func newRates(ctx context.Context, cfg *Config, st payd.RateStore, clk clock.Clock, log *slog.Logger) (*rate.Refresher, error) {
	var sources []payd.RateSource
	switch cfg.Rates {
	case "live", "static":
	default:
		return nil, usagef("--rates %q: use live or static", cfg.Rates)
	}
	if cfg.Dev || cfg.Rates == "static" {
		sources = []payd.RateSource{rate.NewStatic(rate.DevQuotes())}
	} else {
		// Proxies from the environment are ignored: rate fetches go direct.
		client := &http.Client{Timeout: rate.FetchTimeout + 5*time.Second, Transport: &http.Transport{Proxy: nil}}
		sources = []payd.RateSource{
			rate.NewCoinbase(client, ""), rate.NewKraken(client, ""),
			rate.NewCoinGecko(client, "", ""), rate.NewECB(client, "", clk), rate.NewBankOfCanada(client, ""),
		}
	}
	r := rate.NewRefresher(sources, st, clk, log, cfg.RateRefresh, cfg.RateMaxAge)
	r.Start(ctx)
	return r, nil
}
