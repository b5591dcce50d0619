package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// listFixture is a business with payments of every status and rail, ties
// in created_at and amount, customers, links, references and metadata,
// spread over several UTC days; and a second business whose payments must
// never show.
type listFixture struct {
	biz, other *payd.Business
	payments   []*payd.Payment
	customers  []*payd.Customer
	links      []string
}

// listSeed stores the fixture.
func listSeed(t *testing.T, ctx context.Context, st payd.Store) *listFixture {
	t.Helper()
	fx := &listFixture{biz: mustBusiness(t, ctx, st), other: mustBusiness(t, ctx, st),
		links: []string{payd.NewID(payd.PrefixLink), payd.NewID(payd.PrefixLink)}}
	fx.customers = []*payd.Customer{
		mustCustomer(t, ctx, st, fx.biz.ID, "Grace Hopper", "grace@navy.example", t0),
		mustCustomer(t, ctx, st, fx.biz.ID, "Alan Turing", "alan@bletchley.example", t0),
	}
	for i := range 30 {
		p := listPayment(t, fx.biz, i)
		if i%3 == 0 {
			p.CustomerID = fx.customers[i%2].ID
		}
		if i%4 == 1 {
			p.LinkID = fx.links[i%2]
		}
		must(t, st.CreatePayment(ctx, p))
		fx.payments = append(fx.payments, p)
	}
	for i := range 5 {
		p := listPayment(t, fx.other, i)
		p.CustomerID = fx.customers[0].ID // another business's id: must not match
		must(t, st.CreatePayment(ctx, p))
	}
	return fx
}

// listPayment is the i-th payment of the fixture. Pairs share created_at
// (7 hours apart, so the payments span five UTC days), amounts repeat.
func listPayment(t *testing.T, biz *payd.Business, i int) *payd.Payment {
	t.Helper()
	p := newPayment(t, biz, int64(100+(i*37%11)*100), "")
	p.Status = payd.PaymentStatuses[i%len(payd.PaymentStatuses)]
	p.CreatedAt = t0.Add(time.Duration(i/2) * 7 * time.Hour)
	p.UpdatedAt = p.CreatedAt
	p.Description = fmt.Sprintf("order %d of the Widget_%d%% range", i, i%5)
	p.Metadata = map[string]string{"batch": fmt.Sprint(i % 3), "n": fmt.Sprint(i)}
	if i == 11 {
		p.Metadata["note"] = "Giraffe"
	}
	if i%5 == 0 {
		p.Reference = fmt.Sprintf("ref-%d", i%10)
	}
	if i%2 == 1 {
		rail := []payd.Rail{payd.RailCrypto, payd.RailCard}[i/2%2]
		p.Method = &payd.Method{Rail: rail, Asset: money.USDC, Network: money.Polygon, Amount: "1.00",
			ExpectedAmount: "1.00", FromAddress: fmt.Sprintf("0xFrom%03d", i), TxHash: fmt.Sprintf("0xhash%03d", i)}
	}
	if p.Status == payd.PaymentSucceeded {
		fee := p.Reporting.AmountUSD / 100
		p.Reporting.FeeUSD = &fee
	}
	return p
}

// rail is the payment's rail, "" before one is chosen.
func rail(p *payd.Payment) payd.Rail {
	if p.Method == nil {
		return ""
	}
	return p.Method.Rail
}

// matches is the model of every filter but q.
func matches(p *payd.Payment, f payd.PaymentFilter, withStatus bool) bool {
	switch {
	case p.BusinessID != f.BusinessID,
		withStatus && f.Status != nil && p.Status != *f.Status,
		f.Rail != nil && rail(p) != *f.Rail,
		f.Reference != nil && p.Reference != *f.Reference,
		f.CustomerID != nil && p.CustomerID != *f.CustomerID,
		f.LinkID != nil && p.LinkID != *f.LinkID,
		f.CreatedAfter != nil && p.CreatedAt.Before(*f.CreatedAfter),
		f.CreatedBefore != nil && !p.CreatedAt.Before(*f.CreatedBefore):
		return false
	}
	for _, m := range f.Metadata {
		if v, ok := p.Metadata[m.Key]; !ok || v != m.Value {
			return false
		}
	}
	return true
}

// comparePayments orders payments as sort s does.
func comparePayments(s payd.PaymentSort) func(a, b *payd.Payment) int {
	return func(a, b *payd.Payment) int {
		c := a.CreatedAt.Compare(b.CreatedAt)
		if s.ByAmount() {
			c = cmp.Compare(a.Amount, b.Amount)
		}
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if s.Descending() {
			c = -c
		}
		return c
	}
}

// want is what the model says f lists, in order.
func (fx *listFixture) want(f payd.PaymentFilter) []string {
	var ps []*payd.Payment
	for _, p := range fx.payments {
		if matches(p, f, true) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, comparePayments(f.Sort))
	return paymentIDs(ps)
}

func paymentIDs(ps []*payd.Payment) []string {
	ids := []string{}
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
}

// listAll pages through f with pages of size, as the API does.
func listAll(t *testing.T, st payd.Store, f payd.PaymentFilter, size int) []string {
	t.Helper()
	ids := []string{}
	f.Limit, f.After = size, nil
	for range 100 {
		ps, err := st.ListPayments(t.Context(), f)
		must(t, err)
		ids = append(ids, paymentIDs(ps)...)
		if len(ps) < size {
			return ids
		}
		pos := payd.PositionOf(ps[len(ps)-1], f.Sort)
		f.After = &pos
	}
	t.Fatal("listing never ended")
	return nil
}

func ptr[T any](v T) *T { return &v }

// listFilters are the filters the list and count tests run, each with
// every sort.
func (fx *listFixture) listFilters() map[string]payd.PaymentFilter {
	biz := fx.biz.ID
	mid := t0.Add(30 * time.Hour)
	day := t0.Truncate(24 * time.Hour).Add(48 * time.Hour)
	return map[string]payd.PaymentFilter{
		"none":             {BusinessID: biz},
		"status":           {BusinessID: biz, Status: ptr(payd.PaymentSucceeded)},
		"rail":             {BusinessID: biz, Rail: ptr(payd.RailCard)},
		"status and rail":  {BusinessID: biz, Status: ptr(payd.PaymentUnderpaid), Rail: ptr(payd.RailCrypto)},
		"reference":        {BusinessID: biz, Reference: ptr("ref-0")},
		"customer":         {BusinessID: biz, CustomerID: ptr(fx.customers[0].ID)},
		"customer, status": {BusinessID: biz, CustomerID: ptr(fx.customers[1].ID), Status: ptr(payd.PaymentNeedsReview)},
		"link":             {BusinessID: biz, LinkID: ptr(fx.links[1])},
		"metadata":         {BusinessID: biz, Metadata: []payd.MetadataPair{{Key: "batch", Value: "1"}}},
		"two metadata": {BusinessID: biz, Metadata: []payd.MetadataPair{{Key: "batch", Value: "2"}, {Key: "n", Value: "5"}},
			Status: ptr(payd.PaymentFailed)},
		"metadata, range": {BusinessID: biz, Metadata: []payd.MetadataPair{{Key: "batch", Value: "0"}},
			CreatedAfter: &mid, CreatedBefore: ptr(mid.Add(40 * time.Hour))},
		"after":           {BusinessID: biz, CreatedAfter: &mid},
		"before":          {BusinessID: biz, CreatedBefore: &mid},
		"range":           {BusinessID: biz, CreatedAfter: ptr(t0.Add(7 * time.Hour)), CreatedBefore: ptr(t0.Add(63 * time.Hour))},
		"day range":       {BusinessID: biz, CreatedAfter: &day, CreatedBefore: ptr(day.Add(24 * time.Hour))},
		"range, rail":     {BusinessID: biz, CreatedAfter: ptr(t0.Add(8 * time.Hour)), Rail: ptr(payd.RailCrypto)},
		"nothing matches": {BusinessID: biz, Reference: ptr("nope")},
	}
}

var allSorts = []payd.PaymentSort{payd.SortCreatedDesc, payd.SortCreatedAsc, payd.SortAmountDesc, payd.SortAmountAsc}

func testListPayments(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := listSeed(t, ctx, st)
	for name, f := range fx.listFilters() {
		for _, s := range allSorts {
			f.Sort = s
			want := fx.want(f)
			for _, size := range []int{1, 4, 100} {
				if got := listAll(t, st, f, size); !slices.Equal(got, want) {
					t.Fatalf("%s, sort %s, pages of %d:\n got %v\nwant %v", name, s, size, got, want)
				}
			}
		}
	}
	t.Run("tenants", func(t *testing.T) {
		// The other business's payments name this business's customer;
		// the "customer" filter above already shows they stay out.
		f := payd.PaymentFilter{BusinessID: fx.other.ID, CustomerID: ptr(fx.customers[0].ID), Sort: payd.SortAmountAsc}
		if got := listAll(t, st, f, 2); len(got) != 5 || slices.ContainsFunc(got, func(id string) bool {
			return slices.Contains(paymentIDs(fx.payments), id)
		}) {
			t.Fatalf("other business lists %v", got)
		}
	})
	t.Run("whole payments with events", func(t *testing.T) {
		ps, err := st.ListPayments(ctx, payd.PaymentFilter{BusinessID: fx.biz.ID, Sort: payd.SortCreatedAsc, Limit: 30})
		must(t, err)
		for i, p := range ps {
			want, err := st.PaymentByID(ctx, fx.biz.ID, p.ID)
			must(t, err)
			samePayment(t, p, want)
			if len(p.Events) == 0 || i > 0 && p.CreatedAt.Before(ps[i-1].CreatedAt) {
				t.Fatalf("payment %d: %d events, order %v", i, len(p.Events), p.CreatedAt)
			}
		}
	})
	t.Run("q", func(t *testing.T) { testListQuery(t, st, fx) })
}

// testListQuery checks q on every field it searches, ignoring case, with
// LIKE's wildcards taken literally, before the search indexer ran (queued
// payments are matched from their rows) and after it. A term finds what
// GET /search?kind=payment finds, in the list's order and under its
// filters, whether its few matches drive the list by id or a short term is
// checked on every row.
func testListQuery(t *testing.T, st payd.Store, fx *listFixture) {
	p3, c0, c1 := fx.payments[3], fx.customers[0].ID, fx.customers[1].ID
	cases := []struct {
		term string
		keep func(p *payd.Payment) bool
	}{
		{p3.ID, func(p *payd.Payment) bool { return p == p3 }},
		{"0xHASH003", func(p *payd.Payment) bool { return p == p3 }},
		{"0xfrom003", func(p *payd.Payment) bool { return p == p3 }},
		{"ref-5", func(p *payd.Payment) bool { return p.Reference == "ref-5" }},
		{"widget_4%", func(p *payd.Payment) bool { return slices.Index(fx.payments, p)%5 == 4 }},
		{"w_dget", func(p *payd.Payment) bool { return false }},
		{"GRACE", func(p *payd.Payment) bool { return p.CustomerID == c0 }},
		{"bletchley", func(p *payd.Payment) bool { return p.CustomerID == c1 }},
		{"iraff", func(p *payd.Payment) bool { return p.Metadata["note"] == "Giraffe" }},
		{"7.00", func(p *payd.Payment) bool { return p.Amount == 700 }},
		{"order 17 ", func(p *payd.Payment) bool { return p == fx.payments[17] }},
		{"no such thing", func(p *payd.Payment) bool { return false }},
		{"%", func(p *payd.Payment) bool { return false }},
	}
	succeeded := payd.PaymentSucceeded
	filters := []payd.PaymentFilter{
		{Sort: payd.SortCreatedDesc},
		{Sort: payd.SortAmountAsc},
		{Sort: payd.SortCreatedAsc, Status: &succeeded},
	}
	twice(t, st, func(t *testing.T) {
		for _, c := range cases {
			f := payd.PaymentFilter{BusinessID: fx.biz.ID, Query: c.term, Sort: payd.SortCreatedDesc}
			want := filterPayments(fx.payments, c.keep)
			slices.SortFunc(want, comparePayments(f.Sort))
			if got := listAll(t, st, f, 3); !slices.Equal(got, paymentIDs(want)) {
				t.Fatalf("q=%q: got %v, want %v", c.term, got, paymentIDs(want))
			}
		}
		for _, term := range []string{"17", "er", "0x", "order 2", "grace", "alan@bletchley.example", "range", "7"} {
			found := map[string]bool{}
			for _, h := range search(t, st, fx.biz.ID, term, payd.SearchPayment) {
				id, _, _ := strings.Cut(strings.TrimPrefix(h, "payment:"), "@")
				found[id] = true
			}
			if len(found) == 0 {
				t.Fatalf("q=%q finds nothing: not a useful case", term)
			}
			for _, base := range filters {
				f := base
				f.BusinessID, f.Query = fx.biz.ID, term
				want := filterPayments(fx.payments, func(p *payd.Payment) bool {
					return found[p.ID] && (f.Status == nil || p.Status == *f.Status)
				})
				slices.SortFunc(want, comparePayments(f.Sort))
				if got := listAll(t, st, f, 4); !slices.Equal(got, paymentIDs(want)) {
					t.Fatalf("q=%q sort %v: got %v, want what search finds %v", term, f.Sort, got, paymentIDs(want))
				}
				counts, err := st.PaymentStatusCounts(t.Context(), f)
				must(t, err)
				var n int64
				for _, k := range counts {
					n += k
				}
				if base.Status == nil && n != int64(len(want)) {
					t.Fatalf("q=%q: status counts add up to %d, want %d", term, n, len(want))
				}
			}
		}
	})
}

func filterPayments(ps []*payd.Payment, keep func(*payd.Payment) bool) []*payd.Payment {
	var out []*payd.Payment
	for _, p := range ps {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}
