package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
)

func testSearch(t *testing.T, b *bundle) {
	t.Run("Fields", func(t *testing.T) { testSearchFields(t, b) })
	t.Run("TiersAndTies", func(t *testing.T) { testSearchTiers(t, b) })
	t.Run("Model", func(t *testing.T) { testSearchModel(t, b) })
	t.Run("Changes", func(t *testing.T) { testSearchChanges(t, b) })
}

// searchFixture is a small business with one object of each kind.
type searchFixture struct {
	biz, other *payd.Business
	cst        *payd.Customer
	lnk        *payd.Link
	pmt        *payd.Payment
}

func newSearchFixture(t *testing.T, ctx context.Context, st payd.Store) *searchFixture {
	fx := &searchFixture{biz: mustBusiness(t, ctx, st), other: mustBusiness(t, ctx, st)}
	fx.cst = mustCustomer(t, ctx, st, fx.biz.ID, "Ada Lovelace", "Ada.L@Example.org", t0)
	fx.lnk = mustLink(t, ctx, st, fx.biz.ID, "Analytical Engine", money.EUR, t0, func(l *payd.Link) {
		l.Description, l.Amount = "Punched cards included", 4_250
	})
	p := newPayment(t, fx.biz, 1_250, "INV-2031-77")
	p.CustomerID, p.CheckoutID, p.Description = fx.cst.ID, payd.NewID(payd.PrefixCheckout), "Brass gears and Ünïcode ΣΊΣΥΦΟΣ"
	p.Metadata = map[string]string{"order": "Ord_Quaternion"}
	p.Method = &payd.Method{Rail: payd.RailCrypto, Asset: money.USDC, Network: money.Polygon, Amount: "12.50",
		ExpectedAmount: "12.50", FromAddress: "0xFromAddrBEEF", TxHash: "0xTxHashCAFE"}
	must(t, st.CreatePayment(ctx, p))
	fx.pmt = p
	mustCustomer(t, ctx, st, fx.other.ID, "Ada Lovelace", "ada.l@example.org", t0) // another tenant
	return fx
}

// search returns "kind:id@tier" of every hit of q.
func search(t *testing.T, st payd.Store, biz, q string, kinds ...payd.SearchKind) []string {
	t.Helper()
	if kinds == nil {
		kinds = payd.SearchKinds
	}
	hits, err := st.Search(t.Context(), payd.SearchQuery{BusinessID: biz, Text: q, Kinds: kinds, Limit: 100})
	must(t, err)
	return hitStrings(hits)
}

func hitStrings(hits []payd.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%s@%d", h.Kind, h.ID, h.Tier))
	}
	return out
}

// indexAll runs the indexer until the queue is empty.
func indexAll(t *testing.T, st payd.Store) {
	t.Helper()
	for {
		n, err := st.IndexSearch(t.Context(), 50)
		must(t, err)
		if n == 0 {
			return
		}
	}
}

// twice runs check before the indexer ran (queued objects are matched from
// their rows) and after.
func twice(t *testing.T, st payd.Store, check func(t *testing.T)) {
	t.Helper()
	t.Run("Queued", check)
	indexAll(t, st)
	t.Run("Indexed", check)
}

func testSearchFields(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := newSearchFixture(t, ctx, st)
	p, c, l := "payment:"+fx.pmt.ID, "customer:"+fx.cst.ID, "link:"+fx.lnk.ID
	cases := []struct {
		q    string
		want []string
	}{
		{strings.ToLower(fx.pmt.ID), []string{p + "@1"}},
		{fx.pmt.CheckoutID, []string{p + "@1"}},
		{"inv-2031", []string{p + "@2"}},
		{"2031 77", []string{p + "@2"}},
		{"031 7", []string{p + "@3"}},
		{"uaternion", []string{p + "@3"}},
		{"ord_quat", []string{p + "@2"}},
		{"0xtxhashcafe", []string{p + "@1"}},
		{"0XFROMADDRBEEF", []string{p + "@1"}},
		{"hashca", []string{p + "@3"}},
		{"brass", []string{p + "@2"}},
		{"ünï", []string{p + "@2"}},
		{"σίσυφος", []string{p + "@2"}},
		{"12.50", []string{p + "@2"}},
		{"1250", []string{p + "@2"}},
		{"ADA.L@EXAMPLE.ORG", []string{c + "@1", p + "@1"}},
		{"lovelace", []string{c + "@2", p + "@2"}},
		{"ovela", []string{c + "@3", p + "@3"}},
		{fx.cst.ID, []string{c + "@1"}},
		{fx.lnk.ID, []string{l + "@1"}},
		{fx.lnk.Code, []string{l + "@1"}},
		{"engine", []string{l + "@2"}},
		{"punched card", []string{l + "@2"}},
		{"42.50", []string{l + "@2"}},
		{"4250", []string{l + "@2"}},
		{"nalytic", []string{l + "@3"}},
		{"zzz-nothing", nil},
		{"...", nil},
	}
	twice(t, st, func(t *testing.T) {
		for _, tc := range cases {
			wantIDs(t, tc.q, search(t, st, fx.biz.ID, tc.q), tc.want)
		}
		wantIDs(t, "kind filter", search(t, st, fx.biz.ID, "lovelace", payd.SearchPayment), []string{p + "@2"})
		wantIDs(t, "other tenant", search(t, st, fx.other.ID, "brass"), nil)
	})
}

func testSearchTiers(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	l1 := mustLink(t, ctx, st, biz.ID, "zeta things", money.USD, t0, nil)
	c1 := mustCustomer(t, ctx, st, biz.ID, "Zeta Old", "old@x.org", t0)
	c2 := mustCustomer(t, ctx, st, biz.ID, "Zeta New", "new@x.org", t0.Add(time.Hour))
	c3 := mustCustomer(t, ctx, st, biz.ID, "Mazeta", "mz@x.org", t0)
	same := t0.Add(2 * time.Hour)
	c4 := mustCustomer(t, ctx, st, biz.ID, "Zeta Same A", "a@x.org", same)
	c5 := mustCustomer(t, ctx, st, biz.ID, "Zeta Same B", "b@x.org", same)
	p1 := newPayment(t, biz, 500, "")
	p1.Description = "for zeta"
	must(t, st.CreatePayment(ctx, p1))
	hi, lo := c4.ID, c5.ID
	if hi < lo {
		hi, lo = lo, hi
	}
	want := []string{"link:" + l1.ID + "@2", "customer:" + hi + "@2", "customer:" + lo + "@2",
		"customer:" + c2.ID + "@2", "customer:" + c1.ID + "@2", "payment:" + p1.ID + "@2", "customer:" + c3.ID + "@3"}
	twice(t, st, func(t *testing.T) {
		wantIDs(t, "exact email", search(t, st, biz.ID, "MZ@x.org"), []string{"customer:" + c3.ID + "@1"})
		wantIDs(t, "zeta", search(t, st, biz.ID, "Zeta"), want)
		wantIDs(t, "customers only", search(t, st, biz.ID, "zeta", payd.SearchCustomer), append(want[1:5:5], want[6]))
		wantPages(t, st, biz.ID, "zeta", payd.SearchKinds)
	})
}

// wantPages pages through q two hits at a time and compares with one page.
func wantPages(t *testing.T, st payd.Store, biz, q string, kinds []payd.SearchKind) {
	t.Helper()
	all, err := st.Search(t.Context(), payd.SearchQuery{BusinessID: biz, Text: q, Kinds: kinds, Limit: 1000})
	must(t, err)
	var paged []payd.SearchHit
	var after *payd.SearchPosition
	for {
		hits, err := st.Search(t.Context(), payd.SearchQuery{BusinessID: biz, Text: q, Kinds: kinds, Limit: 2, After: after})
		must(t, err)
		paged = append(paged, hits...)
		if len(hits) < 2 {
			break
		}
		after = &hits[len(hits)-1]
	}
	wantIDs(t, "pages of "+q, hitStrings(paged), hitStrings(all))
}

// testSearchModel compares searches with a model over many customers,
// more than one scan window, so that rare terms go through the index.
func testSearchModel(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	var all []*payd.Customer
	must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		for i := range 2300 {
			name := fmt.Sprintf("Filler%d Person%d", i, i%7)
			if i == 3 {
				name = "Zebulon Quixote"
			}
			c, err := payd.NewCustomer(biz.ID, name, fmt.Sprintf("f%d@mail%d.test", i, i%3), "", t0.Add(time.Duration(i%1000)*time.Second))
			if err != nil {
				return err
			}
			all = append(all, c)
			if err := q.CreateCustomer(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}))
	queries := []string{"zebulon", "ebulo", "quixote zz", "ze", "filler12", "person3", "mail1", "f7@mail1.test", "iller2", "l", "on6"}
	indexAll(t, st)
	for _, q := range queries {
		want := modelSearch(all, q)
		got := search(t, st, biz.ID, q, payd.SearchCustomer)
		wantIDs(t, q, got, want[:min(len(want), 100)])
	}
	wantPages(t, st, biz.ID, "zebulon", []payd.SearchKind{payd.SearchCustomer})
}

// modelSearch ranks customers by spec 4.2 directly from their fields.
func modelSearch(all []*payd.Customer, q string) []string {
	type hit struct {
		tier int
		c    *payd.Customer
	}
	var hits []hit
	key, words := payd.SearchFold(strings.TrimSpace(q)), payd.SearchWords(q)
	for _, c := range all {
		tier := 0
		switch {
		case key == payd.SearchFold(c.ID) || key == payd.SearchFold(c.Email):
			tier = 1
		case words == "":
		case modelWordStart(words, c.ID, c.Email, c.Name):
			tier = 2
		case modelContains(words, c.ID, c.Email, c.Name):
			tier = 3
		}
		if tier > 0 {
			hits = append(hits, hit{tier, c})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.tier != b.tier {
			return a.tier - b.tier
		}
		if c := b.c.CreatedAt.Compare(a.c.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.c.ID, a.c.ID)
	})
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("customer:%s@%d", h.c.ID, h.tier))
	}
	return out
}

func modelWordStart(words string, fields ...string) bool {
	for _, f := range fields {
		if w := payd.SearchWords(f); strings.HasPrefix(w, words) || strings.Contains(w, " "+words) {
			return true
		}
	}
	return false
}

func modelContains(words string, fields ...string) bool {
	for _, f := range fields {
		if strings.Contains(payd.SearchWords(f), words) {
			return true
		}
	}
	return false
}

// testSearchChanges follows renames and deletions, before and after the
// indexer catches up.
func testSearchChanges(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	fx := newSearchFixture(t, ctx, st)
	indexAll(t, st)
	fx.cst.Name, fx.cst.Email = "Grace Hopper", "grace@navy.example"
	must(t, st.UpdateCustomer(ctx, fx.cst))
	wantIDs(t, "renamed, queued", search(t, st, fx.biz.ID, "hopper", payd.SearchCustomer), []string{"customer:" + fx.cst.ID + "@2"})
	indexAll(t, st)
	wantIDs(t, "renamed", search(t, st, fx.biz.ID, "hopper"), []string{"customer:" + fx.cst.ID + "@2", "payment:" + fx.pmt.ID + "@2"})
	wantIDs(t, "old name", search(t, st, fx.biz.ID, "lovelace"), nil)
	must(t, st.DeleteLink(ctx, fx.biz.ID, fx.lnk.ID))
	wantIDs(t, "deleted, queued", search(t, st, fx.biz.ID, "engine"), nil)
	indexAll(t, st)
	wantIDs(t, "deleted", search(t, st, fx.biz.ID, fx.lnk.Code), nil)
}
