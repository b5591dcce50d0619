package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
)

func testCustomer(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		want := mustCustomer(t, ctx, st, biz.ID, "Grace Hopper", "Grace@Example.com", t0)
		got, err := st.CustomerByID(ctx, biz.ID, want.ID)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("CustomerByID = %+v, want %+v", got, want)
		}
		for _, email := range []string{"grace@example.com", "GRACE@EXAMPLE.COM", "Grace@Example.com"} {
			got, err = st.CustomerByEmail(ctx, biz.ID, email)
			must(t, err)
			if got.ID != want.ID {
				t.Fatalf("CustomerByEmail(%s) = %s", email, got.ID)
			}
		}
		_, err = st.CustomerByEmail(ctx, biz.ID, "")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("StatsAreStored", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		c, err := payd.NewCustomer(biz.ID, "A", "", "", t0)
		must(t, err)
		last := t0.Add(time.Hour)
		c.Stats = payd.Stats{Payments: 3, Succeeded: 2, VolumeUSD: 1234, Crypto: 1, Card: 1, LastPaymentAt: &last}
		must(t, st.CreateCustomer(ctx, c))
		wantStats(t, st, biz.ID, c.ID, c.Stats)
	})
	t.Run("EmailIsUniqueIgnoringCase", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		mustCustomer(t, ctx, st, biz.ID, "A", "ada@example.com", t0)
		dup, err := payd.NewCustomer(biz.ID, "B", "ADA@example.com", "", t0)
		must(t, err)
		wantCode(t, st.CreateCustomer(ctx, dup), payd.ErrCustomerExists)
		mustCustomer(t, ctx, st, other.ID, "A", "ada@example.com", t0)
		mustCustomer(t, ctx, st, biz.ID, "No email", "", t0)
		mustCustomer(t, ctx, st, biz.ID, "No email either", "", t0)
	})
	t.Run("ConflictKeepsTheTransactionUsable", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		first := mustCustomer(t, ctx, st, biz.ID, "A", "ada@example.com", t0)
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			dup, _ := payd.NewCustomer(biz.ID, "B", "Ada@example.com", "", t0)
			wantCode(t, q.CreateCustomer(ctx, dup), payd.ErrCustomerExists)
			got, err := q.CustomerByEmail(ctx, biz.ID, dup.Email)
			if err == nil && got.ID != first.ID {
				err = fmt.Errorf("found %s, want %s", got.ID, first.ID)
			}
			return err
		})
		must(t, err)
	})
	t.Run("ScopedToTheBusiness", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		c := mustCustomer(t, ctx, st, biz.ID, "A", "ada@example.com", t0)
		_, err := st.CustomerByID(ctx, other.ID, c.ID)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.CustomerByEmail(ctx, other.ID, c.Email)
		wantCode(t, err, payd.ErrNotFound)
		moved := *c
		moved.BusinessID, moved.Name = other.ID, "stolen"
		wantCode(t, st.UpdateCustomer(ctx, &moved), payd.ErrNotFound)
		wantCode(t, st.AddCustomerStats(ctx, other.ID, c.ID, payd.StatsDelta{Payments: 1}), payd.ErrNotFound)
		got, err := st.CustomersByID(ctx, other.ID, []string{c.ID})
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("CustomersByID of another business = %v", got)
		}
	})
	t.Run("CustomersByID", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		a := mustCustomer(t, ctx, st, biz.ID, "A", "a@example.com", t0)
		c := mustCustomer(t, ctx, st, biz.ID, "C", "c@example.com", t0)
		mustCustomer(t, ctx, st, biz.ID, "B", "b@example.com", t0)
		got, err := st.CustomersByID(ctx, biz.ID, []string{a.ID, c.ID, "cst_missing", a.ID})
		must(t, err)
		if len(got) != 2 || got[a.ID].Name != "A" || got[c.ID].Name != "C" {
			t.Fatalf("CustomersByID = %v", got)
		}
		got, err = st.CustomersByID(ctx, biz.ID, nil)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("CustomersByID(nil) = %v", got)
		}
	})
	t.Run("Update", testUpdateCustomer(b))
	t.Run("AddStats", testAddCustomerStats(b))
	t.Run("List", testListCustomers(b))
}

func testUpdateCustomer(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		c := mustCustomer(t, ctx, st, biz.ID, "A", "a@example.com", t0)
		taken := mustCustomer(t, ctx, st, biz.ID, "B", "b@example.com", t0)
		must(t, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Payments: 2}))
		name, email, note, blocked := "Ann", "ANN@example.com", "VIP\nline two", true
		must(t, c.Apply(payd.CustomerUpdate{Name: &name, Email: &email, Note: &note, Blocked: &blocked}, t0.Add(time.Minute)))
		must(t, st.UpdateCustomer(ctx, c))
		got, err := st.CustomerByID(ctx, biz.ID, c.ID)
		must(t, err)
		c.Stats.Payments = 2 // UpdateCustomer never writes the stats
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("after update %+v, want %+v", got, c)
		}
		c.Email = "B@EXAMPLE.com"
		wantCode(t, st.UpdateCustomer(ctx, c), payd.ErrCustomerExists)
		c.Email = "ann@example.com" // its own email in another case is fine
		must(t, st.UpdateCustomer(ctx, c))
		taken.Email = ""
		must(t, st.UpdateCustomer(ctx, taken))
		c.Email = "b@example.com" // freed by taken
		must(t, st.UpdateCustomer(ctx, c))
		missing := *c
		missing.ID = payd.NewID(payd.PrefixCustomer)
		wantCode(t, st.UpdateCustomer(ctx, &missing), payd.ErrNotFound)
	}
}

func testAddCustomerStats(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		c := mustCustomer(t, ctx, st, biz.ID, "A", "", t0)
		t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
		must(t, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Payments: 1, LastPaymentAt: &t2}))
		must(t, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Succeeded: 1, VolumeUSD: 500, Card: 1, LastPaymentAt: &t1}))
		must(t, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Payments: 1, Succeeded: 1, VolumeUSD: 250, Crypto: 1}))
		wantStats(t, st, biz.ID, c.ID, payd.Stats{Payments: 2, Succeeded: 2, VolumeUSD: 750, Crypto: 1, Card: 1, LastPaymentAt: &t2})
		must(t, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Succeeded: -1, VolumeUSD: -250, Crypto: -1}))
		wantStats(t, st, biz.ID, c.ID, payd.Stats{Payments: 2, Succeeded: 1, VolumeUSD: 500, Card: 1, LastPaymentAt: &t2})
		wantCode(t, st.AddCustomerStats(ctx, biz.ID, "cst_missing", payd.StatsDelta{Payments: 1}), payd.ErrNotFound)

		const n = 24
		_, errs := parallel(n, func(i int) (struct{}, error) {
			at := t0.Add(time.Duration(i) * 24 * time.Hour)
			return struct{}{}, st.AddCustomerStats(ctx, biz.ID, c.ID, payd.StatsDelta{Payments: 1, VolumeUSD: 10, LastPaymentAt: &at})
		})
		noErrors(t, errs)
		newest := t0.Add((n - 1) * 24 * time.Hour)
		wantStats(t, st, biz.ID, c.ID, payd.Stats{Payments: 2 + n, Succeeded: 1, VolumeUSD: 500 + 10*n, Card: 1, LastPaymentAt: &newest})
	}
}

func testListCustomers(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		var all []*payd.Customer // newest first
		names := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "100% Real", "Edsger_Dijkstra"}
		for i, name := range names {
			at := t0.Add(time.Duration(i/2) * time.Minute) // pairs share a created_at
			email := fmt.Sprintf("user%d@Example.com", i)
			all = append([]*payd.Customer{mustCustomer(t, ctx, st, biz.ID, name, email, at)}, all...)
		}
		mustCustomer(t, ctx, st, other.ID, "Ada Lovelace", "user0@example.com", t0)
		slices.SortStableFunc(all, func(x, y *payd.Customer) int {
			if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(y.ID, x.ID)
		})
		blocked := true
		all[1].Blocked = true
		must(t, st.UpdateCustomer(ctx, all[1]))
		list := func(f payd.CustomerFilter) []string {
			t.Helper()
			if f.Limit == 0 {
				f.Limit = 100
			}
			got, err := st.ListCustomers(ctx, biz.ID, f)
			must(t, err)
			return customerIDs(got)
		}
		wantIDs(t, "all", list(payd.CustomerFilter{}), customerIDs(all))
		wantIDs(t, "name substring", list(payd.CustomerFilter{Query: "HOPP"}), idsNamed(all, "Grace Hopper"))
		wantIDs(t, "email substring", list(payd.CustomerFilter{Query: "user3@"}), idsNamed(all, "100% Real"))
		wantIDs(t, "percent is literal", list(payd.CustomerFilter{Query: "0%"}), idsNamed(all, "100% Real"))
		wantIDs(t, "underscore is literal", list(payd.CustomerFilter{Query: "r_d"}), idsNamed(all, "Edsger_Dijkstra"))
		wantIDs(t, "email exact", list(payd.CustomerFilter{Email: "USER2@example.COM"}), idsNamed(all, "Alan Turing"))
		wantIDs(t, "email is not a substring", list(payd.CustomerFilter{Email: "user2"}), nil)
		wantIDs(t, "blocked", list(payd.CustomerFilter{Blocked: &blocked}), customerIDs(all[1:2]))
		notBlocked := false
		wantIDs(t, "not blocked", list(payd.CustomerFilter{Blocked: &notBlocked}), customerIDs(slices.Delete(slices.Clone(all), 1, 2)))
		after, before := t0.Add(time.Minute), t0.Add(2*time.Minute)
		wantIDs(t, "created range", list(payd.CustomerFilter{CreatedAfter: &after, CreatedBefore: &before}), idsNamed(all, "Alan Turing", "100% Real"))
		var pages []string
		f := payd.CustomerFilter{Limit: 2}
		for {
			got, err := st.ListCustomers(ctx, biz.ID, f)
			must(t, err)
			pages = append(pages, customerIDs(got)...)
			if len(got) < 2 {
				break
			}
			f.AfterCreated, f.AfterID = got[1].CreatedAt, got[1].ID
		}
		wantIDs(t, "paged", pages, customerIDs(all))
	}
}

// mustCustomer stores a new customer created at at.
func mustCustomer(t *testing.T, ctx context.Context, st payd.Store, bizID, name, email string, at time.Time) *payd.Customer {
	t.Helper()
	c, err := payd.NewCustomer(bizID, name, email, "a note", at)
	must(t, err)
	must(t, st.CreateCustomer(ctx, c))
	return c
}

// wantStats checks a customer's stored stats.
func wantStats(t *testing.T, st payd.Store, bizID, id string, want payd.Stats) {
	t.Helper()
	c, err := st.CustomerByID(t.Context(), bizID, id)
	must(t, err)
	if !reflect.DeepEqual(c.Stats, want) {
		t.Fatalf("stats = %+v, want %+v", c.Stats, want)
	}
}

func customerIDs(cs []*payd.Customer) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// idsNamed returns the ids of the customers with these names, in all's order.
func idsNamed(all []*payd.Customer, names ...string) []string {
	var ids []string
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// wantIDs compares two id lists in order.
func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
