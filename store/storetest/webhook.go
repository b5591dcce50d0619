package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
)

func testWebhook(t *testing.T, b *bundle) {
	t.Run("RoundTrip", testWebhookRoundTrip(b))
	t.Run("ScopedToTheBusiness", testWebhookScope(b))
	t.Run("Update", testUpdateWebhook(b))
	t.Run("Delete", testDeleteWebhook(b))
	t.Run("List", testListWebhooks(b))
	t.Run("EndpointsFor", testEndpointsFor(b))
	t.Run("Transaction", testWebhookTx(b))
}

func testWebhookRoundTrip(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		plain := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventPaymentSucceeded, payd.EventLinkCreated)
		expires := t0.Add(payd.WebhookSecretOverlap)
		rotated := mustEndpoint(t, ctx, st, biz.ID, t0, func(e *payd.WebhookEndpoint) {
			e.Description, e.Enabled = "line 1\nline 2", false
			e.PreviousSecret, e.PreviousSecretExpiresAt = payd.NewWebhookSecret(), &expires
		}, payd.EventTypeAll)
		for _, want := range []*payd.WebhookEndpoint{plain, rotated} {
			got, err := st.WebhookEndpointByID(ctx, biz.ID, want.ID)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("WebhookEndpointByID = %+v, want %+v", got, want)
			}
		}
		_, err := st.WebhookEndpointByID(ctx, biz.ID, "whk_missing")
		wantCode(t, err, payd.ErrNotFound)
		dup := *plain
		wantCode(t, st.CreateWebhookEndpoint(ctx, &dup), payd.ErrConflict)
	}
}

func testWebhookScope(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		e := mustEndpoint(t, ctx, st, biz.ID, t0, nil, payd.EventTypeAll)
		_, err := st.WebhookEndpointByID(ctx, other.ID, e.ID)
		wantCode(t, err, payd.ErrNotFound)
		moved := *e
		moved.BusinessID, moved.URL = other.ID, "https://evil.example/hook"
		wantCode(t, st.UpdateWebhookEndpoint(ctx, &moved), payd.ErrNotFound)
		wantCode(t, st.DeleteWebhookEndpoint(ctx, other.ID, e.ID), payd.ErrNotFound)
		list, err := st.ListWebhookEndpoints(ctx, other.ID, payd.WebhookEndpointFilter{Limit: 10})
		must(t, err)
		fanout, err := st.EndpointsFor(ctx, other.ID, payd.EventPaymentSucceeded)
		must(t, err)
		if len(list) != 0 || len(fanout) != 0 {
			t.Fatalf("another business sees %v and %v", list, fanout)
		}
		got, err := st.WebhookEndpointByID(ctx, biz.ID, e.ID)
		must(t, err)
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("after another business's writes %+v, want %+v", got, e)
		}
	}
}

func testUpdateWebhook(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st).ID
		e := mustEndpoint(t, ctx, st, biz, t0, nil, payd.EventPaymentSucceeded, payd.EventPaymentFailed)
		t1 := t0.Add(time.Minute)
		url, desc, off := "https://b.example/new", "renamed", false
		types := []string{payd.EventCustomerCreated, payd.EventPaymentCreated}
		must(t, e.Update(payd.WebhookEndpointUpdate{URL: &url, EventTypes: &types, Description: &desc, Enabled: &off}, false, t1))
		old := e.Secret
		e.RotateSecret(t1)
		must(t, st.UpdateWebhookEndpoint(ctx, e))
		got, err := st.WebhookEndpointByID(ctx, biz, e.ID)
		must(t, err)
		if !reflect.DeepEqual(got, e) || got.PreviousSecret != old || !got.UpdatedAt.Equal(t1) {
			t.Fatalf("after update %+v, want %+v", got, e)
		}
		if secrets := got.Secrets(t1.Add(time.Hour)); len(secrets) != 2 || secrets[0] != e.Secret || secrets[1] != old {
			t.Fatalf("Secrets within the overlap = %v", secrets)
		}
		if secrets := got.Secrets(t1.Add(payd.WebhookSecretOverlap)); len(secrets) != 1 {
			t.Fatalf("Secrets after the overlap = %v", secrets)
		}
		missing := *e
		missing.ID = payd.NewID(payd.PrefixWebhook)
		wantCode(t, st.UpdateWebhookEndpoint(ctx, &missing), payd.ErrNotFound)
	}
}

func testDeleteWebhook(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st).ID
		e := mustEndpoint(t, ctx, st, biz, t0, nil, payd.EventPaymentSucceeded)
		kept := mustEndpoint(t, ctx, st, biz, t0, nil, payd.EventPaymentSucceeded)
		must(t, st.DeleteWebhookEndpoint(ctx, biz, e.ID))
		_, err := st.WebhookEndpointByID(ctx, biz, e.ID)
		wantCode(t, err, payd.ErrNotFound)
		wantCode(t, st.DeleteWebhookEndpoint(ctx, biz, e.ID), payd.ErrNotFound)
		fanout, err := st.EndpointsFor(ctx, biz, payd.EventPaymentSucceeded)
		must(t, err)
		wantIDs(t, "fan-out after delete", endpointIDs(fanout), []string{kept.ID})
		// The id is free again once its subscriptions went with it.
		again := *e
		must(t, st.CreateWebhookEndpoint(ctx, &again))
	}
}

func testListWebhooks(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st).ID
		var all []*payd.WebhookEndpoint
		for i := range 5 {
			// Pairs share a created_at, so the id breaks ties.
			all = append(all, mustEndpoint(t, ctx, st, biz, t0.Add(time.Duration(i/2)*time.Second), nil, payd.EventTypeAll))
		}
		slices.SortFunc(all, func(x, y *payd.WebhookEndpoint) int {
			if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(y.ID, x.ID)
		})
		got, err := st.ListWebhookEndpoints(ctx, biz, payd.WebhookEndpointFilter{Limit: 100})
		must(t, err)
		wantIDs(t, "all", endpointIDs(got), endpointIDs(all))
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("listed endpoints differ from the stored ones")
		}
		var pages []string
		f := payd.WebhookEndpointFilter{Limit: 2}
		for {
			got, err := st.ListWebhookEndpoints(ctx, biz, f)
			must(t, err)
			pages = append(pages, endpointIDs(got)...)
			if len(got) < 2 {
				break
			}
			f.AfterCreated, f.AfterID = got[1].CreatedAt, got[1].ID
		}
		wantIDs(t, "paged", pages, endpointIDs(all))
	}
}

func testEndpointsFor(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st).ID
		named := mustEndpoint(t, ctx, st, biz, t0, nil, payd.EventPaymentFailed, payd.EventPaymentSucceeded)
		all := mustEndpoint(t, ctx, st, biz, t0.Add(time.Second), nil, payd.EventTypeAll)
		linkOnly := mustEndpoint(t, ctx, st, biz, t0.Add(2*time.Second), nil, payd.EventLinkCreated)
		mustEndpoint(t, ctx, st, biz, t0.Add(3*time.Second), func(e *payd.WebhookEndpoint) { e.Enabled = false },
			payd.EventPaymentSucceeded)
		mustEndpoint(t, ctx, st, biz, t0.Add(4*time.Second), func(e *payd.WebhookEndpoint) { e.Enabled = false },
			payd.EventTypeAll)
		fanout := func(typ string) []string {
			t.Helper()
			got, err := st.EndpointsFor(ctx, biz, typ)
			must(t, err)
			for _, e := range got {
				if !e.Enabled || !e.Receives(typ) || len(e.EventTypes) == 0 {
					t.Fatalf("EndpointsFor(%s) returned %+v", typ, e)
				}
			}
			return endpointIDs(got)
		}
		wantIDs(t, "named and *", fanout(payd.EventPaymentSucceeded), []string{named.ID, all.ID})
		wantIDs(t, "only *", fanout(payd.EventCustomerCreated), []string{all.ID})
		wantIDs(t, "an unknown type reaches * only", fanout("payment.nothing"), []string{all.ID})
		// Changing the event types moves the endpoint in the fan-out.
		types := []string{payd.EventCustomerCreated}
		must(t, named.Update(payd.WebhookEndpointUpdate{EventTypes: &types}, false, t0))
		must(t, st.UpdateWebhookEndpoint(ctx, named))
		wantIDs(t, "after update", fanout(payd.EventPaymentSucceeded), []string{all.ID})
		wantIDs(t, "after update, new type", fanout(payd.EventCustomerCreated), []string{named.ID, all.ID})
		on := false
		must(t, all.Update(payd.WebhookEndpointUpdate{Enabled: &on}, false, t0))
		must(t, st.UpdateWebhookEndpoint(ctx, all))
		wantIDs(t, "after disabling", fanout(payd.EventCustomerCreated), []string{named.ID})
		// EnabledEndpoints: every enabled endpoint of the businesses asked for.
		other := mustBusiness(t, ctx, st).ID
		third := mustBusiness(t, ctx, st).ID
		mine := mustEndpoint(t, ctx, st, other, t0.Add(-time.Second), nil, payd.EventLinkCreated)
		mustEndpoint(t, ctx, st, third, t0, nil, payd.EventTypeAll)
		got, err := st.EnabledEndpoints(ctx, []string{biz, other})
		must(t, err)
		wantIDs(t, "EnabledEndpoints", endpointIDs(got), []string{mine.ID, named.ID, linkOnly.ID})
		if got, err := st.EnabledEndpoints(ctx, nil); err != nil || len(got) != 0 {
			t.Fatalf("EnabledEndpoints(nil) = %v, %v", got, err)
		}
	}
}

// testWebhookTx checks that an endpoint and its subscriptions commit or
// roll back together, and that reads inside the transaction see them.
func testWebhookTx(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st).ID
		e := newEndpoint(t, biz, t0, payd.EventPaymentCreated)
		boom := errors.New("boom")
		var inside []string
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.CreateWebhookEndpoint(ctx, e); err != nil {
				return err
			}
			got, err := q.EndpointsFor(ctx, biz, payd.EventPaymentCreated)
			if err != nil {
				return err
			}
			inside = endpointIDs(got)
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx = %v", err)
		}
		wantIDs(t, "inside the transaction", inside, []string{e.ID})
		got, err := st.EndpointsFor(ctx, biz, payd.EventPaymentCreated)
		must(t, err)
		_, byID := st.WebhookEndpointByID(ctx, biz, e.ID)
		if len(got) != 0 || !payd.IsNotFound(byID) {
			t.Fatalf("a rolled-back endpoint is visible: %v, %v", got, byID)
		}
	}
}

// newEndpoint returns an enabled endpoint created at at, not yet stored.
func newEndpoint(t *testing.T, bizID string, at time.Time, types ...string) *payd.WebhookEndpoint {
	t.Helper()
	url := "https://hooks.example.com/" + payd.RandomString(6)
	e, err := payd.NewWebhookEndpoint(bizID, payd.WebhookEndpointUpdate{URL: &url, EventTypes: &types}, false, at)
	must(t, err)
	return e
}

// mustEndpoint stores a new endpoint created at at, after edit (if any)
// changes it.
func mustEndpoint(t *testing.T, ctx context.Context, st payd.Store, bizID string, at time.Time, edit func(*payd.WebhookEndpoint), types ...string) *payd.WebhookEndpoint {
	t.Helper()
	e := newEndpoint(t, bizID, at, types...)
	if edit != nil {
		edit(e)
	}
	must(t, st.CreateWebhookEndpoint(ctx, e))
	return e
}

func endpointIDs(es []*payd.WebhookEndpoint) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
