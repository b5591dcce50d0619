package api

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// searchFixture makes a customer, a link and a payment that all match
// "lovelace", and returns their ids.
func searchFixture(t *testing.T, b *bundle, key string) (cst, lnk, pmt string) {
	t.Helper()
	post := func(path, body string) string {
		r := b.do(request{method: "POST", path: path, key: key, body: body})
		if r.status != 201 {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		return r.json(t)["data"].(map[string]any)["id"].(string)
	}
	cst = post("/customers", `{"name":"Ada Lovelace","email":"Ada@Example.org"}`)
	lnk = post("/links", `{"name":"Lovelace Notes","description":"Note G","amount":2500,"currency":"USD"}`)
	pmt = post("/payments", `{"amount":1250,"currency":"USD","description":"Notes by lovelace","customer_email":"ada@example.org","reference":"inv-9"}`)
	return cst, lnk, pmt
}

// searchIDs runs GET /search and returns the kind:id of each result.
func searchIDs(t *testing.T, b *bundle, key, query string) (ids []string, body map[string]any) {
	t.Helper()
	r := b.do(request{method: "GET", path: "/search?" + query, key: key})
	if r.status != 200 {
		t.Fatalf("GET /search?%s: %d %s", query, r.status, r.body)
	}
	body = r.json(t)
	for _, item := range body["data"].([]any) {
		o := item.(map[string]any)
		ids = append(ids, o["kind"].(string)+":"+o["id"].(string))
	}
	return ids, body
}

func TestSearch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		tb := b.newBusiness(false)
		cst, lnk, pmt := searchFixture(t, b, tb.live)
		all := []string{"link:" + lnk, "customer:" + cst, "payment:" + pmt}
		for _, indexed := range []bool{false, true} {
			if indexed {
				if _, err := db.IndexSearch(t.Context(), 1000); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := searchIDs(t, b, tb.live, "q=LOVELACE")
			wantList(t, "ranked by kind", got, all)
			got, _ = searchIDs(t, b, tb.live, "q="+url.QueryEscape("ada@example.ORG"))
			wantList(t, "exact email", got, []string{"customer:" + cst, "payment:" + pmt})
			got, _ = searchIDs(t, b, tb.live, "q=12.50&kind=payment,link")
			wantList(t, "price", got, []string{"payment:" + pmt})
		}
		other := b.newBusiness(false)
		if got, _ := searchIDs(t, b, other.live, "q=lovelace"); got != nil {
			t.Fatalf("another business sees %v", got)
		}
		testSearchPages(t, b, tb.live, all)
		testSearchErrors(t, b, tb)
		// Needs the Payment schema to allow include=customer's customer member.
		_, body := searchIDs(t, b, tb.live, "q=lovelace&kind=payment&include=customer")
		p := body["data"].([]any)[0].(map[string]any)
		if c, _ := p["customer"].(map[string]any); c == nil || c["id"] != cst {
			t.Fatalf("include=customer: %v", p["customer"])
		}
	})
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// testSearchPages walks the ranked result one item per page.
func testSearchPages(t *testing.T, b *bundle, key string, want []string) {
	var got []string
	query := "q=lovelace&limit=1"
	for {
		ids, body := searchIDs(t, b, key, query)
		got = append(got, ids...)
		if body["has_more"] != true {
			break
		}
		query = "q=lovelace&limit=1&cursor=" + body["next_cursor"].(string)
	}
	wantList(t, "pages", got, want)
	_, body := searchIDs(t, b, key, "q=lovelace&limit=1")
	r := b.do(request{method: "GET", path: "/search?q=notes&limit=1&cursor=" + body["next_cursor"].(string), key: key})
	if code, field := r.errorCode(t); r.status != 400 || field != "cursor" {
		t.Fatalf("cursor of another query: %d %s %s", r.status, code, field)
	}
}

func testSearchErrors(t *testing.T, b *bundle, tb *testBusiness) {
	payments := b.restricted(tb, "payments:read")
	webhooks := b.restricted(tb, "webhooks:read")
	cases := []struct {
		key, query  string
		status      int
		code, field string
	}{
		{tb.live, "", 400, payd.ErrInvalidRequest, "q"},
		{tb.live, "q=+", 400, payd.ErrInvalidRequest, "q"},
		{tb.live, "q=" + strings.Repeat("é", 101), 400, payd.ErrInvalidRequest, "q"},
		{tb.live, "q=a&q=b", 400, payd.ErrInvalidRequest, "q"},
		{tb.live, "q=a&kind=payments", 400, payd.ErrInvalidRequest, "kind"},
		{tb.live, "q=a&kind=link,link", 400, payd.ErrInvalidRequest, "kind"},
		{tb.live, "q=a&include=status_counts", 400, payd.ErrInvalidRequest, "include"},
		{tb.live, "q=a&limit=0", 400, payd.ErrInvalidRequest, "limit"},
		{payments, "q=a&kind=customer", 403, payd.ErrPermissionDenied, ""},
		{payments, "q=a&include=customer", 403, payd.ErrPermissionDenied, ""},
		{webhooks, "q=a", 403, payd.ErrPermissionDenied, ""},
	}
	for _, tc := range cases {
		r := b.do(request{method: "GET", path: "/search?" + tc.query, key: tc.key})
		code, field := r.errorCode(t)
		if r.status != tc.status || code != tc.code || field != tc.field {
			t.Errorf("GET /search?%s: %d %s %s, want %d %s %s", tc.query, r.status, code, field, tc.status, tc.code, tc.field)
		}
	}
	got, _ := searchIDs(t, b, payments, "q=lovelace")
	if len(got) != 1 || !strings.HasPrefix(got[0], "payment:") {
		t.Fatalf("payments:read key found %v", got)
	}
}

func FuzzParseSearch(f *testing.F) {
	f.Add("lovelace", "payment,link", "customer")
	f.Add("", "", "")
	f.Add(" ", "link,link", "x")
	f.Add(strings.Repeat("ß", 100), "customer", "")
	f.Add("\xff", "payment,", "customer,customer")
	f.Fuzz(func(t *testing.T, q, kind, include string) {
		v := url.Values{"q": {q}}
		if kind != "" {
			v.Set("kind", kind)
		}
		if include != "" {
			v.Set("include", include)
		}
		sp, err := parseSearch(v)
		if err != nil {
			if payd.ErrorCode(err) != payd.ErrInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		if sp.text != q || utf8.RuneCountInString(q) > maxSearchQuery || !utf8.ValidString(q) || strings.TrimSpace(q) == "" {
			t.Fatalf("accepted q %q", q)
		}
		for i, k := range sp.kinds {
			if !slices.Contains(payd.SearchKinds, k) || i > 0 && slices.Index(payd.SearchKinds, sp.kinds[i-1]) >= slices.Index(payd.SearchKinds, k) {
				t.Fatalf("kinds %v from %q", sp.kinds, kind)
			}
		}
		_ = payd.SearchWords(q)
	})
}
