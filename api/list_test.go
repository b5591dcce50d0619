package api

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// listFixture is a business with eight payments an hour apart (p[0]
// oldest), in several states, and another business with one payment.
type listFixture struct {
	biz, other *testBusiness
	cst        string
	p          []string // oldest first
	otherP     string
}

func newListFixture(t *testing.T, b *bundle) *listFixture {
	c := clTest{t, b}
	fx := &listFixture{biz: b.newBusiness(false), other: b.newBusiness(false)}
	fx.cst = c.data(request{method: "POST", path: "/customers", key: fx.biz.live,
		body: `{"name":"Ada Lovelace","email":"ada@example.org"}`}, 201)["id"].(string)
	amounts := []int{500, 1500, 250, 1500, 9900, 700, 1200, 300}
	for i, amount := range amounts {
		body := map[string]any{"amount": amount, "currency": "USD", "description": fmt.Sprintf("Item %d", i),
			"metadata": map[string]string{"batch": fmt.Sprint(i % 2)}}
		if i%3 == 0 {
			body["customer_id"] = fx.cst
		}
		if i == 5 {
			body["reference"] = "inv-5"
		}
		fx.p = append(fx.p, c.data(payPost(fx.biz.live, body), 201)["id"].(string))
		b.clock.Advance(time.Hour)
	}
	fx.otherP = c.data(payPost(fx.other.live, map[string]any{"amount": 500, "currency": "USD"}), 201)["id"].(string)
	for _, i := range []int{1, 4, 6} {
		setPayment(t, b, fx.biz, fx.p[i], func(p *payd.Payment) {
			p.Status = payd.PaymentSucceeded
			p.Method = &payd.Method{Rail: payd.RailCard, Asset: "USDC", Network: "polygon", Amount: "1.00",
				ExpectedAmount: "1.00", TxHash: fmt.Sprintf("0xfeed%d", i), FromAddress: "0xsender"}
		})
	}
	setPayment(t, b, fx.biz, fx.p[2], func(p *payd.Payment) { p.Status = payd.PaymentExpired })
	return fx
}

// pick returns the fixture's ids at the indexes, in that order.
func (fx *listFixture) pick(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, fx.p[i])
	}
	return out
}

// TestListPayments covers spec 4.3 on both databases.
func TestListPayments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		fx := newListFixture(t, b)
		c := clTest{t, b}
		t.Run("filters and sorts", func(t *testing.T) {
			mid := url.QueryEscape(b.clock.Now().Add(-4*time.Hour - 30*time.Minute).Format(time.RFC3339Nano))
			cases := map[string][]string{
				"":                                fx.pick(7, 6, 5, 4, 3, 2, 1, 0),
				"sort=created_at":                 fx.pick(0, 1, 2, 3, 4, 5, 6, 7),
				"sort=-amount":                    slices.Concat(fx.pick(4), tieOrder(fx.p[1], fx.p[3], true), fx.pick(6, 5, 0, 7, 2)),
				"sort=amount":                     slices.Concat(fx.pick(2, 7, 0, 5, 6), tieOrder(fx.p[1], fx.p[3], false), fx.pick(4)),
				"status=succeeded":                fx.pick(6, 4, 1),
				"status=pending&sort=amount":      fx.pick(7, 0, 5, 3),
				"rail=card":                       fx.pick(6, 4, 1),
				"rail=crypto":                     {},
				"reference=inv-5":                 fx.pick(5),
				"customer_id=" + fx.cst:           fx.pick(6, 3, 0),
				"link_id=lnk_nope":                {},
				"metadata%5Bbatch%5D=1":           fx.pick(7, 5, 3, 1),
				"metadata[batch]=0&metadata[x]=1": {},
				"created_after=" + mid:            fx.pick(7, 6, 5, 4),
				"created_before=" + mid:           fx.pick(3, 2, 1, 0),
				"q=item+6":                        fx.pick(6),
				"q=ada%40example":                 fx.pick(6, 3, 0),
				"q=0xfeed4":                       fx.pick(4),
				"q=" + fx.p[2]:                    fx.pick(2),
				"q=15.00":                         fx.pick(3, 1),
			}
			for query, want := range cases {
				got := c.list(fx.biz.live, "/payments?"+query, 3)
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("GET /payments?%s: got %v, want %v", query, got, want)
				}
			}
		})
		t.Run("tenants", func(t *testing.T) {
			if got := c.list(fx.other.live, "/payments", 10); !slices.Equal(got, []string{fx.otherP}) {
				t.Fatalf("other business lists %v", got)
			}
			if got := c.list(fx.other.live, "/payments?customer_id="+fx.cst, 10); len(got) != 0 {
				t.Fatalf("another business's customer lists %v", got)
			}
		})
		t.Run("include", func(t *testing.T) { testListInclude(t, b, fx) })
		t.Run("errors", func(t *testing.T) { testListErrors(t, b, fx) })
	})
}

// tieOrder orders two ids as the list breaks a tie (p[1] and p[3] share
// an amount).
func tieOrder(a, b string, desc bool) []string {
	if (a < b) == desc {
		return []string{b, a}
	}
	return []string{a, b}
}

func testListInclude(t *testing.T, b *bundle, fx *listFixture) {
	c := clTest{t, b}
	body := c.call(request{method: "GET", path: "/payments?status=succeeded&include=status_counts", key: fx.biz.live}, 200)
	want := map[string]any{"pending": 4.0, "succeeded": 3.0, "underpaid": 0.0, "needs_review": 0.0, "failed": 0.0, "expired": 1.0}
	if got := body["status_counts"].(map[string]any); fmt.Sprint(got) != fmt.Sprint(want) || len(body["data"].([]any)) != 3 {
		t.Fatalf("status_counts = %v, want %v", got, want)
	}
	body = c.call(request{method: "GET", path: "/payments?customer_id=" + fx.cst + "&include=status_counts&limit=1", key: fx.biz.live}, 200)
	if got := body["status_counts"].(map[string]any); got["pending"] != 2.0 || got["succeeded"] != 1.0 {
		t.Fatalf("status_counts for a customer = %v", got)
	}
	if _, ok := c.call(request{method: "GET", path: "/payments", key: fx.biz.live}, 200)["status_counts"]; ok {
		t.Fatal("status_counts without include")
	}
	body = c.call(request{method: "GET", path: "/payments?include=customer,status_counts&sort=created_at", key: fx.biz.live}, 200)
	for i, it := range body["data"].([]any) {
		p := it.(map[string]any)
		cst, ok := p["customer"]
		if !ok || (i%3 == 0) != (cst != nil) || (cst != nil && cst.(map[string]any)["id"] != fx.cst) {
			t.Fatalf("payment %d: customer %v", i, cst)
		}
	}
	both := b.restricted(fx.biz, "payments:read,customers:read")
	c.call(request{method: "GET", path: "/payments?include=customer", key: both}, 200)
	payments := b.restricted(fx.biz, "payments:read")
	c.call(request{method: "GET", path: "/payments?include=status_counts", key: payments}, 200)
	c.call(request{method: "GET", path: "/payments?include=customer", key: payments}, 403, "permission_denied")
	c.call(request{method: "GET", path: "/payments", key: b.restricted(fx.biz, "customers:read")}, 403, "permission_denied")
}

func testListErrors(t *testing.T, b *bundle, fx *listFixture) {
	c := clTest{t, b}
	bad := map[string]string{
		"status=paid":                             "status",
		"status=":                                 "status",
		"status=pending&status=failed":            "status",
		"rail=cash":                               "rail",
		"sort=-id":                                "sort",
		"include=events":                          "include",
		"include=customer,":                       "include",
		"created_after=yesterday":                 "created_after",
		"created_before=2026-13-01":               "created_before",
		"colour=red":                              "colour",
		"metadata%5B%5D=x":                        "metadata[]",
		"metadata%5Ba%5D%5Bb%5D=x":                "metadata[a][b]",
		"q=" + strings.Repeat("x", 101):           "q",
		"customer_id=" + strings.Repeat("c", 256): "customer_id",
		"limit=0":                                 "limit",
		"cursor=abc":                              "cursor",
	}
	for query, field := range bad {
		c.call(request{method: "GET", path: "/payments?" + query, key: fx.biz.live}, 400, "invalid_request", field)
	}
	page := c.call(request{method: "GET", path: "/payments?status=pending&limit=1", key: fx.biz.live}, 200)
	cursor := url.QueryEscape(page["next_cursor"].(string))
	c.call(request{method: "GET", path: "/payments?status=pending&limit=2&cursor=" + cursor, key: fx.biz.live}, 200)
	for _, other := range []string{"status=failed", "", "status=pending&sort=amount", "status=pending&include=status_counts"} {
		c.call(request{method: "GET", path: "/payments?" + other + "&cursor=" + cursor, key: fx.biz.live}, 400, "invalid_request", "cursor")
	}
	c.call(request{method: "GET", path: "/customers?cursor=" + cursor, key: fx.biz.live}, 400, "invalid_request", "cursor")
}

// FuzzParsePaymentFilter checks that any query either parses or fails with
// invalid_request naming a field, and never panics.
func FuzzParsePaymentFilter(f *testing.F) {
	for _, s := range []string{"", "status=pending&sort=-amount", "metadata[a]=b&metadata[c]=d", "created_after=2026-01-02T03:04:05.123456789%2B02:00",
		"include=customer,status_counts", "q=%00", "metadata[=x", "created_before=2026-11-22", "rail=card&rail=card", "q=%ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		filter, _, err := parsePaymentFilter(v)
		if err != nil {
			var pe *payd.Error
			if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field == "" {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if filter.Sort == "" || len(filter.Metadata) > maxMetadataPairs {
			t.Fatalf("%q: %+v", raw, filter)
		}
	})
}
