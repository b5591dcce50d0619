package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"payd"
	"payd/api"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/watch"
	"payd/web"
	"payd/webhook"
)

// runServe starts everything in one process: the API, the background
// workers and, with --dev, the devnet and the test clock. SIGTERM (ctx
// done) drains in-flight requests, then stops the workers.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("serve", stderr)
	cfg.addServeFlags(fs)
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	if err := cfg.checkCard(); err != nil {
		return err
	}
	log, err := cfg.logger(stderr)
	if err != nil {
		return err
	}
	proxies, err := cfg.proxies()
	if err != nil {
		return err
	}
	var clk clock.Clock = clock.Real{}
	var devClock *clock.Offset
	if cfg.Dev {
		devClock = clock.NewOffset()
		clk = devClock
	}
	db, err := store.Open(ctx, cfg.Database, clk, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrateStore(ctx, db); err != nil {
		return err
	}
	if err := checkServeMode(ctx, db, cfg.Dev); err != nil {
		return err
	}
	outbox, err := newOutbox(&cfg, db, clk, log)
	if err != nil {
		return err
	}
	rates, err := newRates(ctx, &cfg, db, clk, log)
	if err != nil {
		return err
	}
	defer rates.Stop()
	var counter api.RateCounter = api.NewMemoryCounter(clk)
	if db.Dialect() == "postgres" {
		counter = db // replicas share one budget
	}
	// Bind first: with --addr :0 the public URL, which every link and
	// payment url is built on, depends on the port the system chose.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	public, walletBase, err := cfg.urls(ln.Addr().String())
	if err != nil {
		return err
	}
	dn, err := openDevnet(ctx, cfg.Dev, db, clk, public+api.BasePath)
	if err != nil {
		return err
	}
	confs, err := cfg.confirmations()
	if err != nil {
		return err
	}
	nodes, err := openNodes(ctx, &cfg, getenv, rates, clk, log)
	if err != nil {
		return err
	}
	followers := newFollowers(db, nodes, clk, log, &cfg)
	nets := networks(dn, followers)
	warnUnpayable(log, nets)
	// --dev delivers to local receivers (http, loopback); production only
	// to public https addresses, checked at connect time.
	// The loop has a pool of its own, so the API cannot make it wait.
	loopDB, err := db.Lane(ctx, webhook.LaneConns)
	if err != nil {
		return err
	}
	defer loopDB.Close()
	metrics := newMetrics(&cfg, db, rates, clk, log)
	deliverer := webhook.NewDeliverer(loopDB, webhook.NewSender(webhook.ClientOptions{AllowPrivate: cfg.Dev, Clock: clk}),
		clk, log, webhook.DelivererOptions{Observe: metrics.delivered()})
	cards, err := newCard(&cfg, db, clk, public, dn, log)
	if err != nil {
		return err
	}
	opts := api.Options{Store: db, Clock: clk, Log: log, Rates: rates, Counter: counter,
		Dev: cfg.Dev, DevClock: devClock, Devnet: devnetControl(dn), TrustedProxies: proxies, PublicURL: public,
		Networks: nets, Confirmations: confs, Deliveries: deliverer, Card: cards.provider, Observer: metrics.observer()}
	if err := accountOptions(&opts, &cfg, db, clk, log, outbox != nil); err != nil {
		return err
	}
	srv, err := api.New(ctx, opts)
	if err != nil {
		return err
	}
	cards.connect(srv, log)
	deliverer.Start(ctx)
	defer deliverer.Stop()
	if outbox != nil {
		outbox.Start(ctx)
		defer outbox.Stop()
	}
	stop := startLoops(ctx, db, followers, nets, cards.provider, clk, log, srv)
	defer stop()
	reaper := api.NewReaper(db, clk, log, time.Minute)
	reaper.Start(ctx)
	defer reaper.Stop()
	indexer := store.NewSearchIndexer(db, clk, log)
	indexer.Start(ctx)
	defer indexer.Stop()
	folder := store.NewFolder(db, clk, log)
	folder.Start(ctx)
	defer folder.Stop()
	h, err := withPages(srv, clk, log, cfg.Dev, challengeWidget(&cfg), cards)
	if err != nil {
		return err
	}
	stopOps, err := metrics.serve(ctx, &cfg, log)
	if err != nil {
		return err
	}
	defer stopOps()
	return serveOn(ctx, &cfg, ln, metrics.wrap(h, clk), public+api.BasePath, walletBase, log)
}

// withPages serves the hosted checkout pages (/l/, /p/, /static/, and with
// --dev /dev/) and the sandbox card provider's pages (/sandbox/card/, with
// --card sandbox) beside the API, which answers every other path, all
// behind the Host check (edge_forbidden).
func withPages(srv *api.Server, clk clock.Clock, log *slog.Logger, dev bool, widget web.ChallengeWidget, cards *card) (http.Handler, error) {
	pages, err := web.New(web.Options{API: srv, APIBase: api.BasePath, Clock: clk, Log: log, Dev: dev, Challenge: widget})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	pages.Mount(mux)
	cards.mount(mux)
	return srv.Edge(mux), nil
}

// warnUnpayable says at start when no network can be paid on: without
// --dev and without --chain (the sandbox card provider needs --dev), so the
// pages then offer nothing and say so.
func warnUnpayable(log *slog.Logger, nets map[money.Network]payd.Network) {
	if len(nets) == 0 {
		log.Warn("no network can be paid on: no node is configured (--chain NETWORK=URL, docs/networks.md) and no card provider, " +
			"so checkout pages say the business cannot take payments right now and POST /checkouts answers asset_unavailable; " +
			"use --dev to take payments on the simulated devnet")
	}
}

// startLoops starts the followers of real nodes, a watcher per network,
// the expirer and, with a card provider, its poller; the returned func
// stops them and waits for runs in progress. Each follower makes its first run before the server answers,
// so its network's status is known (and logged) from the first request.
func startLoops(ctx context.Context, db *store.DB, followers map[money.Network]*watch.Follower,
	nets map[money.Network]payd.Network, cards payd.CardProvider, clk clock.Clock, log *slog.Logger, events payd.EventRecorder) func() {
	var stops []func()
	for _, n := range money.Networks {
		if f := followers[n]; f != nil {
			if err := f.RunOnce(ctx); err != nil {
				log.Error("the first read of a node failed; it is retried", slog.String("network", string(n)),
					slog.Any("error", err))
			}
			f.Start(ctx)
			stops = append(stops, f.Stop)
		}
	}
	for _, n := range money.Networks {
		if nets[n] == nil {
			continue
		}
		w := watch.NewWatcher(db, nets[n], clk, log, watch.Options{Events: events})
		w.Start(ctx)
		stops = append(stops, w.Stop)
	}
	var followed []money.Network
	for _, n := range money.Networks {
		if followers[n] != nil {
			followed = append(followed, n)
		}
	}
	e := watch.NewExpirer(db, clk, log, watch.Options{Events: events, Followed: followed})
	e.Start(ctx)
	stops = append(stops, e.Stop)
	if cards != nil {
		cp := watch.NewCardPoller(db, cards, clk, log, watch.Options{Events: events})
		cp.Start(ctx)
		stops = append(stops, cp.Stop)
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// serveOn serves on ln until ctx is done, then shuts down gracefully.
func serveOn(ctx context.Context, cfg *Config, ln net.Listener, h http.Handler, apiBase, walletBase string, log *slog.Logger) error {
	mode := "production"
	if cfg.Dev {
		mode = "dev"
	}
	hs := &http.Server{
		Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("payd started", slog.String("api_base_url", apiBase), slog.String("wallet_base_url", walletBase),
		slog.String("database", store.RedactDSN(cfg.Database)), slog.String("mode", mode))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", slog.Duration("timeout", cfg.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// runMigrate applies the embedded migrations and exits.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("migrate", stderr)
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	db, err := openStore(ctx, &cfg, stderr, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrated %s\n", store.RedactDSN(cfg.Database))
	return db.Close()
}
