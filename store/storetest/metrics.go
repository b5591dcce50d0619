package storetest

import (
	"maps"
	"testing"
	"time"

	"payd"
)

// modelCounts is what PaymentStatusCounts should answer for f.
func (fx *listFixture) modelCounts(f payd.PaymentFilter) map[payd.PaymentStatus]int64 {
	want := map[payd.PaymentStatus]int64{}
	for _, s := range payd.PaymentStatuses {
		want[s] = 0
	}
	for _, p := range fx.payments {
		if matches(p, f, false) && (f.Query == "" || p.Reference == f.Query) {
			want[p.Status]++
		}
	}
	return want
}

// testPaymentStatusCounts compares the counts with the model under every
// list filter, and under created ranges cut at and between day boundaries
// (the rollup answers whole days, the rows the partial ones).
func testPaymentStatusCounts(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := listSeed(t, ctx, st)
	check := func(name string, f payd.PaymentFilter) {
		t.Helper()
		got, err := st.PaymentStatusCounts(ctx, f)
		must(t, err)
		if want := fx.modelCounts(f); !maps.Equal(got, want) {
			t.Fatalf("%s: counts %v, want %v", name, got, want)
		}
	}
	for name, f := range fx.listFilters() {
		check(name, f)
	}
	check("q", payd.PaymentFilter{BusinessID: fx.biz.ID, Query: "ref-0", Status: ptr(payd.PaymentPending)})
	day := t0.Truncate(24 * time.Hour)
	cuts := []time.Time{day.Add(-time.Hour), day, t0, day.Add(24 * time.Hour), t0.Add(35 * time.Hour),
		day.Add(48 * time.Hour), day.Add(48*time.Hour + time.Microsecond), t0.Add(98 * time.Hour), day.Add(240 * time.Hour)}
	for _, a := range cuts {
		check("after "+a.String(), payd.PaymentFilter{BusinessID: fx.biz.ID, CreatedAfter: &a})
		check("before "+a.String(), payd.PaymentFilter{BusinessID: fx.biz.ID, CreatedBefore: &a})
		for _, z := range cuts {
			f := payd.PaymentFilter{BusinessID: fx.biz.ID, CreatedAfter: &a, CreatedBefore: &z, Rail: ptr(payd.RailCrypto)}
			check("range", f)
			f.Rail = nil
			check("range", f)
		}
	}
	t.Run("follows updates", func(t *testing.T) {
		p := fx.payments[0]
		p.Status = payd.PaymentSucceeded
		p.Method = &payd.Method{Rail: payd.RailCard, Asset: "USDC", Network: "polygon", Amount: "1.00", ExpectedAmount: "1.00"}
		must(t, st.UpdatePayment(ctx, p))
		check("after an update", payd.PaymentFilter{BusinessID: fx.biz.ID})
		check("after an update, card", payd.PaymentFilter{BusinessID: fx.biz.ID, Rail: ptr(payd.RailCard)})
	})
}

// testPaymentDays checks the rollup against the payments, before and after
// a payment changes status and rail, and that it is scoped by business.
func testPaymentDays(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := listSeed(t, ctx, st)
	check := func() {
		t.Helper()
		from, to := t0.Add(-48*time.Hour), t0.Add(200*time.Hour)
		got, err := st.PaymentDays(ctx, fx.biz.ID, from, to)
		must(t, err)
		want := map[payd.PaymentDay]int{}
		for _, p := range fx.payments {
			var fee int64
			if p.Reporting.FeeUSD != nil {
				fee = *p.Reporting.FeeUSD
			}
			want[payd.PaymentDay{Date: p.CreatedAt.Truncate(24 * time.Hour), Status: p.Status, Rail: rail(p),
				Payments: 1, AmountUSD: p.Reporting.AmountUSD, FeeUSD: fee}]++
		}
		if sum := sumDays(got); !maps.Equal(sum, sumDays(keysTimes(want))) {
			t.Fatalf("days:\n got %v\nwant %v", sum, sumDays(keysTimes(want)))
		}
	}
	check()
	p := fx.payments[1]
	fee := int64(7)
	p.Status, p.Reporting.FeeUSD = payd.PaymentSucceeded, &fee
	p.Method.Rail = payd.RailCard
	must(t, st.UpdatePayment(ctx, p))
	check()
	got, err := st.PaymentDays(ctx, fx.biz.ID, t0.Add(24*time.Hour), t0.Add(24*time.Hour))
	must(t, err)
	for _, d := range got {
		if !d.Date.Equal(t0.Add(24*time.Hour).Truncate(24*time.Hour)) || d.Payments == 0 {
			t.Fatalf("one day asked, got %+v", d)
		}
	}
	other, err := st.PaymentDays(ctx, fx.other.ID, t0, t0.Add(24*time.Hour))
	must(t, err)
	if n := sumDays(other); len(n) == 0 || n[dayKey{t0.Truncate(24 * time.Hour), payd.PaymentPending, ""}].Payments != 1 {
		t.Fatalf("other business: %v", n)
	}
}

// dayKey groups rollup rows; the rollup may split nothing further, but
// comparing sums keeps the test from depending on zero rows.
type dayKey struct {
	date   time.Time
	status payd.PaymentStatus
	rail   payd.Rail
}

func sumDays(rows []payd.PaymentDay) map[dayKey]payd.PaymentDay {
	out := map[dayKey]payd.PaymentDay{}
	for _, r := range rows {
		k := dayKey{r.Date, r.Status, r.Rail}
		s := out[k]
		s.Date, s.Status, s.Rail = r.Date, r.Status, r.Rail
		s.Payments += r.Payments
		s.AmountUSD += r.AmountUSD
		s.FeeUSD += r.FeeUSD
		out[k] = s
	}
	return out
}

func keysTimes(m map[payd.PaymentDay]int) []payd.PaymentDay {
	var out []payd.PaymentDay
	for d, n := range m {
		for range n {
			out = append(out, d)
		}
	}
	return out
}
