package storetest

import (
	"reflect"
	"testing"
	"time"

	"payd"
)

func testAPIKey(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		perms := payd.Permissions{payd.AreaPayments: payd.AccessRead, payd.AreaCustomers: payd.AccessWrite}
		for _, kind := range []payd.KeyKind{payd.KeySecret, payd.KeyRestricted, payd.KeyPublishable} {
			_, want := payd.NewAPIKey(biz.ID, kind, payd.ModeTest, perms, t0)
			want.Name = "ci"
			must(t, st.CreateAPIKey(ctx, want))
			got, err := st.APIKeyByHash(ctx, want.Hash)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("APIKeyByHash = %+v, want %+v", got, want)
			}
		}
	})
	t.Run("DuplicateHashIsConflict", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		_, k := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		must(t, st.CreateAPIKey(ctx, k))
		k.ID = payd.NewID(payd.PrefixAPIKey)
		wantCode(t, st.CreateAPIKey(ctx, k), payd.ErrConflict)
	})
	t.Run("UnknownHashIsNotFound", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, err := st.APIKeyByHash(ctx, payd.HashAPIKey("sk_live_nothing"))
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("RevokeIsScopedToTheBusiness", func(t *testing.T) {
		ctx, st := b.setup(t)
		owner, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		_, k := payd.NewAPIKey(owner.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		must(t, st.CreateAPIKey(ctx, k))
		wantCode(t, st.RevokeAPIKey(ctx, other.ID, k.ID, t0), payd.ErrNotFound)
		wantRevoked(t, st, k.Hash, nil)
		wantCode(t, st.RevokeAPIKey(ctx, owner.ID, payd.NewID(payd.PrefixAPIKey), t0), payd.ErrNotFound)
	})
	t.Run("RevokeKeepsTheFirstTime", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		_, k := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		must(t, st.CreateAPIKey(ctx, k))
		first := t0.Add(time.Minute)
		must(t, st.RevokeAPIKey(ctx, biz.ID, k.ID, first))
		must(t, st.RevokeAPIKey(ctx, biz.ID, k.ID, first.Add(time.Hour)))
		wantRevoked(t, st, k.Hash, &first)
	})
}

// wantRevoked checks a key's RevokedAt.
func wantRevoked(t *testing.T, st payd.Store, hash string, want *time.Time) {
	t.Helper()
	got, err := st.APIKeyByHash(t.Context(), hash)
	must(t, err)
	if (got.RevokedAt == nil) != (want == nil) || (want != nil && !got.RevokedAt.Equal(*want)) {
		t.Fatalf("RevokedAt = %v, want %v", got.RevokedAt, want)
	}
}
