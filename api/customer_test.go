package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// clTest drives the customer and link routes of one server in one test.
type clTest struct {
	t *testing.T
	b *bundle
}

// call sends req and checks the status, and the error code and field when
// the status is an error; it returns the decoded body.
func (c clTest) call(req request, status int, codeField ...string) map[string]any {
	c.t.Helper()
	r := c.b.do(req)
	if r.status != status {
		c.t.Fatalf("%s %s %s: got %d %s, want %d", req.method, req.path, req.body, r.status, r.body, status)
	}
	if len(codeField) > 0 {
		code, field := r.errorCode(c.t)
		if code != codeField[0] || (len(codeField) > 1 && field != codeField[1]) {
			c.t.Fatalf("%s %s %s: got %s (field %q), want %v: %s", req.method, req.path, req.body, code, field, codeField, r.body)
		}
	}
	return r.json(c.t)
}

// data returns the data object of a single-object response.
func (c clTest) data(req request, status int) map[string]any {
	c.t.Helper()
	d, ok := c.call(req, status)["data"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %s: no data object", req.method, req.path)
	}
	return d
}

// list pages through a list with limit and returns every id in order,
// checking has_more and next_cursor on the way.
func (c clTest) list(key, path string, limit int) []string {
	c.t.Helper()
	var ids []string
	cursor := ""
	for {
		p := path + sep(path) + "limit=" + fmt.Sprint(limit)
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		body := c.call(request{method: "GET", path: p, key: key}, 200)
		items := body["data"].([]any)
		for _, it := range items {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if body["has_more"] != true {
			if body["next_cursor"] != nil || len(items) > limit {
				c.t.Fatalf("last page: %v", body)
			}
			return ids
		}
		if len(items) != limit {
			c.t.Fatalf("a page with has_more holds %d items, want %d", len(items), limit)
		}
		cursor = body["next_cursor"].(string)
	}
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// wantFields compares the listed members of got with want.
func wantFields(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		g, _ := json.Marshal(got[k])
		w, _ := json.Marshal(v)
		if string(g) != string(w) {
			t.Errorf("%s = %s, want %s", k, g, w)
		}
	}
}

func jsonBody(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestCustomers covers spec 2.3 and the customer routes on both databases.
func TestCustomers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		biz, other := b.newBusiness(true), b.newBusiness(false)
		post := func(key string, body map[string]any) request {
			return request{method: "POST", path: "/customers", key: key, body: jsonBody(body)}
		}
		t.Run("create returns every field", func(t *testing.T) {
			c := clTest{t, b}
			d := c.data(post(biz.live, map[string]any{"name": "  Grace Hopper ", "email": "Grace@Example.com", "note": "line 1\nline 2"}), 201)
			wantFields(t, d, map[string]any{"kind": "customer", "name": "Grace Hopper", "email": "Grace@Example.com",
				"note": "line 1\nline 2", "blocked": false, "stats": map[string]any{"payments_count": 0, "incomplete_count": 0,
					"volume": map[string]any{"amount": 0, "currency": "USD"}, "average": map[string]any{"amount": 0, "currency": "USD"},
					"last_payment_at": nil, "preferred_rail": nil}})
			if !payd.HasPrefix(d["id"].(string), payd.PrefixCustomer) || d["created_at"] != d["updated_at"] {
				t.Fatalf("id or times: %v", d)
			}
			got := c.data(request{method: "GET", path: "/customers/" + d["id"].(string), key: biz.live}, 200)
			wantFields(t, got, d)
		})
		t.Run("every field is optional", func(t *testing.T) {
			c := clTest{t, b}
			d := c.data(request{method: "POST", path: "/customers", key: biz.live}, 201)
			wantFields(t, d, map[string]any{"name": "", "email": "", "note": ""})
			c.data(post(biz.live, map[string]any{"name": "Also no email"}), 201)
		})
		t.Run("bad fields", func(t *testing.T) {
			c := clTest{t, b}
			cases := []struct {
				body  map[string]any
				field string
			}{
				{map[string]any{"email": "not-an-email"}, "email"},
				{map[string]any{"email": "Ada <ada@example.com>"}, "email"},
				{map[string]any{"email": "ada@localhost"}, "email"},
				{map[string]any{"name": strings.Repeat("é", payd.MaxCustomerName+1)}, "name"},
				{map[string]any{"name": "tab\there"}, "name"},
				{map[string]any{"note": strings.Repeat("n", payd.MaxCustomerNote+1)}, "note"},
				{map[string]any{"note": "bell\a"}, "note"},
				{map[string]any{"blocked": true}, "blocked"},
				{map[string]any{"email": 1}, "email"},
			}
			for _, tc := range cases {
				c.call(post(biz.live, tc.body), 400, "invalid_request", tc.field)
			}
			c.data(post(biz.live, map[string]any{"name": strings.Repeat("é", payd.MaxCustomerName)}), 201)
		})
		t.Run("email is unique per business ignoring case", func(t *testing.T) {
			c := clTest{t, b}
			c.data(post(biz.live, map[string]any{"email": "dup@example.com"}), 201)
			c.call(post(biz.live, map[string]any{"email": "DUP@example.COM"}), 409, "customer_exists", "email")
			c.data(post(other.live, map[string]any{"email": "dup@example.com"}), 201)
		})
		t.Run("get is scoped to the business", func(t *testing.T) {
			c := clTest{t, b}
			d := c.data(post(biz.live, map[string]any{"name": "Mine"}), 201)
			c.call(request{method: "GET", path: "/customers/" + d["id"].(string), key: other.live}, 404, "not_found")
			c.call(request{method: "GET", path: "/customers/cst_nothing", key: biz.live}, 404, "not_found")
			c.call(request{method: "PATCH", path: "/customers/" + d["id"].(string), key: other.live, body: `{"name":"x"}`}, 404, "not_found")
		})
		t.Run("update", func(t *testing.T) { testUpdateCustomer(t, b, biz) })
		t.Run("stats", func(t *testing.T) { testCustomerStats(t, b, db, biz) })
		t.Run("restricted keys", func(t *testing.T) {
			c := clTest{t, b}
			read, write, links := b.restricted(biz, "customers:read"), b.restricted(biz, "customers:write"), b.restricted(biz, "links:write")
			d := c.data(post(write, map[string]any{"name": "By a restricted key"}), 201)
			path := "/customers/" + d["id"].(string)
			c.data(request{method: "GET", path: path, key: read}, 200)
			c.call(request{method: "GET", path: "/customers", key: read}, 200)
			c.call(post(read, map[string]any{}), 403, "permission_denied")
			c.call(request{method: "PATCH", path: path, key: read, body: `{"name":"x"}`}, 403, "permission_denied")
			c.call(request{method: "GET", path: path, key: links}, 403, "permission_denied")
			c.call(request{method: "GET", path: "/customers", key: links}, 403, "permission_denied")
			c.call(request{method: "GET", path: "/customers"}, 401, "unauthenticated")
		})
		t.Run("create is idempotent", func(t *testing.T) {
			req := post(biz.live, map[string]any{"email": "once@example.com"})
			req.header = map[string]string{"Idempotency-Key": "create-once"}
			first, again := b.do(req), b.do(req)
			if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("got %d %s then %d %s", first.status, first.body, again.status, again.body)
			}
		})
		t.Run("list", func(t *testing.T) { testListCustomersAPI(t, b) })
	})
}

func testUpdateCustomer(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(request{method: "POST", path: "/customers", key: biz.live, body: `{"name":"Ann","email":"ann@example.com","note":"n"}`}, 201)
	c.data(request{method: "POST", path: "/customers", key: biz.live, body: `{"email":"taken@example.com"}`}, 201)
	path := "/customers/" + d["id"].(string)
	patch := func(key, body string) request { return request{method: "PATCH", path: path, key: key, body: body} }
	b.clock.Advance(time.Second)
	got := c.data(patch(biz.live, `{"name":"Ann B","email":"ANN.B@example.com","note":"","blocked":true}`), 200)
	wantFields(t, got, map[string]any{"name": "Ann B", "email": "ANN.B@example.com", "note": "", "blocked": true, "created_at": d["created_at"]})
	if got["updated_at"] == d["updated_at"] {
		t.Fatalf("updated_at did not move: %v", got)
	}
	got = c.data(patch(biz.live, `{}`), 200)
	wantFields(t, got, map[string]any{"name": "Ann B", "email": "ANN.B@example.com", "blocked": true})
	c.call(patch(biz.live, `{"email":"Taken@Example.com"}`), 409, "customer_exists", "email")
	c.call(patch(biz.live, `{"email":"nope"}`), 400, "invalid_request", "email")
	c.call(patch(biz.live, `{"blocked":"yes"}`), 400, "invalid_request", "blocked")
	c.call(patch(biz.live, `{"status":"x"}`), 400, "invalid_request", "status")
	got = c.data(patch(biz.live, `{"email":""}`), 200)
	wantFields(t, got, map[string]any{"email": ""})
	c.call(request{method: "PATCH", path: "/customers/cst_missing", key: biz.live, body: `{}`}, 404, "not_found")

	// Blocking decides who can pay: a test key cannot change it on a live
	// business, but can edit the rest and send blocked unchanged.
	c.call(patch(biz.test, `{"blocked":false}`), 403, "test_mode_unavailable")
	c.data(patch(biz.test, `{"blocked":true,"note":"edited by a test key"}`), 200)
	testBiz := b.newBusiness(false)
	td := c.data(request{method: "POST", path: "/customers", key: testBiz.test, body: `{}`}, 201)
	c.data(request{method: "PATCH", path: "/customers/" + td["id"].(string), key: testBiz.test, body: `{"blocked":true}`}, 200)
}

func testCustomerStats(t *testing.T, b *bundle, db *store.DB, biz *testBusiness) {
	c := clTest{t, b}
	ctx := context.Background()
	stats := func(id string) map[string]any {
		return c.data(request{method: "GET", path: "/customers/" + id, key: biz.live}, 200)["stats"].(map[string]any)
	}
	id := c.data(request{method: "POST", path: "/customers", key: biz.live, body: `{}`}, 201)["id"].(string)
	at := time.Date(2030, 1, 2, 3, 4, 5, 678000000, time.UTC)
	add := func(d payd.StatsDelta) {
		t.Helper()
		if err := db.AddCustomerStats(ctx, biz.biz.ID, id, d); err != nil {
			t.Fatal(err)
		}
	}
	add(payd.StatsDelta{Payments: 3, LastPaymentAt: &at})
	wantFields(t, stats(id), map[string]any{"payments_count": 3, "incomplete_count": 3, "last_payment_at": "2030-01-02T03:04:05.678Z",
		"average": map[string]any{"amount": 0, "currency": "USD"}, "preferred_rail": nil})
	add(payd.StatsDelta{Succeeded: 1, VolumeUSD: 1000, Card: 1})
	add(payd.StatsDelta{Succeeded: 1, VolumeUSD: 1001, Crypto: 1})
	// 2001 / 2 = 1000.5 rounds half away from zero; a tie prefers crypto.
	wantFields(t, stats(id), map[string]any{"payments_count": 3, "incomplete_count": 1,
		"volume": map[string]any{"amount": 2001, "currency": "USD"}, "average": map[string]any{"amount": 1001, "currency": "USD"},
		"preferred_rail": "crypto"})
	add(payd.StatsDelta{Payments: 1, Succeeded: 1, VolumeUSD: 2, Card: 1})
	// 2003 / 3 = 667.67 → 668; two card payments against one crypto.
	wantFields(t, stats(id), map[string]any{"payments_count": 4, "incomplete_count": 1,
		"average": map[string]any{"amount": 668, "currency": "USD"}, "preferred_rail": "card"})
}

func testListCustomersAPI(t *testing.T, b *bundle) {
	c := clTest{t, b}
	biz, other := b.newBusiness(false), b.newBusiness(false)
	var ids []string // newest first
	names := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov", "Edsger Dijkstra"}
	start := b.clock.Now()
	for i, name := range names {
		body := jsonBody(map[string]any{"name": name, "email": fmt.Sprintf("u%d@example.com", i)})
		ids = append([]string{c.data(request{method: "POST", path: "/customers", key: biz.live, body: body}, 201)["id"].(string)}, ids...)
		b.clock.Advance(time.Second)
	}
	c.data(request{method: "POST", path: "/customers", key: other.live, body: `{"name":"Ada Lovelace"}`}, 201)
	c.data(request{method: "PATCH", path: "/customers/" + ids[1], key: biz.live, body: `{"blocked":true}`}, 200)
	for _, limit := range []int{1, 2, 5, 100} {
		wantIDList(t, fmt.Sprint("limit ", limit), c.list(biz.live, "/customers", limit), ids)
	}
	ts := func(d time.Duration) string { return url.QueryEscape(start.Add(d).Format(time.RFC3339Nano)) }
	filters := map[string][]string{
		"q=ADA":                  {ids[4]},
		"q=u3%40":                {ids[1]},
		"q=ing":                  {ids[2]},
		"email=U2%40EXAMPLE.com": {ids[2]},
		"blocked=true":           {ids[1]},
		"blocked=false":          {ids[0], ids[2], ids[3], ids[4]},
		"created_after=" + ts(time.Second) + "&created_before=" + ts(3*time.Second): {ids[2], ids[3]},
		"created_after=" + ts(4*time.Second):                                        {ids[0]},
		"q=nobody":                                                                  nil,
	}
	for f, want := range filters {
		wantIDList(t, f, c.list(biz.live, "/customers?"+f, 1), want)
	}
	bad := map[string]string{
		"blocked=maybe": "blocked", "blocked=": "blocked", "created_after=yesterday": "created_after",
		"created_before=2026-13-01": "created_before", "nope=1": "nope", "q=" + strings.Repeat("a", 101): "q",
		"limit=0": "limit", "limit=101": "limit", "q=a&q=b": "q", "status=active": "status",
	}
	for q, field := range bad {
		c.call(request{method: "GET", path: "/customers?" + q, key: biz.live}, 400, "invalid_request", field)
	}
	first := c.call(request{method: "GET", path: "/customers?limit=1&q=a", key: biz.live}, 200)
	cur := url.QueryEscape(first["next_cursor"].(string))
	c.call(request{method: "GET", path: "/customers?limit=1&q=b&cursor=" + cur, key: biz.live}, 400, "invalid_request", "cursor")
	c.call(request{method: "GET", path: "/links?limit=1&q=a&cursor=" + cur, key: biz.live}, 400, "invalid_request", "cursor")
}

// wantIDList compares two id lists in order.
func wantIDList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// FuzzCustomerFilter checks that any query either parses or fails with an
// invalid_request naming a parameter, and never panics.
func FuzzCustomerFilter(f *testing.F) {
	for _, s := range []string{"", "q=ada", "blocked=true", "blocked=maybe", "email=a%40b.c", "created_after=2026-01-02",
		"created_before=2026-01-02T03:04:05.123%2B02:00", "q=%00", "q=%ff", "x=1", "limit=5&cursor=abc", "q=a&q=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		_, err = parseCustomerFilter(v)
		checkFilterError(t, err)
	})
}

// checkFilterError fails unless err is nil or an invalid_request with a field.
func checkFilterError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field == "" {
		t.Fatalf("error %v is not invalid_request with a field", err)
	}
}
