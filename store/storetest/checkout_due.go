package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// checkoutIDs returns the ids of cs, in order.
func checkoutIDs(cs []*payd.Checkout) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// wantCheckouts fails unless got holds exactly want's ids, in want's order.
func wantCheckouts(t *testing.T, what string, got []*payd.Checkout, want ...*payd.Checkout) {
	t.Helper()
	if g, w := checkoutIDs(got), checkoutIDs(want); !slices.Equal(g, w) {
		t.Fatalf("%s = %v, want %v", what, g, w)
	}
}

// CountWatched reads the checkouts on network n watched at now, from the
// cursor from on, in pages of 500 as the watcher reads them, and counts
// them: the read a benchmark of the watcher times.
func CountWatched(ctx context.Context, st payd.CheckoutStore, n money.Network, now time.Time, from payd.WatchCursor) (int, error) {
	count := 0
	for after := from; ; {
		page, err := st.WatchedCheckouts(ctx, n, now, after, 500)
		if err != nil || len(page) == 0 {
			return count, err
		}
		count, after = count+len(page), payd.WatchCursorOf(page[len(page)-1])
	}
}

// testWatchedCheckouts pages through a network's watched checkouts, in
// (WatchUntil, ID) order, all of them or only the live ones.
func testWatchedCheckouts(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	watch := func(until time.Time) func(*payd.Checkout) {
		return func(c *payd.Checkout) { c.WatchUntil = until }
	}
	var watched []*payd.Checkout
	for _, until := range []time.Time{watchForever, t0.Add(time.Microsecond), watchForever, t0.Add(payd.LateWindow)} {
		watched = append(watched, mustCheckout(t, ctx, st, p, money.Ethereum, watch(until)))
	}
	// Not watched at t0: ended at t0 exactly, long ago, another network,
	// a card checkout.
	mustCheckout(t, ctx, st, p, money.Ethereum, watch(t0))
	mustCheckout(t, ctx, st, p, money.Ethereum, watch(t0.Add(-time.Hour)))
	mustCheckout(t, ctx, st, p, money.Polygon, nil)
	mustCheckout(t, ctx, st, p, money.Ethereum, func(c *payd.Checkout) { c.Rail, c.Crypto = payd.RailCard, nil })
	slices.SortFunc(watched, func(a, b *payd.Checkout) int {
		return cmp.Or(a.WatchUntil.Compare(b.WatchUntil), strings.Compare(a.ID, b.ID))
	})

	all, err := st.WatchedCheckouts(ctx, money.Ethereum, t0, payd.WatchCursor{}, 100)
	must(t, err)
	wantCheckouts(t, "watched ethereum checkouts", all, watched...)
	sameCheckout(t, all[0], watched[0])
	var paged []*payd.Checkout
	for after := (payd.WatchCursor{}); ; {
		page, err := st.WatchedCheckouts(ctx, money.Ethereum, t0, after, 3)
		must(t, err)
		paged = append(paged, page...)
		if len(page) < 3 {
			break
		}
		after = payd.WatchCursorOf(page[len(page)-1])
	}
	wantCheckouts(t, "watched ethereum checkouts page by page", paged, watched...)
	live, err := st.WatchedCheckouts(ctx, money.Ethereum, t0, payd.WatchCursor{Until: payd.LiveWatchUntil}, 100)
	must(t, err)
	wantCheckouts(t, "live ethereum checkouts", live, watched[2:]...)
	later, err := st.WatchedCheckouts(ctx, money.Ethereum, t0.Add(time.Hour), payd.WatchCursorOf(watched[0]), 100)
	must(t, err)
	wantCheckouts(t, "watched an hour later, after the first", later, slices.DeleteFunc(slices.Clone(watched[1:]),
		func(c *payd.Checkout) bool { return c.WatchUntil.Before(t0.Add(time.Hour)) })...)
	none, err := st.WatchedCheckouts(ctx, money.Tron, t0, payd.WatchCursor{}, 100)
	if err != nil || len(none) != 0 {
		t.Fatalf("watched tron checkouts = %v, %v; want none", checkoutIDs(none), err)
	}
}

// testDueCheckouts finds live checkouts whose quote ended.
func testDueCheckouts(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	checkout := func(s payd.CheckoutStatus, expires time.Time) *payd.Checkout {
		return mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.Status, c.ExpiresAt = s, expires })
	}
	underpaid := checkout(payd.CheckoutUnderpaid, t0)
	open := checkout(payd.CheckoutOpen, t0.Add(-2*time.Minute))
	processing := checkout(payd.CheckoutProcessing, t0.Add(-time.Minute))
	checkout(payd.CheckoutOpen, t0.Add(time.Microsecond))
	for _, s := range []payd.CheckoutStatus{payd.CheckoutCompleted, payd.CheckoutExpired, payd.CheckoutCanceled, payd.CheckoutFailed} {
		checkout(s, t0.Add(-time.Hour))
	}
	due, err := st.DueCheckouts(ctx, t0, 100, nil, time.Time{})
	must(t, err)
	wantCheckouts(t, "due checkouts", due, open, processing, underpaid)
	sameCheckout(t, due[2], underpaid)
	due, err = st.DueCheckouts(ctx, t0, 2, nil, time.Time{})
	must(t, err)
	wantCheckouts(t, "the first two due checkouts", due, open, processing)
	// Once ended, a checkout is no longer due.
	open.Status = payd.CheckoutExpired
	must(t, st.UpdateCheckout(ctx, open))
	due, err = st.DueCheckouts(ctx, t0, 100, nil, time.Time{})
	must(t, err)
	wantCheckouts(t, "due checkouts after one expired", due, processing, underpaid)
	// A held network's checkouts wait; the others' do not.
	eth := mustCheckout(t, ctx, st, p, money.Ethereum, func(c *payd.Checkout) { c.ExpiresAt = t0 })
	due, err = st.DueCheckouts(ctx, t0, 100, []money.Network{money.Bitcoin}, t0.Add(-90*time.Second))
	must(t, err)
	wantCheckouts(t, "due checkouts with bitcoin held", due, eth)
	// Held, but not longer than since heldSince: the one whose quote ended
	// before it is due again.
	due, err = st.DueCheckouts(ctx, t0, 100, []money.Network{money.Bitcoin}, t0.Add(-30*time.Second))
	must(t, err)
	wantCheckouts(t, "due checkouts held since 30 s", due, processing, eth)
}

// testDueSkipsLocked checks that on PostgreSQL a transaction reading due
// checkouts holds them, and a second one reading at once gets the others.
// SQLite runs write transactions one at a time, so nothing is to skip.
func testDueSkipsLocked(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	if st.Dialect() != "postgres" {
		t.Skip("only PostgreSQL runs transactions side by side")
	}
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	first := mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.ExpiresAt = t0.Add(-time.Minute) })
	second := mustCheckout(t, ctx, st, p, money.Bitcoin, func(c *payd.Checkout) { c.ExpiresAt = t0 })
	held, release, done := make(chan []string, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			due, err := q.DueCheckouts(ctx, t0, 1, nil, time.Time{})
			held <- checkoutIDs(due)
			if err != nil {
				return err
			}
			<-release
			return nil
		})
	}()
	if ids := <-held; !slices.Equal(ids, []string{first.ID}) {
		close(release)
		t.Fatalf("the first transaction got %v, want %s", ids, first.ID)
	}
	var others []string
	err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		due, err := q.DueCheckouts(ctx, t0, 10, nil, time.Time{})
		others = checkoutIDs(due)
		return err
	})
	close(release)
	must(t, err)
	must(t, <-done)
	if !slices.Equal(others, []string{second.ID}) {
		t.Fatalf("beside a transaction holding %s, due checkouts = %v, want %s", first.ID, others, second.ID)
	}
}

// testDuePayments finds pending payments past their expiry, with events.
func testDuePayments(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	payment := func(s payd.PaymentStatus, expires *time.Time) *payd.Payment {
		p := newPayment(t, biz, 100, "")
		p.Status, p.ExpiresAt = s, expires
		if expires != nil && expires.Before(t0) {
			p.Events = append(p.Events, payd.PaymentEvent{Type: payd.EventMethodSelected, Data: []byte(`{"rail":"crypto"}`), CreatedAt: t0})
		}
		must(t, st.CreatePayment(ctx, p))
		return p
	}
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	atNow := payment(payd.PaymentPending, at(0))
	early := payment(payd.PaymentPending, at(-time.Hour))
	payment(payd.PaymentPending, at(time.Microsecond))
	payment(payd.PaymentPending, nil)
	for _, s := range []payd.PaymentStatus{payd.PaymentSucceeded, payd.PaymentExpired, payd.PaymentFailed, payd.PaymentUnderpaid} {
		payment(s, at(-time.Hour))
	}
	due, err := st.DuePayments(ctx, t0, 100)
	must(t, err)
	if len(due) != 2 {
		t.Fatalf("%d due payments, want 2", len(due))
	}
	samePayment(t, due[0], early)
	samePayment(t, due[1], atNow)
	due, err = st.DuePayments(ctx, t0, 1)
	must(t, err)
	if len(due) != 1 || due[0].ID != early.ID {
		t.Fatalf("the first due payment = %v, want %s", due, early.ID)
	}
	none, err := st.DuePayments(ctx, t0.Add(-2*time.Hour), 100)
	if err != nil || len(none) != 0 {
		t.Fatalf("due payments before any expiry = %v, %v", none, err)
	}
}

func testLease(t *testing.T, b *bundle) {
	t.Run("HeldUntilItLapses", func(t *testing.T) {
		ctx, st := b.setup(t)
		steps := []struct {
			holder    string
			now, till time.Duration
			want      bool
		}{
			{"a", 0, time.Minute, true},                               // free
			{"b", 30 * time.Second, 90 * time.Second, false},          // a holds it
			{"a", 30 * time.Second, 2 * time.Minute, true},            // a extends
			{"b", 90 * time.Second, 3 * time.Minute, false},           // still a's, extended
			{"b", 2 * time.Minute, 3 * time.Minute, true},             // a's lapsed at its until
			{"a", 2*time.Minute + time.Second, time.Hour, false},      // now b's
			{"b", 2*time.Minute + time.Second, time.Minute, true},     // a holder may shorten its own
			{"a", 2*time.Minute + time.Second, 4 * time.Minute, true}, // which frees it
		}
		for i, s := range steps {
			got, err := st.AcquireLease(ctx, "watch:ethereum", s.holder, t0.Add(s.now), t0.Add(s.till))
			must(t, err)
			if got != s.want {
				t.Fatalf("step %d: %s acquiring at +%s = %v, want %v", i, s.holder, s.now, got, s.want)
			}
		}
		// Leases are independent by name.
		got, err := st.AcquireLease(ctx, "watch:bitcoin", "b", t0, t0.Add(time.Minute))
		if err != nil || !got {
			t.Fatalf("another lease's name = %v, %v; want it free", got, err)
		}
	})
	t.Run("Released", func(t *testing.T) {
		ctx, st := b.setup(t)
		got, err := st.AcquireLease(ctx, "follow:bitcoin", "a", t0, t0.Add(time.Minute))
		must(t, err)
		must(t, st.ReleaseLease(ctx, "follow:bitcoin", "b")) // not b's: kept
		if again, _ := st.AcquireLease(ctx, "follow:bitcoin", "b", t0, t0.Add(time.Minute)); !got || again {
			t.Fatalf("acquired %v; b took a's lease after releasing it for nothing: %v", got, again)
		}
		must(t, st.ReleaseLease(ctx, "follow:bitcoin", "a"))
		if got, err := st.AcquireLease(ctx, "follow:bitcoin", "b", t0, t0.Add(time.Minute)); err != nil || !got {
			t.Fatalf("after a gave it up, b acquiring = %v, %v", got, err)
		}
	})
	t.Run("OneOfManyWins", func(t *testing.T) {
		ctx, st := b.setup(t)
		const n = 16
		got, errs := parallel(n, func(i int) (bool, error) {
			return st.AcquireLease(ctx, "expiry", fmt.Sprint("replica-", i), t0, t0.Add(time.Minute))
		})
		noErrors(t, errs)
		if winners := len(slices.DeleteFunc(got, func(ok bool) bool { return !ok })); winners != 1 {
			t.Fatalf("%d of %d replicas hold the lease, want 1", winners, n)
		}
	})
	t.Run("InsideTransaction", func(t *testing.T) {
		ctx, st := b.setup(t)
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if ok, err := q.AcquireLease(ctx, "l", "a", t0, t0.Add(time.Minute)); err != nil || !ok {
				return fmt.Errorf("acquire = %v, %v", ok, err)
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Tx = %v", err)
		}
		ok, err := st.AcquireLease(ctx, "l", "b", t0, t0.Add(time.Minute))
		if err != nil || !ok {
			t.Fatalf("after a rolled back acquire, b got %v, %v; want the lease", ok, err)
		}
	})
}
