package api

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestParsePage checks limits and cursors, and every refusal with its field.
func TestParsePage(t *testing.T) {
	c := testCodec()
	pos := []string{"1700000000000000", "pmt_abc"}
	cur := c.encode("", "payments", "status=pending", pos)
	tests := []struct {
		name  string
		query string
		limit int
		after []string
		field string // the refused field; "" when the query is fine
	}{
		{"defaults", "", 25, nil, ""},
		{"filters only", "status=pending", 25, nil, ""},
		{"smallest", "limit=1", 1, nil, ""},
		{"largest", "limit=100", 100, nil, ""},
		{"leading zero", "limit=007", 7, nil, ""},
		{"cursor", "status=pending&cursor=" + cur, 25, pos, ""},
		{"cursor with a new limit", "limit=50&status=pending&cursor=" + cur, 50, pos, ""},
		{"cursor with reordered query", "cursor=" + cur + "&status=pending", 25, pos, ""},
		{"zero", "limit=0", 0, nil, "limit"},
		{"too many", "limit=101", 0, nil, "limit"},
		{"huge", "limit=99999999999999999999", 0, nil, "limit"},
		{"negative", "limit=-1", 0, nil, "limit"},
		{"plus", "limit=%2B5", 0, nil, "limit"},
		{"space", "limit=%205", 0, nil, "limit"},
		{"fraction", "limit=1.5", 0, nil, "limit"},
		{"exponent", "limit=1e2", 0, nil, "limit"},
		{"word", "limit=ten", 0, nil, "limit"},
		{"empty limit", "limit=", 0, nil, "limit"},
		{"repeated limit", "limit=5&limit=5", 0, nil, "limit"},
		{"repeated cursor", "status=pending&cursor=" + cur + "&cursor=" + cur, 0, nil, "cursor"},
		{"empty cursor", "cursor=", 0, nil, "cursor"},
		{"garbage cursor", "cursor=abc", 0, nil, "cursor"},
		{"cursor without its filters", "cursor=" + cur, 0, nil, "cursor"},
		{"cursor with other filters", "status=failed&cursor=" + cur, 0, nil, "cursor"},
		{"cursor with an extra filter", "status=pending&rail=card&cursor=" + cur, 0, nil, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			p, err := parsePage(context.Background(), q, c, "payments")
			if tt.field != "" {
				var pe *payd.Error
				if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field != tt.field {
					t.Fatalf("parsePage(%q) = %+v, %v; want invalid_request on %s", tt.query, p, err, tt.field)
				}
				return
			}
			if err != nil || p.Limit != tt.limit || !slices.Equal(p.After, tt.after) {
				t.Errorf("parsePage(%q) = limit %d after %q, %v; want %d, %q", tt.query, p.Limit, p.After, err, tt.limit, tt.after)
			}
		})
	}
}

// TestParsePageOtherList checks that a cursor of one list is refused by
// another even with the same filters.
func TestParsePageOtherList(t *testing.T) {
	c := testCodec()
	q := url.Values{"q": {"ann"}}
	p, err := parsePage(context.Background(), q, c, "customers")
	if err != nil {
		t.Fatal(err)
	}
	q.Set("cursor", p.nextCursor([]string{"1", "cst_x"}))
	if _, err := parsePage(context.Background(), q, c, "links"); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("parsePage of another list's cursor = %v, want invalid_request", err)
	}
}

// TestNextCursor checks that a page's next cursor brings back the position
// when the client repeats the request with it, at any limit.
func TestNextCursor(t *testing.T) {
	c := testCodec()
	q := url.Values{"status": {"pending"}, "metadata[order]": {"7"}, "limit": {"2"}}
	first, err := parsePage(context.Background(), q, c, "payments")
	if err != nil {
		t.Fatal(err)
	}
	last := []string{"1700000000000000", "pmt_abc"}
	q.Set("cursor", first.nextCursor(last))
	q.Set("limit", "3")
	second, err := parsePage(context.Background(), q, c, "payments")
	if err != nil || second.Limit != 3 || !slices.Equal(second.After, last) {
		t.Fatalf("second page = limit %d after %q, %v", second.Limit, second.After, err)
	}
	// The second page binds its own cursor to the same filters.
	q.Set("cursor", second.nextCursor([]string{"1600000000000000", "pmt_def"}))
	if third, err := parsePage(context.Background(), q, c, "payments"); err != nil || third.After[1] != "pmt_def" {
		t.Fatalf("third page = %+v, %v", third, err)
	}
}

// TestForeignCursor covers spec 4.1 across businesses: a cursor that
// business A's list returned is refused with 400 invalid_request on cursor
// when business B sends it, on the same list with the same filters, while
// A can still use it.
func TestForeignCursor(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		a, other := b.newBusiness(false), b.newBusiness(false)
		for _, tb := range []*testBusiness{a, other} {
			for range 2 {
				c.data(request{method: "POST", path: "/customers", key: tb.live, body: `{"name":"Ann"}`}, 201)
			}
		}
		first := c.call(request{method: "GET", path: "/customers?limit=1", key: a.live}, 200)
		next := "/customers?limit=1&cursor=" + url.QueryEscape(first["next_cursor"].(string))
		c.call(request{method: "GET", path: next, key: other.live}, 400, "invalid_request", "cursor")
		c.call(request{method: "GET", path: next, key: a.test}, 200) // the business's other key
	})
}
