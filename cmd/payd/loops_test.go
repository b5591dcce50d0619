package main

import (
	"context"
	"payd/chain/bitcoin"
	"payd/chain/bitcoin/btcdtest"
	"testing"
	"time"

	"payd"
	"payd/api"
	"payd/chain/devnet"
	"payd/clock"
	"payd/loop"
	"payd/loop/looptest"
	"payd/mail"
	"payd/money"
	"payd/rate"
	"payd/store"
	"payd/store/storetest"
	"payd/watch"
	"payd/webhook"
)

// TestLoopsStartStop holds every background loop that serve starts to the
// loop package's promises: Stop before Start and twice is harmless, and
// starting twice leaves no goroutine behind (store's WAL checkpointer, which
// Open starts, has the same check in store). Not parallel: it counts
// goroutines.
func TestLoopsStartStop(t *testing.T) {
	ctx := context.Background()
	clk, log := clock.Real{}, storetest.Logger(t)
	db, err := store.Open(ctx, storetest.SQLiteDSN(t), clk, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dn, err := devnet.New(ctx, db, clk, "http://127.0.0.1/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	btcd := btcdtest.Start(t)
	node, err := bitcoin.New(ctx, btcd.URL(), bitcoin.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	loops := []struct {
		name string
		new  func() loop.Service
	}{
		{"webhook.Deliverer", func() loop.Service {
			return webhook.NewDeliverer(db, webhook.NewSender(webhook.ClientOptions{Clock: clk}), clk, log, webhook.DelivererOptions{})
		}},
		{"watch.Watcher", func() loop.Service { return watch.NewWatcher(db, dn.Network(money.Bitcoin), clk, log, watch.Options{}) }},
		{"watch.Follower", func() loop.Service { return watch.NewFollower(db, node, clk, log, watch.FollowOptions{}) }},
		{"watch.Expirer", func() loop.Service { return watch.NewExpirer(db, clk, log, watch.Options{}) }},
		{"rate.Refresher", func() loop.Service {
			return rate.NewRefresher([]payd.RateSource{rate.NewStatic(rate.DevQuotes())}, db, clk, log, 0, 0)
		}},
		{"api.Reaper", func() loop.Service { return api.NewReaper(db, clk, log, time.Minute) }},
		{"store.SearchIndexer", func() loop.Service { return store.NewSearchIndexer(db, clk, log) }},
		{"store.Folder", func() loop.Service { return store.NewFolder(db, clk, log) }},
		{"mail.Outbox", func() loop.Service { return mail.NewOutbox(db, nil, clk, log, mail.OutboxOptions{}) }},
	}
	for _, l := range loops {
		t.Run(l.name, func(t *testing.T) { looptest.Check(t, l.new()) })
	}
}
