package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"payd"
)

func testDelivery(t *testing.T, b *bundle) {
	t.Run("FanOut", testDeliveryFanOut(b))
	t.Run("ClaimAndSave", testDeliveryClaim(b))
	t.Run("ClaimedOnce", testDeliveryClaimedOnce(b))
	t.Run("ClaimSkipsBusyEndpoints", testDeliveryClaimSkip(b))
	t.Run("SaveMany", testSaveDeliveries(b))
	t.Run("ClaimOne", testClaimDelivery(b))
	t.Run("List", testListDeliveries(b))
	t.Run("DeletedWithTheEndpoint", testDeliveryCascade(b))
}

// mustEvent stores an event of type typ at at.
func mustEvent(t *testing.T, ctx context.Context, st payd.Store, bizID, typ string, at time.Time) *payd.Event {
	t.Helper()
	ev := &payd.Event{ID: payd.NewID(payd.PrefixEvent), BusinessID: bizID, Type: typ, SubjectKind: "customer",
		SubjectID: "cst_1", Data: []byte(`{"id":"cst_1"}`), Actor: payd.SystemActor, CreatedAt: at}
	must(t, st.AppendEvents(ctx, []*payd.Event{ev}))
	return ev
}

// mustDeliveries fans ev out to eps at at and stores the deliveries.
func mustDeliveries(t *testing.T, ctx context.Context, st payd.Store, ev *payd.Event, at time.Time, eps ...*payd.WebhookEndpoint) []*payd.WebhookDelivery {
	t.Helper()
	ds, err := payd.NewDeliveries(ev, eps, at)
	must(t, err)
	must(t, st.CreateDeliveries(ctx, ds))
	return ds
}

func testDeliveryFanOut(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		first := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0)
		second := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerUpdated, t0.Add(time.Second))
		evs, err := st.UndispatchedEvents(ctx, 10)
		must(t, err)
		if len(evs) != 2 || evs[0].ID != first.ID || evs[1].ID != second.ID {
			t.Fatalf("UndispatchedEvents = %+v", evs)
		}
		third := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerUpdated, t0.Add(2*time.Second))
		evs, err = st.DispatchEvents(ctx, 2, t0)
		must(t, err)
		if len(evs) != 2 || !reflect.DeepEqual(evs[0], first) || evs[1].ID != second.ID {
			t.Fatalf("DispatchEvents(2) = %+v", evs)
		}
		evs, err = st.UndispatchedEvents(ctx, 10)
		must(t, err)
		if len(evs) != 1 || evs[0].ID != third.ID {
			t.Fatalf("after dispatching two: %+v", evs)
		}
		evs, err = st.DispatchEvents(ctx, 10, t0)
		must(t, err)
		if len(evs) != 1 || evs[0].ID != third.ID {
			t.Fatalf("DispatchEvents(10) = %+v", evs)
		}
		if evs, err = st.DispatchEvents(ctx, 10, t0); err != nil || len(evs) != 0 {
			t.Fatalf("nothing left to dispatch: %+v, %v", evs, err)
		}
	}
}

func testDeliveryClaim(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		ev := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0)
		d := mustDeliveries(t, ctx, st, ev, t0, e)[0]
		got, err := st.DeliveryByID(ctx, biz.ID, d.ID)
		must(t, err)
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("DeliveryByID = %+v, want %+v", got, d)
		}
		if none, _ := st.ClaimDueDeliveries(ctx, t0.Add(-time.Second), t0.Add(time.Minute), 10); len(none) != 0 {
			t.Fatalf("claimed %d deliveries before they were due", len(none))
		}
		claimed, err := st.ClaimDueDeliveries(ctx, t0, t0.Add(time.Minute), 10)
		must(t, err)
		if len(claimed) != 1 || claimed[0].ID != d.ID || claimed[0].LeaseUntil == nil {
			t.Fatalf("claimed %+v", claimed)
		}
		if again, _ := st.ClaimDueDeliveries(ctx, t0.Add(time.Second), t0.Add(time.Minute), 10); len(again) != 0 {
			t.Fatalf("a leased delivery was claimed again")
		}
		// The lease lapses (a crashed holder): another claim takes it, and
		// the first holder can no longer save.
		taken, err := st.ClaimDueDeliveries(ctx, t0.Add(time.Minute), t0.Add(2*time.Minute), 10)
		must(t, err)
		if len(taken) != 1 {
			t.Fatalf("a lapsed lease was not claimed again")
		}
		stale := claimed[0]
		stale.Record(payd.DeliveryAttempt{At: t0, ResponseStatus: 200, Trigger: payd.TriggerAutomatic}, nil, t0, noRetry)
		wantCode(t, st.SaveDelivery(ctx, stale), payd.ErrConflict)
		fresh := taken[0]
		fresh.Record(payd.DeliveryAttempt{At: t0.Add(time.Minute), ResponseStatus: 500, DurationMS: 12,
			Trigger: payd.TriggerAutomatic}, map[string]string{"webhook-id": ev.ID}, t0.Add(time.Minute), retryIn(time.Hour))
		must(t, st.SaveDelivery(ctx, fresh))
		got, err = st.DeliveryByID(ctx, biz.ID, d.ID)
		must(t, err)
		if !reflect.DeepEqual(got, fresh) {
			t.Fatalf("after saving: %+v, want %+v", got, fresh)
		}
		if got.Status != payd.DeliveryRetrying || !got.NextAttemptAt.Equal(t0.Add(time.Minute+time.Hour)) {
			t.Fatalf("status %s next %v", got.Status, got.NextAttemptAt)
		}
		_, err = st.DeliveryByID(ctx, mustBusiness(t, ctx, st).ID, d.ID)
		wantCode(t, err, payd.ErrNotFound)
	}
}

// testDeliveryClaimSkip claims past the endpoints the loop names busy:
// their due rows stay unleased, even when they are due first.
func testDeliveryClaimSkip(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		busy := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		other := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		third := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		ev := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0)
		mustDeliveries(t, ctx, st, ev, t0, busy)
		mustDeliveries(t, ctx, st, ev, t0.Add(time.Millisecond), other, third)
		got, err := st.ClaimDueDeliveries(ctx, t0.Add(time.Second), t0.Add(time.Minute), 10, busy.ID, third.ID)
		must(t, err)
		if len(got) != 1 || got[0].WebhookID != other.ID {
			t.Fatalf("claimed %+v, want only the delivery to %s", got, other.ID)
		}
		got, err = st.ClaimDueDeliveries(ctx, t0.Add(time.Second), t0.Add(time.Minute), 10)
		must(t, err)
		if len(got) != 2 || got[0].WebhookID != busy.ID {
			t.Fatalf("without skipping, claimed %+v, want the two left, the busy endpoint's first", got)
		}
	}
}

// testSaveDeliveries saves a batch in which one holder lost its lease:
// that row is reported and left as its new holder has it, the others are
// saved exactly as SaveDelivery would.
func testSaveDeliveries(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		for i := range 12 {
			mustDeliveries(t, ctx, st, mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0), t0.Add(time.Duration(i)), e)
		}
		claimed, err := st.ClaimDueDeliveries(ctx, t0.Add(time.Second), t0.Add(time.Minute), 12)
		must(t, err)
		if len(claimed) != 12 {
			t.Fatalf("claimed %d of 12", len(claimed))
		}
		// The leases lapse and another holder takes one of them over.
		taken, err := st.ClaimDueDeliveries(ctx, t0.Add(time.Minute), t0.Add(2*time.Minute), 1)
		must(t, err)
		if len(taken) != 1 {
			t.Fatalf("retaken %d", len(taken))
		}
		for i, d := range claimed {
			if d.ID == taken[0].ID {
				claimed[0], claimed[i] = claimed[i], claimed[0]
			}
		}
		for i, d := range claimed {
			d.Record(payd.DeliveryAttempt{At: t0, ResponseStatus: 200 + 300*(i%2), DurationMS: int64(i), Trigger: payd.TriggerAutomatic},
				map[string]string{"webhook-id": d.EventID}, t0.Add(time.Second), retryIn(time.Hour))
		}
		lost, err := st.SaveDeliveries(ctx, claimed)
		must(t, err)
		if !reflect.DeepEqual(lost, []string{claimed[0].ID}) {
			t.Fatalf("lost %v, want only %s", lost, claimed[0].ID)
		}
		for _, d := range claimed[1:] {
			got, err := st.DeliveryByID(ctx, biz.ID, d.ID)
			must(t, err)
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("saved %+v, want %+v", got, d)
			}
		}
		got, err := st.DeliveryByID(ctx, biz.ID, claimed[0].ID)
		must(t, err)
		if !reflect.DeepEqual(got, taken[0]) {
			t.Fatalf("the retaken delivery was overwritten: %+v", got)
		}
	}
}

// noRetry is a retry policy with no further attempt.
func noRetry(int, time.Time) (time.Time, bool) { return time.Time{}, false }

// retryIn is a policy retrying every d.
func retryIn(d time.Duration) payd.RetryPolicy {
	return func(_ int, last time.Time) (time.Time, bool) { return last.Add(d), true }
}

func testDeliveryClaimedOnce(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		for i := range 20 {
			mustDeliveries(t, ctx, st, mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0), t0.Add(time.Duration(i)), e)
		}
		got, errs := parallel(4, func(int) ([]*payd.WebhookDelivery, error) {
			return st.ClaimDueDeliveries(ctx, t0.Add(time.Second), t0.Add(time.Minute), 20)
		})
		seen := map[string]bool{}
		for i, ds := range got {
			must(t, errs[i])
			for _, d := range ds {
				if seen[d.ID] {
					t.Fatalf("delivery %s claimed twice", d.ID)
				}
				seen[d.ID] = true
			}
		}
		if len(seen) != 20 {
			t.Fatalf("claimed %d of 20", len(seen))
		}
	}
}

func testClaimDelivery(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		d := mustDeliveries(t, ctx, st, mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0), t0, e)[0]
		got, err := st.ClaimDelivery(ctx, biz.ID, d.ID, t0, t0.Add(time.Minute))
		must(t, err)
		if got.Version != d.Version+1 {
			t.Fatalf("claim version %d", got.Version)
		}
		_, err = st.ClaimDelivery(ctx, biz.ID, d.ID, t0.Add(time.Second), t0.Add(time.Minute))
		wantCode(t, err, payd.ErrConflict)
		_, err = st.ClaimDelivery(ctx, mustBusiness(t, ctx, st).ID, d.ID, t0, t0.Add(time.Minute))
		wantCode(t, err, payd.ErrNotFound)
	}
}

func testListDeliveries(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e1 := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		e2 := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		var all []*payd.WebhookDelivery
		for i := range 3 {
			ev := mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0)
			all = append(all, mustDeliveries(t, ctx, st, ev, t0.Add(time.Duration(i)*time.Second), e1, e2)...)
		}
		page, err := st.ListDeliveries(ctx, biz.ID, payd.DeliveryFilter{Limit: 4})
		must(t, err)
		if len(page) != 4 || !page[0].CreatedAt.Equal(t0.Add(2*time.Second)) {
			t.Fatalf("first page %d", len(page))
		}
		last := page[3]
		rest, err := st.ListDeliveries(ctx, biz.ID, payd.DeliveryFilter{Limit: 4, AfterCreated: last.CreatedAt, AfterID: last.ID})
		must(t, err)
		if len(rest) != 2 {
			t.Fatalf("second page %d", len(rest))
		}
		byHook, _ := st.ListDeliveries(ctx, biz.ID, payd.DeliveryFilter{WebhookID: &e2.ID, Limit: 10})
		byEvent, _ := st.ListDeliveries(ctx, biz.ID, payd.DeliveryFilter{EventID: &all[0].EventID, Limit: 10})
		failed := payd.DeliveryFailed
		byStatus, _ := st.ListDeliveries(ctx, biz.ID, payd.DeliveryFilter{Status: &failed, Limit: 10})
		if len(byHook) != 3 || len(byEvent) != 2 || len(byStatus) != 0 {
			t.Fatalf("filters: webhook %d, event %d, status %d", len(byHook), len(byEvent), len(byStatus))
		}
		other, _ := st.ListDeliveries(ctx, mustBusiness(t, ctx, st).ID, payd.DeliveryFilter{Limit: 10})
		if len(other) != 0 {
			t.Fatalf("another business sees %d deliveries", len(other))
		}
	}
}

func testDeliveryCascade(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		d := mustDeliveries(t, ctx, st, mustEvent(t, ctx, st, biz.ID, payd.EventCustomerCreated, t0), t0, e)[0]
		must(t, st.DeleteWebhookEndpoint(ctx, biz.ID, e.ID))
		_, err := st.DeliveryByID(ctx, biz.ID, d.ID)
		wantCode(t, err, payd.ErrNotFound)
		if due, _ := st.ClaimDueDeliveries(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 10); len(due) != 0 {
			t.Fatalf("a deleted endpoint's retry is still queued")
		}
	}
}
