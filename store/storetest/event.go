package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"payd"
)

func testEvent(t *testing.T, b *bundle) {
	t.Run("RoundTripAndScope", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		first := &payd.Event{ID: payd.NewID(payd.PrefixEvent), BusinessID: biz.ID, Type: payd.EventPaymentCreated,
			SubjectKind: "payment", SubjectID: "pmt_1", Data: []byte(`{"id":"pmt_1"}`),
			Actor: payd.Actor{Kind: payd.ActorAPIKey, ID: "key_1", Name: "Shop"}, CreatedAt: t0}
		second := &payd.Event{ID: payd.NewID(payd.PrefixEvent), BusinessID: biz.ID, Type: payd.EventPaymentSucceeded,
			SubjectKind: "payment", SubjectID: "pmt_1", Data: []byte(`{"id":"pmt_1","status":"succeeded"}`),
			Actor: payd.SystemActor, CreatedAt: t0.Add(time.Microsecond)}
		must(t, st.AppendEvents(ctx, []*payd.Event{second, first}))
		got, err := st.EventByID(ctx, biz.ID, first.ID)
		must(t, err)
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("EventByID = %+v, want %+v", got, first)
		}
		_, err = st.EventByID(ctx, other.ID, first.ID)
		wantCode(t, err, payd.ErrNotFound)
		list, err := st.EventsOf(ctx, biz.ID, "pmt_1")
		must(t, err)
		if len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID {
			t.Fatalf("EventsOf = %+v", list)
		}
		if none, _ := st.EventsOf(ctx, other.ID, "pmt_1"); len(none) != 0 {
			t.Fatalf("another business sees %d events", len(none))
		}
		wantCode(t, st.AppendEvents(ctx, []*payd.Event{first}), payd.ErrConflict)
	})
	t.Run("RolledBackWithTheChange", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		boom := errors.New("the change failed")
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			must(t, q.AppendEvents(ctx, []*payd.Event{{ID: payd.NewID(payd.PrefixEvent), BusinessID: biz.ID,
				Type: payd.EventCustomerCreated, SubjectKind: "customer", SubjectID: "cst_1", Data: []byte(`{}`),
				Actor: payd.SystemActor, CreatedAt: t0}}))
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if list, _ := st.EventsOf(ctx, biz.ID, "cst_1"); len(list) != 0 {
			t.Fatalf("a rolled-back change left %d events", len(list))
		}
	})
}
