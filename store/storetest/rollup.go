package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// rollupView is everything a reader sees of the rollups: the daily totals,
// status counts, and the stats of customers and links, read one by one
// and listed.
type rollupView struct {
	days      map[dayKey]payd.PaymentDay
	counts    map[payd.PaymentStatus]int64
	customers map[string]payd.Stats
	listed    map[string]payd.Stats
	link      payd.Stats
	links     map[string]payd.Stats
}

// testFoldRollups checks that folding the deltas changes nothing a reader
// sees, with folds running side by side and changes landing between them,
// and that a fold with nothing left moves nothing.
func testFoldRollups(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := listSeed(t, ctx, st)
	l := mustLink(t, ctx, st, fx.biz.ID, "Print", money.USD, t0, nil)
	at := t0.Add(time.Hour)
	for i, c := range fx.customers {
		must(t, st.AddCustomerStats(ctx, fx.biz.ID, c.ID, payd.StatsDelta{Payments: 2, Succeeded: 1, VolumeUSD: int64(100 * (i + 1)),
			Crypto: 1, LastPaymentAt: &at}))
	}
	must(t, st.AddLinkStats(ctx, fx.biz.ID, l.ID, payd.StatsDelta{Payments: 3, VolumeUSD: 2500}))
	view := func() rollupView {
		t.Helper()
		v := rollupView{customers: map[string]payd.Stats{}, listed: map[string]payd.Stats{}, links: map[string]payd.Stats{}}
		days, err := st.PaymentDays(ctx, fx.biz.ID, t0.Add(-48*time.Hour), t0.Add(200*time.Hour))
		must(t, err)
		v.days = sumDays(days)
		v.counts, err = st.PaymentStatusCounts(ctx, payd.PaymentFilter{BusinessID: fx.biz.ID})
		must(t, err)
		for _, c := range fx.customers {
			got, err := st.CustomerByID(ctx, fx.biz.ID, c.ID)
			must(t, err)
			v.customers[c.ID] = got.Stats
		}
		list, err := st.ListCustomers(ctx, fx.biz.ID, payd.CustomerFilter{Limit: 10})
		must(t, err)
		for _, c := range list {
			v.listed[c.ID] = c.Stats
		}
		got, err := st.LinkByID(ctx, fx.biz.ID, l.ID)
		must(t, err)
		v.link = got.Stats
		links, err := st.ListLinks(ctx, fx.biz.ID, payd.LinkFilter{Limit: 10})
		must(t, err)
		for _, l := range links {
			v.links[l.ID] = l.Stats
		}
		return v
	}
	fold := func(folders int) {
		t.Helper()
		var wg sync.WaitGroup
		for range folders {
			wg.Go(func() {
				if _, err := st.FoldRollups(ctx, 1000); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	before := view()
	if before.link.Payments != 3 || before.customers[fx.customers[1].ID].VolumeUSD != 200 || before.counts[payd.PaymentPending] == 0 {
		t.Fatalf("unfolded deltas not read: %+v", before)
	}
	fold(4)
	if after := view(); !reflect.DeepEqual(after, before) {
		t.Fatalf("after folding:\n got %+v\nwant %+v", after, before)
	}
	n, err := st.FoldRollups(ctx, 1000)
	must(t, err)
	if n != 0 {
		t.Fatalf("a fold with nothing left moved %d", n)
	}

	// Changes after a fold add to the folded rows, and fold in turn.
	p := fx.payments[1]
	fee := int64(7)
	p.Status, p.Reporting.FeeUSD = payd.PaymentSucceeded, &fee
	must(t, st.UpdatePayment(ctx, p))
	later := t0.Add(5 * time.Hour)
	must(t, st.AddCustomerStats(ctx, fx.biz.ID, fx.customers[0].ID, payd.StatsDelta{Payments: 1, LastPaymentAt: &later}))
	must(t, st.AddLinkStats(ctx, fx.biz.ID, l.ID, payd.StatsDelta{Payments: 1, VolumeUSD: 500}))
	changed := view()
	if changed.link.Payments != 4 || changed.link.VolumeUSD != 3000 || !changed.customers[fx.customers[0].ID].LastPaymentAt.Equal(later) {
		t.Fatalf("a change after the fold: %+v", changed)
	}
	fold(2)
	if after := view(); !reflect.DeepEqual(after, changed) {
		t.Fatalf("after the second fold:\n got %+v\nwant %+v", after, changed)
	}
	// A link whose payments are only in deltas still cannot be deleted.
	fresh := mustLink(t, ctx, st, fx.biz.ID, "Fresh", money.USD, t0, nil)
	must(t, st.AddLinkStats(ctx, fx.biz.ID, fresh.ID, payd.StatsDelta{Payments: 1}))
	wantCode(t, st.DeleteLink(ctx, fx.biz.ID, fresh.ID), payd.ErrLinkHasPayments)

	// A deletion that starts while a payment of the link is still running
	// waits for it and then refuses.
	racing := mustLink(t, ctx, st, fx.biz.ID, "Racing", money.USD, t0, nil)
	added, commit := make(chan struct{}), make(chan struct{})
	paid := make(chan error, 1)
	go func() {
		paid <- st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.AddLinkStats(ctx, fx.biz.ID, racing.ID, payd.StatsDelta{Payments: 1}); err != nil {
				return err
			}
			close(added)
			<-commit
			return nil
		})
	}()
	<-added
	deleted := make(chan error, 1)
	go func() { deleted <- st.DeleteLink(ctx, fx.biz.ID, racing.ID) }()
	clock.Sleep(clock.Real{}, 200*time.Millisecond, nil) // the deletion is under way
	close(commit)
	must(t, <-paid)
	wantCode(t, <-deleted, payd.ErrLinkHasPayments)
}
