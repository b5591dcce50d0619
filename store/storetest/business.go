package storetest

import (
	"testing"
	"time"

	"payd"
)

func testBusiness(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		want := mustBusiness(t, ctx, st)
		got, err := st.BusinessByID(ctx, want.ID)
		must(t, err)
		if got.ID != want.ID || got.Name != want.Name || got.Email != want.Email || got.Live != want.Live ||
			got.SuspendedAt != nil || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) {
			t.Fatalf("BusinessByID = %+v, want %+v", got, want)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
		}
	})
	t.Run("Live", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, _ := payd.NewBusiness("Live Ltd", "ops@example.com", true, t0)
		biz.Website, biz.SupportEmail = "https://live.example", "help@live.example"
		must(t, st.CreateBusiness(ctx, biz))
		got, err := st.BusinessByID(ctx, biz.ID)
		must(t, err)
		if !got.Live || got.Website != biz.Website || got.SupportEmail != biz.SupportEmail {
			t.Fatalf("got %+v after storing %+v", got, biz)
		}
	})
	t.Run("DuplicateIsConflict", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		wantCode(t, st.CreateBusiness(ctx, biz), payd.ErrConflict)
	})
	t.Run("MissingIsNotFound", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, err := st.BusinessByID(ctx, payd.NewID(payd.PrefixBusiness))
		wantCode(t, err, payd.ErrNotFound)
		wantCode(t, st.SetBusinessSuspended(ctx, payd.NewID(payd.PrefixBusiness), &t0), payd.ErrNotFound)
	})
	t.Run("SuspendAndReinstate", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		at := t0.Add(time.Hour)
		must(t, st.SetBusinessSuspended(ctx, biz.ID, &at))
		got, err := st.BusinessByID(ctx, biz.ID)
		must(t, err)
		if got.SuspendedAt == nil || !got.SuspendedAt.Equal(at) {
			t.Fatalf("SuspendedAt = %v, want %v", got.SuspendedAt, at)
		}
		must(t, st.SetBusinessSuspended(ctx, biz.ID, nil))
		got, err = st.BusinessByID(ctx, biz.ID)
		must(t, err)
		if got.SuspendedAt != nil {
			t.Fatalf("SuspendedAt = %v after reinstating", got.SuspendedAt)
		}
		if got.UpdatedAt.Equal(t0) {
			t.Errorf("UpdatedAt = %v, want the store clock's time of the change", got.UpdatedAt)
		}
	})
}
