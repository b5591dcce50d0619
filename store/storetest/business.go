package storetest

import (
	"testing"
	"time"

	"payd"
	"payd/money"
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
	t.Run("Referrals", func(t *testing.T) { testReferrals(t, b) })
}

// testReferrals covers referral codes: each business has its own, found
// by code; a referrer is set, changed and cleared until the business has
// a wallet, then referral_locked.
func testReferrals(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	ref := mustBusiness(t, ctx, st)
	if _, ok := payd.NormalizeReferralCode(ref.ReferralCode); !ok {
		t.Fatalf("referral code %q is not well formed", ref.ReferralCode)
	}
	got, err := st.BusinessByReferralCode(ctx, ref.ReferralCode)
	must(t, err)
	if got.ID != ref.ID || got.ReferralCode != ref.ReferralCode || got.ReferredBy != "" {
		t.Fatalf("BusinessByReferralCode = %+v, want %+v", got, ref)
	}
	_, err = st.BusinessByReferralCode(ctx, "ZZZZZZZZ")
	wantCode(t, err, payd.ErrNotFound)
	// A business made without a code gets one; a taken code is a conflict.
	bare := &payd.Business{ID: payd.NewID(payd.PrefixBusiness), Name: "Bare", Email: "b@example.com", CreatedAt: t0, UpdatedAt: t0}
	must(t, st.CreateBusiness(ctx, bare))
	if got, err := st.BusinessByID(ctx, bare.ID); err != nil || got.ReferralCode == "" || got.ReferralCode == ref.ReferralCode {
		t.Fatalf("a business stored without a code has %q (%v)", got.ReferralCode, err)
	}
	twin, _ := payd.NewBusiness("Twin", "t@example.com", false, t0)
	twin.ReferralCode = ref.ReferralCode
	wantCode(t, st.CreateBusiness(ctx, twin), payd.ErrConflict)

	biz, _ := payd.NewBusiness("Referred", "r@example.com", false, t0)
	biz.ReferredBy = ref.ID
	must(t, st.CreateBusiness(ctx, biz))
	if got, _ := st.BusinessByID(ctx, biz.ID); got.ReferredBy != ref.ID {
		t.Fatalf("ReferredBy = %q, want %q", got.ReferredBy, ref.ID)
	}
	must(t, st.SetReferrer(ctx, biz.ID, bare.ID))
	if got, _ := st.BusinessByID(ctx, biz.ID); got.ReferredBy != bare.ID {
		t.Fatalf("ReferredBy = %q after SetReferrer, want %q", got.ReferredBy, bare.ID)
	}
	must(t, st.SetReferrer(ctx, biz.ID, ""))
	if got, _ := st.BusinessByID(ctx, biz.ID); got.ReferredBy != "" {
		t.Fatalf("ReferredBy = %q after clearing", got.ReferredBy)
	}
	wantCode(t, st.SetReferrer(ctx, payd.NewID(payd.PrefixBusiness), ref.ID), payd.ErrNotFound)
	mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Bitcoin))
	wantCode(t, st.SetReferrer(ctx, biz.ID, ref.ID), payd.ErrReferralLocked)
	if got, _ := st.BusinessByID(ctx, biz.ID); got.ReferredBy != "" {
		t.Fatalf("ReferredBy = %q after a locked change", got.ReferredBy)
	}
}
