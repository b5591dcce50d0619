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
	t.Run("EndLiveOnce", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		_, k := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		must(t, st.CreateAPIKey(ctx, k))
		// Racing ends: exactly one wins.
		_, errs := parallel(6, func(i int) (bool, error) {
			return true, st.EndLiveAPIKey(ctx, biz.ID, k.ID, t0.Add(time.Duration(i+1)*time.Hour))
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case payd.ErrorCode(err) != payd.ErrConflict:
				t.Fatal(err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of 6 racing ends won, want 1", won)
		}
		wantCode(t, st.EndLiveAPIKey(ctx, biz.ID, payd.NewID(payd.PrefixAPIKey), t0), payd.ErrNotFound)
	})
	t.Run("ByIDListUpdateAndRoll", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		_, older := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		_, k := payd.NewAPIKey(biz.ID, payd.KeyRestricted, payd.ModeTest,
			payd.Permissions{payd.AreaLinks: payd.AccessRead}, t0.Add(time.Second))
		_, foreign := payd.NewAPIKey(other.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		for _, key := range []*payd.APIKey{older, k, foreign} {
			must(t, st.CreateAPIKey(ctx, key))
		}
		got, err := st.APIKeyByID(ctx, biz.ID, k.ID)
		must(t, err)
		if !reflect.DeepEqual(got, k) {
			t.Fatalf("APIKeyByID = %+v, want %+v", got, k)
		}
		_, err = st.APIKeyByID(ctx, other.ID, k.ID)
		wantCode(t, err, payd.ErrNotFound)
		list, err := st.ListAPIKeys(ctx, biz.ID)
		must(t, err)
		if len(list) != 2 || list[0].ID != k.ID || list[1].ID != older.ID {
			t.Fatalf("ListAPIKeys = %+v", list)
		}
		k.Name, k.Permissions = "shop", payd.Permissions{payd.AreaPayments: payd.AccessWrite}
		must(t, st.UpdateAPIKey(ctx, k))
		got, err = st.APIKeyByID(ctx, biz.ID, k.ID)
		must(t, err)
		if got.Name != "shop" || got.Permissions.String() != "payments:write" {
			t.Fatalf("after UpdateAPIKey = %+v", got)
		}
		foreign.BusinessID = biz.ID
		wantCode(t, st.UpdateAPIKey(ctx, foreign), payd.ErrNotFound)
		// A roll ends the key tomorrow; a revocation now ends it earlier,
		// and a later time never moves it back.
		tomorrow, now := t0.Add(24*time.Hour), t0.Add(time.Hour)
		must(t, st.RevokeAPIKey(ctx, biz.ID, k.ID, tomorrow))
		wantRevoked(t, st, k.Hash, &tomorrow)
		must(t, st.RevokeAPIKey(ctx, biz.ID, k.ID, now))
		wantRevoked(t, st, k.Hash, &now)
		must(t, st.RevokeAPIKey(ctx, biz.ID, k.ID, tomorrow))
		wantRevoked(t, st, k.Hash, &now)
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
