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
}
