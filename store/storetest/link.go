package storetest

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/money"
)

func testLink(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		for _, success := range []string{"", "https://example.com/thanks"} {
			want := mustLink(t, ctx, st, biz.ID, "Ebook", money.EUR, t0, func(l *payd.Link) { l.SuccessURL = success })
			got, err := st.LinkByID(ctx, biz.ID, want.ID)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("LinkByID = %+v, want %+v", got, want)
			}
			got, err = st.LinkByCode(ctx, want.Code)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("LinkByCode = %+v, want %+v", got, want)
			}
		}
		_, err := st.LinkByCode(ctx, "nothing")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("EveryFieldIsStored", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
		want := mustLink(t, ctx, st, biz.ID, "Old", money.GBP, t0, func(l *payd.Link) {
			l.Status, l.ArchivedAt, l.DisabledAt, l.DisabledReason = payd.LinkDisabled, &t1, &t2, "fraud"
			l.Stats = payd.Stats{Payments: 4, VolumeUSD: 999}
		})
		got, err := st.LinkByID(ctx, biz.ID, want.ID)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("LinkByID = %+v, want %+v", got, want)
		}
	})
	t.Run("CodeIsUnique", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		dup := *l
		dup.ID, dup.BusinessID = payd.NewID(payd.PrefixLink), other.ID
		wantCode(t, st.CreateLink(ctx, &dup), payd.ErrConflict)
	})
	t.Run("ScopedToTheBusiness", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		_, err := st.LinkByID(ctx, other.ID, l.ID)
		wantCode(t, err, payd.ErrNotFound)
		moved := *l
		moved.BusinessID = other.ID
		wantCode(t, st.UpdateLink(ctx, &moved), payd.ErrNotFound)
		wantCode(t, st.AddLinkStats(ctx, other.ID, l.ID, payd.StatsDelta{Payments: 1}), payd.ErrNotFound)
		wantCode(t, st.DeleteLink(ctx, other.ID, l.ID), payd.ErrNotFound)
		got, err := st.ListLinks(ctx, other.ID, payd.LinkFilter{Limit: 10})
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("ListLinks of another business = %v", got)
		}
	})
	t.Run("Update", testUpdateLink(b))
	t.Run("AddStats", testAddLinkStats(b))
	t.Run("Delete", testDeleteLink(b))
	t.Run("Disable", testDisableLink(b))
	t.Run("List", testListLinks(b))
}

func testUpdateLink(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		must(t, st.AddLinkStats(ctx, biz.ID, l.ID, payd.StatsDelta{Payments: 1, VolumeUSD: 100}))
		t1 := t0.Add(time.Minute)
		l.Name, l.Description, l.Amount, l.Currency, l.SuccessURL = "B", "new", 2500, money.CAD, "https://x.example/ok"
		must(t, l.Archive(t1))
		must(t, st.UpdateLink(ctx, l))
		got, err := st.LinkByID(ctx, biz.ID, l.ID)
		must(t, err)
		l.Stats = payd.Stats{Payments: 1, VolumeUSD: 100} // UpdateLink never writes the stats
		if !reflect.DeepEqual(got, l) {
			t.Fatalf("after update %+v, want %+v", got, l)
		}
		l.SuccessURL = ""
		must(t, l.Restore(t1))
		must(t, st.UpdateLink(ctx, l))
		got, err = st.LinkByID(ctx, biz.ID, l.ID)
		must(t, err)
		if got.SuccessURL != "" || got.Status != payd.LinkActive || got.ArchivedAt != nil {
			t.Fatalf("after restore %+v", got)
		}
		_, err = st.DisableLink(ctx, l.ID, "", t1)
		must(t, err)
		l.Name = "stale write"
		wantCode(t, st.UpdateLink(ctx, l), payd.ErrLinkDisabled)
		missing := *l
		missing.ID = payd.NewID(payd.PrefixLink)
		wantCode(t, st.UpdateLink(ctx, &missing), payd.ErrNotFound)
	}
}

func testAddLinkStats(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		const n = 24
		_, errs := parallel(n, func(i int) (struct{}, error) {
			return struct{}{}, st.AddLinkStats(ctx, biz.ID, l.ID, payd.StatsDelta{Payments: 1, Succeeded: 1, VolumeUSD: 100, Crypto: 1})
		})
		noErrors(t, errs)
		must(t, st.AddLinkStats(ctx, biz.ID, l.ID, payd.StatsDelta{VolumeUSD: -50}))
		got, err := st.LinkByID(ctx, biz.ID, l.ID)
		must(t, err)
		if want := (payd.Stats{Payments: n, VolumeUSD: 100*n - 50}); !reflect.DeepEqual(got.Stats, want) {
			t.Fatalf("stats = %+v, want %+v", got.Stats, want)
		}
		wantCode(t, st.AddLinkStats(ctx, biz.ID, "lnk_missing", payd.StatsDelta{Payments: 1}), payd.ErrNotFound)
	}
}

func testDeleteLink(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		must(t, st.DeleteLink(ctx, biz.ID, l.ID))
		_, err := st.LinkByID(ctx, biz.ID, l.ID)
		wantCode(t, err, payd.ErrNotFound)
		wantCode(t, st.DeleteLink(ctx, biz.ID, l.ID), payd.ErrNotFound)

		paid := mustLink(t, ctx, st, biz.ID, "B", money.USD, t0, nil)
		must(t, st.AddLinkStats(ctx, biz.ID, paid.ID, payd.StatsDelta{Payments: 1}))
		wantCode(t, st.DeleteLink(ctx, biz.ID, paid.ID), payd.ErrLinkHasPayments)

		off := mustLink(t, ctx, st, biz.ID, "C", money.USD, t0, nil)
		_, err = st.DisableLink(ctx, off.ID, "abuse", t0)
		must(t, err)
		wantCode(t, st.DeleteLink(ctx, biz.ID, off.ID), payd.ErrLinkDisabled)
		for _, id := range []string{paid.ID, off.ID} {
			_, err := st.LinkByID(ctx, biz.ID, id)
			must(t, err)
		}
	}
}

func testDisableLink(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		l := mustLink(t, ctx, st, biz.ID, "A", money.USD, t0, nil)
		t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
		got, err := st.DisableLink(ctx, l.ID, "phishing", t1)
		must(t, err)
		if got.Status != payd.LinkDisabled || !got.DisabledAt.Equal(t1) || got.DisabledReason != "phishing" || !got.UpdatedAt.Equal(t1) {
			t.Fatalf("after disable %+v", got)
		}
		got, err = st.DisableLink(ctx, l.ID, "still phishing", t2)
		must(t, err)
		if !got.DisabledAt.Equal(t1) || got.DisabledReason != "still phishing" {
			t.Fatalf("disabling twice: %+v, want the first time kept", got)
		}
		_, err = st.DisableLink(ctx, "lnk_missing", "", t1)
		wantCode(t, err, payd.ErrNotFound)
	}
}

func testListLinks(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		var all []*payd.Link // newest first once sorted
		specs := []struct {
			name string
			cur  money.Currency
		}{{"Ebook", money.USD}, {"Course", money.EUR}, {"Sticker 50%", money.USD}, {"Mug", money.GBP}, {"Poster", money.EUR}}
		for i, s := range specs {
			at := t0.Add(time.Duration(i/2) * time.Minute)
			all = append(all, mustLink(t, ctx, st, biz.ID, s.name, s.cur, at, func(l *payd.Link) {
				l.Description = "item " + strings.Repeat("x", i)
			}))
		}
		slices.SortFunc(all, func(x, y *payd.Link) int {
			if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(y.ID, x.ID)
		})
		named := func(names ...string) []string {
			var ids []string
			for _, l := range all {
				if slices.Contains(names, l.Name) {
					ids = append(ids, l.ID)
				}
			}
			return ids
		}
		mug := all[slices.IndexFunc(all, func(l *payd.Link) bool { return l.Name == "Mug" })]
		must(t, mug.Archive(t0))
		must(t, st.UpdateLink(ctx, mug))
		list := func(f payd.LinkFilter) []string {
			t.Helper()
			if f.Limit == 0 {
				f.Limit = 100
			}
			got, err := st.ListLinks(ctx, biz.ID, f)
			must(t, err)
			return linkIDs(got)
		}
		wantIDs(t, "all", list(payd.LinkFilter{}), linkIDs(all))
		wantIDs(t, "status", list(payd.LinkFilter{Status: payd.LinkArchived}), named("Mug"))
		wantIDs(t, "currency", list(payd.LinkFilter{Currency: money.EUR}), named("Course", "Poster"))
		wantIDs(t, "name", list(payd.LinkFilter{Query: "STICK"}), named("Sticker 50%"))
		wantIDs(t, "description", list(payd.LinkFilter{Query: "xxxx"}), named("Poster"))
		wantIDs(t, "percent is literal", list(payd.LinkFilter{Query: "50%"}), named("Sticker 50%"))
		wantIDs(t, "code", list(payd.LinkFilter{Query: strings.ToLower(mug.Code)}), named("Mug"))
		after, before := t0.Add(time.Minute), t0.Add(2*time.Minute)
		wantIDs(t, "created range", list(payd.LinkFilter{CreatedAfter: &after, CreatedBefore: &before}), named("Sticker 50%", "Mug"))
		var pages []string
		f := payd.LinkFilter{Limit: 2}
		for {
			got, err := st.ListLinks(ctx, biz.ID, f)
			must(t, err)
			pages = append(pages, linkIDs(got)...)
			if len(got) < 2 {
				break
			}
			f.AfterCreated, f.AfterID = got[1].CreatedAt, got[1].ID
		}
		wantIDs(t, "paged", pages, linkIDs(all))
	}
}

// mustLink stores a new active link of 10.00 in cur created at at, after
// edit (if any) changes it.
func mustLink(t *testing.T, ctx context.Context, st payd.Store, bizID, name string, cur money.Currency, at time.Time, edit func(*payd.Link)) *payd.Link {
	t.Helper()
	l := &payd.Link{ID: payd.NewID(payd.PrefixLink), BusinessID: bizID, Code: payd.RandomString(payd.LinkCodeLength),
		Name: name, Amount: 1000, Currency: cur, Status: payd.LinkActive, CreatedAt: at, UpdatedAt: at}
	if edit != nil {
		edit(l)
	}
	must(t, st.CreateLink(ctx, l))
	return l
}

func linkIDs(ls []*payd.Link) []string {
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.ID)
	}
	return ids
}
