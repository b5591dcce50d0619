package storetest

import (
	"reflect"
	"testing"
	"time"

	"payd"
	"payd/money"
)

func testCheckoutSettings(t *testing.T, b *bundle) {
	t.Run("NeverSavedIsNotFound", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		_, err := st.CheckoutSettings(ctx, biz.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("SaveAndReplace", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		s := payd.DefaultCheckoutSettings(biz.ID)
		s.UpdatedAt = t0
		must(t, st.SaveCheckoutSettings(ctx, s))
		got, err := st.CheckoutSettings(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("read back %+v, saved %+v", got, s)
		}
		s = &payd.CheckoutSettings{BusinessID: biz.ID, QuoteMinutes: 30, CollectEmail: true, FeePayer: money.FeePayerCustomer,
			AcceptedRails: []payd.Rail{payd.RailCard}, AcceptedAssets: map[money.Network][]money.Asset{money.Solana: {money.USDC, money.SOL}},
			UpdatedAt: t0.Add(time.Hour)}
		must(t, st.SaveCheckoutSettings(ctx, s))
		got, err = st.CheckoutSettings(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("after replacing: read back %+v, saved %+v", got, s)
		}
		_, err = st.CheckoutSettings(ctx, other.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("Branding", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		s := payd.DefaultCheckoutSettings(biz.ID)
		s.DisplayName, s.AccentColor, s.SupportEmail, s.UpdatedAt = "Ada’s Books & Maps", "#7a1f5c", "help@ada.example", t0
		must(t, st.SaveCheckoutSettings(ctx, s))
		got, err := st.CheckoutSettings(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("read back %+v, saved %+v", got, s)
		}
		// The support email is the business's own: the public pages read it there.
		b2, err := st.BusinessByID(ctx, biz.ID)
		must(t, err)
		if b2.SupportEmail != "help@ada.example" {
			t.Fatalf("business support email %q", b2.SupportEmail)
		}
		s.DisplayName, s.AccentColor, s.SupportEmail, s.UpdatedAt = "", "", "", t0.Add(time.Minute)
		must(t, st.SaveCheckoutSettings(ctx, s))
		got, err = st.CheckoutSettings(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("after clearing: read back %+v, saved %+v", got, s)
		}
	})
	t.Run("Logo", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		_, err := st.CheckoutLogo(ctx, biz.ID)
		wantCode(t, err, payd.ErrNotFound)
		l := &payd.CheckoutLogo{BusinessID: biz.ID, Digest: "00112233445566778899aabbccddeeff", ContentType: "image/png",
			Data: []byte("\x89PNG\r\n\x1a\n\x00\xff binary"), UpdatedAt: t0}
		must(t, st.SaveCheckoutLogo(ctx, l))
		got, err := st.CheckoutLogo(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, l) {
			t.Fatalf("read back %+v, saved %+v", got, l)
		}
		got, err = st.CheckoutLogoByDigest(ctx, l.Digest)
		must(t, err)
		if !reflect.DeepEqual(got, l) {
			t.Fatalf("by digest %+v, saved %+v", got, l)
		}
		l2 := &payd.CheckoutLogo{BusinessID: biz.ID, Digest: "ffeeddccbbaa99887766554433221100", ContentType: "image/jpeg",
			Data: []byte{0xff, 0xd8, 0xff}, UpdatedAt: t0.Add(time.Hour)}
		must(t, st.SaveCheckoutLogo(ctx, l2))
		got, err = st.CheckoutLogo(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, l2) {
			t.Fatalf("after replacing %+v, saved %+v", got, l2)
		}
		_, err = st.CheckoutLogoByDigest(ctx, l.Digest)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.CheckoutLogo(ctx, other.ID)
		wantCode(t, err, payd.ErrNotFound)
		must(t, st.DeleteCheckoutLogo(ctx, biz.ID))
		must(t, st.DeleteCheckoutLogo(ctx, biz.ID))
		_, err = st.CheckoutLogo(ctx, biz.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
}
