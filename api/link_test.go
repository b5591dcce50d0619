package api

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestLinks covers spec 2.4, 3 (Link) and 7.5 on both databases.
func TestLinks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		biz, other := b.newBusiness(true), b.newBusiness(false)
		newLink := func(t *testing.T, key, body string) map[string]any {
			t.Helper()
			return clTest{t, b}.data(request{method: "POST", path: "/links", key: key, body: body}, 201)
		}
		t.Run("create returns every field", func(t *testing.T) {
			d := newLink(t, biz.live, `{"name":" Ebook ","description":"PDF","amount":1500,"currency":"EUR","success_url":"https://shop.example/thanks"}`)
			wantFields(t, d, map[string]any{"kind": "link", "name": "Ebook", "description": "PDF", "amount": 1500, "currency": "EUR",
				"success_url": "https://shop.example/thanks", "status": "active", "archived_at": nil, "disabled_at": nil,
				"payments_count": 0, "volume": map[string]any{"amount": 0, "currency": "USD"}})
			code := d["code"].(string)
			if !regexp.MustCompile(`^[0-9A-Za-z]{16}$`).MatchString(code) || d["url"] != "http://payd.test/l/"+code {
				t.Fatalf("code %q url %q", code, d["url"])
			}
			if !payd.HasPrefix(d["id"].(string), payd.PrefixLink) || d["created_at"] != d["updated_at"] {
				t.Fatalf("id or times: %v", d)
			}
			got := clTest{t, b}.data(request{method: "GET", path: "/links/" + d["id"].(string), key: biz.live}, 200)
			wantFields(t, got, d)
			min := newLink(t, biz.live, `{"name":"No redirect","amount":100,"currency":"USD"}`)
			wantFields(t, min, map[string]any{"success_url": nil, "description": ""})
			if min["code"] == code {
				t.Fatal("two links share a code")
			}
		})
		t.Run("bad fields", func(t *testing.T) { testLinkFields(t, b, biz) })
		t.Run("get is scoped to the business", func(t *testing.T) {
			c := clTest{t, b}
			id := newLink(t, biz.live, `{"name":"Mine","amount":500,"currency":"USD"}`)["id"].(string)
			for _, req := range []request{
				{method: "GET", path: "/links/" + id}, {method: "PATCH", path: "/links/" + id, body: `{"name":"x"}`},
				{method: "POST", path: "/links/" + id + "/archive"}, {method: "POST", path: "/links/" + id + "/restore"},
				{method: "DELETE", path: "/links/" + id},
			} {
				req.key = other.live
				c.call(req, 404, "not_found")
			}
			c.call(request{method: "GET", path: "/links/lnk_nothing", key: biz.live}, 404, "not_found")
		})
		t.Run("update", func(t *testing.T) { testUpdateLink(t, b, db, biz) })
		t.Run("archive and restore", func(t *testing.T) { testArchiveLink(t, b, biz) })
		t.Run("disabled by the operator", func(t *testing.T) { testDisabledLink(t, b, db, biz) })
		t.Run("delete", func(t *testing.T) { testDeleteLinkAPI(t, b, db, biz) })
		t.Run("stats", func(t *testing.T) {
			d := newLink(t, biz.live, `{"name":"Paid","amount":500,"currency":"USD"}`)
			err := db.AddLinkStats(context.Background(), biz.biz.ID, d["id"].(string), payd.StatsDelta{Payments: 3, Succeeded: 2, VolumeUSD: 1234})
			if err != nil {
				t.Fatal(err)
			}
			got := clTest{t, b}.data(request{method: "GET", path: "/links/" + d["id"].(string), key: biz.live}, 200)
			wantFields(t, got, map[string]any{"payments_count": 3, "volume": map[string]any{"amount": 1234, "currency": "USD"}})
		})
		t.Run("test keys cannot change links of a live business", func(t *testing.T) {
			c := clTest{t, b}
			id := newLink(t, biz.live, `{"name":"Live","amount":500,"currency":"USD"}`)["id"].(string)
			for _, req := range []request{
				{method: "POST", path: "/links", body: `{"name":"x","amount":500,"currency":"USD"}`},
				{method: "PATCH", path: "/links/" + id, body: `{"name":"x"}`},
				{method: "POST", path: "/links/" + id + "/archive"}, {method: "POST", path: "/links/" + id + "/restore"},
				{method: "DELETE", path: "/links/" + id},
			} {
				req.key = biz.test
				c.call(req, 403, "test_mode_unavailable")
			}
			c.data(request{method: "GET", path: "/links/" + id, key: biz.test}, 200)
			c.call(request{method: "GET", path: "/links", key: biz.test}, 200)
			tid := newLink(t, other.test, `{"name":"Test business","amount":500,"currency":"USD"}`)["id"].(string)
			c.data(request{method: "POST", path: "/links/" + tid + "/archive", key: other.test}, 200)
		})
		t.Run("restricted keys", func(t *testing.T) {
			c := clTest{t, b}
			read, write, cust := b.restricted(biz, "links:read"), b.restricted(biz, "links:write"), b.restricted(biz, "customers:write")
			id := newLink(t, write, `{"name":"By a restricted key","amount":500,"currency":"USD"}`)["id"].(string)
			c.data(request{method: "GET", path: "/links/" + id, key: read}, 200)
			c.call(request{method: "GET", path: "/links", key: read}, 200)
			for _, req := range []request{
				{method: "POST", path: "/links", body: `{}`}, {method: "PATCH", path: "/links/" + id, body: `{}`},
				{method: "POST", path: "/links/" + id + "/archive"}, {method: "DELETE", path: "/links/" + id},
			} {
				req.key = read
				c.call(req, 403, "permission_denied")
			}
			c.call(request{method: "GET", path: "/links/" + id, key: cust}, 403, "permission_denied")
			c.call(request{method: "GET", path: "/links", key: cust}, 403, "permission_denied")
		})
		t.Run("list", func(t *testing.T) { testListLinksAPI(t, b) })
	})
}

func testLinkFields(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	post := func(body string) request { return request{method: "POST", path: "/links", key: biz.live, body: body} }
	cases := map[string]string{
		`{"amount":500,"currency":"USD"}`:                                                   "name",
		`{"name":"   ","amount":500,"currency":"USD"}`:                                      "name",
		`{"name":"a\u0007","amount":500,"currency":"USD"}`:                                  "name",
		`{"name":"a","currency":"USD"}`:                                                     "amount",
		`{"name":"a","amount":500}`:                                                         "currency",
		`{"name":"a","amount":500,"currency":"usd"}`:                                        "currency",
		`{"name":"a","amount":500,"currency":"JPY"}`:                                        "currency",
		`{"name":"a","amount":99,"currency":"USD"}`:                                         "amount",
		`{"name":"a","amount":92,"currency":"EUR"}`:                                         "amount",
		`{"name":"a","amount":136,"currency":"CAD"}`:                                        "amount",
		`{"name":"a","amount":100000001,"currency":"GBP"}`:                                  "amount",
		`{"name":"a","amount":0,"currency":"USD"}`:                                          "amount",
		`{"name":"a","amount":-500,"currency":"USD"}`:                                       "amount",
		`{"name":"a","amount":5.5,"currency":"USD"}`:                                        "amount",
		`{"name":"a","amount":500,"currency":"USD","success_url":"/ok"}`:                    "success_url",
		`{"name":"a","amount":500,"currency":"USD","success_url":"ftp://x.example/"}`:       "success_url",
		`{"name":"a","amount":500,"currency":"USD","success_url":"https://u:p@x.example/"}`: "success_url",
		`{"name":"a","amount":500,"currency":"USD","status":"archived"}`:                    "status",
		`{"name":"a","amount":500,"currency":"USD","code":"mine"}`:                          "code",
	}
	for body, field := range cases {
		c.call(post(body), 400, "invalid_request", field)
	}
	long := fmt.Sprintf(`{"name":"a","amount":500,"currency":"USD","description":%q}`, strings.Repeat("d", payd.MaxLinkDescription+1))
	c.call(post(long), 400, "invalid_request", "description")
	long = fmt.Sprintf(`{"name":%q,"amount":500,"currency":"USD"}`, strings.Repeat("n", payd.MaxLinkName+1))
	c.call(post(long), 400, "invalid_request", "name")
	// The edges of the range at the test rates (EUR 1.08, CAD 0.73).
	for _, body := range []string{`{"name":"a","amount":100,"currency":"USD"}`, `{"name":"a","amount":93,"currency":"EUR"}`,
		`{"name":"a","amount":137,"currency":"CAD"}`, `{"name":"a","amount":100000000,"currency":"AUD"}`,
		`{"name":"a","amount":500,"currency":"USD","success_url":"http://127.0.0.1:9/dev-only"}`,
		`{"name":"a","amount":500,"currency":"USD","success_url":null}`} {
		c.data(post(body), 201)
	}
}

// TestCheckRedirectURL covers the success_url rule outside development,
// which the dev-mode test server cannot show.
func TestCheckRedirectURL(t *testing.T) {
	for s, ok := range map[string]bool{
		"https://shop.example/thanks?order=1#top": true, "http://shop.example/": false, "https://": false,
		"shop.example/thanks": false, "mailto:a@b.example": false, "javascript:alert(1)": false,
		"https://a b.example/": false, "https://user@shop.example/": false,
		"https://shop.example/" + strings.Repeat("p", payd.MaxURLLength): false,
	} {
		err := payd.CheckRedirectURL("success_url", s, false)
		if (err == nil) != ok {
			t.Errorf("%q: got %v, want ok=%v", s, err, ok)
		}
	}
	if err := payd.CheckRedirectURL("success_url", "http://127.0.0.1:8080/ok", true); err != nil {
		t.Errorf("http in development: %v", err)
	}
}

func testUpdateLink(t *testing.T, b *bundle, db *store.DB, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(request{method: "POST", path: "/links", key: biz.live,
		body: `{"name":"Old","description":"d","amount":1000,"currency":"USD","success_url":"https://x.example/"}`}, 201)
	path := "/links/" + d["id"].(string)
	patch := func(body string) request { return request{method: "PATCH", path: path, key: biz.live, body: body} }
	b.clock.Advance(time.Second)
	got := c.data(patch(`{"name":"New","description":"","amount":2000,"currency":"GBP"}`), 200)
	wantFields(t, got, map[string]any{"name": "New", "description": "", "amount": 2000, "currency": "GBP",
		"success_url": "https://x.example/", "code": d["code"], "url": d["url"], "created_at": d["created_at"]})
	if got["updated_at"] == d["updated_at"] {
		t.Fatal("updated_at did not move")
	}
	wantFields(t, c.data(patch(`{"success_url":"https://y.example/"}`), 200), map[string]any{"success_url": "https://y.example/"})
	wantFields(t, c.data(patch(`{"success_url":null}`), 200), map[string]any{"success_url": nil, "name": "New"})
	c.data(patch(`{"success_url":"https://y.example/"}`), 200)
	wantFields(t, c.data(patch(`{"success_url":""}`), 200), map[string]any{"success_url": nil})
	for body, field := range map[string]string{
		`{"amount":50}`: "amount", `{"currency":"EUR","amount":92}`: "amount", `{"currency":"XXX"}`: "currency",
		`{"name":""}`: "name", `{"success_url":"nope"}`: "success_url", `{"success_url":1}`: "success_url",
		`{"status":"active"}`: "status", `{"amount":null}`: "",
	} {
		if field == "" {
			c.data(patch(body), 200) // null leaves a field as it is
			continue
		}
		c.call(patch(body), 400, "invalid_request", field)
	}
	wantFields(t, c.data(request{method: "GET", path: path, key: biz.live}, 200), map[string]any{"amount": 2000, "currency": "GBP"})
	// The price is checked again only when it changes: a link priced under
	// an older rate can still be renamed.
	cheap := &payd.Link{ID: payd.NewID(payd.PrefixLink), BusinessID: biz.biz.ID, Code: payd.RandomString(payd.LinkCodeLength),
		Name: "Old rate", Amount: 50, Currency: "USD", Status: payd.LinkActive, CreatedAt: b.clock.Now(), UpdatedAt: b.clock.Now()}
	if err := db.CreateLink(context.Background(), cheap); err != nil {
		t.Fatal(err)
	}
	c.data(request{method: "PATCH", path: "/links/" + cheap.ID, key: biz.live, body: `{"name":"Renamed","amount":50}`}, 200)
	c.call(request{method: "PATCH", path: "/links/" + cheap.ID, key: biz.live, body: `{"amount":51}`}, 400, "invalid_request", "amount")
}

func testArchiveLink(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"A","amount":500,"currency":"USD"}`}, 201)
	path := "/links/" + d["id"].(string)
	b.clock.Advance(time.Second)
	arch := c.data(request{method: "POST", path: path + "/archive", key: biz.live}, 200)
	if arch["status"] != "archived" || arch["archived_at"] == nil || arch["archived_at"] != arch["updated_at"] {
		t.Fatalf("after archive: %v", arch)
	}
	b.clock.Advance(time.Second)
	again := c.data(request{method: "POST", path: path + "/archive", key: biz.live}, 200)
	wantFields(t, again, map[string]any{"status": "archived", "archived_at": arch["archived_at"], "updated_at": arch["updated_at"]})
	wantFields(t, c.data(request{method: "PATCH", path: path, key: biz.live, body: `{"name":"Edited while archived"}`}, 200),
		map[string]any{"status": "archived", "name": "Edited while archived"})
	rest := c.data(request{method: "POST", path: path + "/restore", key: biz.live}, 200)
	wantFields(t, rest, map[string]any{"status": "active", "archived_at": nil, "disabled_at": nil})
	wantFields(t, c.data(request{method: "POST", path: path + "/restore", key: biz.live}, 200), map[string]any{"status": "active", "updated_at": rest["updated_at"]})
}

func testDisabledLink(t *testing.T, b *bundle, db *store.DB, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"A","amount":500,"currency":"USD"}`}, 201)
	id := d["id"].(string)
	c.data(request{method: "POST", path: "/links/" + id + "/archive", key: biz.live}, 200)
	if _, err := db.DisableLink(context.Background(), id, "phishing", b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	got := c.data(request{method: "GET", path: "/links/" + id, key: biz.live}, 200)
	if got["status"] != "disabled" || got["disabled_at"] == nil {
		t.Fatalf("disabled link: %v", got)
	}
	if strings.Contains(string(b.do(request{method: "GET", path: "/links/" + id, key: biz.live}).body), "phishing") {
		t.Fatal("the operator's reason reached the business")
	}
	for _, req := range []request{
		{method: "PATCH", path: "/links/" + id, body: `{"name":"x"}`}, {method: "PATCH", path: "/links/" + id, body: `{}`},
		{method: "POST", path: "/links/" + id + "/archive"}, {method: "POST", path: "/links/" + id + "/restore"},
		{method: "DELETE", path: "/links/" + id},
	} {
		req.key = biz.live
		c.call(req, 409, "link_disabled")
	}
	wantIDList(t, "status=disabled", c.list(biz.live, "/links?status=disabled", 10), []string{id})
}

func testDeleteLinkAPI(t *testing.T, b *bundle, db *store.DB, biz *testBusiness) {
	c := clTest{t, b}
	id := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"A","amount":500,"currency":"USD"}`}, 201)["id"].(string)
	del := request{method: "DELETE", path: "/links/" + id, key: biz.live}
	wantFields(t, c.data(del, 200), map[string]any{"id": id, "kind": "link", "deleted": true})
	c.call(request{method: "GET", path: "/links/" + id, key: biz.live}, 404, "not_found")
	c.call(del, 404, "not_found")
	paid := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"name":"Paid","amount":500,"currency":"USD"}`}, 201)["id"].(string)
	if err := db.AddLinkStats(context.Background(), biz.biz.ID, paid, payd.StatsDelta{Payments: 1}); err != nil {
		t.Fatal(err)
	}
	c.call(request{method: "DELETE", path: "/links/" + paid, key: biz.live}, 409, "link_has_payments")
	c.data(request{method: "POST", path: "/links/" + paid + "/archive", key: biz.live}, 200)
	c.call(request{method: "DELETE", path: "/links/" + paid, key: biz.live}, 409, "link_has_payments")
}

func testListLinksAPI(t *testing.T, b *bundle) {
	c := clTest{t, b}
	biz, other := b.newBusiness(false), b.newBusiness(false)
	start := b.clock.Now()
	var ids, codes []string // newest first
	for _, spec := range []string{`"name":"Ebook","currency":"USD"`, `"name":"Course","currency":"EUR","description":"Video lessons"`,
		`"name":"Sticker","currency":"USD"`, `"name":"Mug","currency":"GBP"`} {
		d := c.data(request{method: "POST", path: "/links", key: biz.live, body: `{"amount":1000,` + spec + `}`}, 201)
		ids, codes = append([]string{d["id"].(string)}, ids...), append([]string{d["code"].(string)}, codes...)
		b.clock.Advance(time.Second)
	}
	c.data(request{method: "POST", path: "/links", key: other.live, body: `{"name":"Ebook","amount":1000,"currency":"USD"}`}, 201)
	c.data(request{method: "POST", path: "/links/" + ids[0] + "/archive", key: biz.live}, 200)
	for _, limit := range []int{1, 3, 100} {
		wantIDList(t, fmt.Sprint("limit ", limit), c.list(biz.live, "/links", limit), ids)
	}
	ts := func(d time.Duration) string { return url.QueryEscape(start.Add(d).Format(time.RFC3339Nano)) }
	for f, want := range map[string][]string{
		"status=archived": {ids[0]}, "status=active": ids[1:], "status=disabled": nil,
		"currency=USD": {ids[1], ids[3]}, "q=LESSONS": {ids[2]}, "q=stick": {ids[1]},
		"q=" + url.QueryEscape(strings.ToLower(codes[3])):                           {ids[3]},
		"created_after=" + ts(time.Second) + "&created_before=" + ts(3*time.Second): {ids[1], ids[2]},
		"status=active&currency=USD":                                                {ids[1], ids[3]},
	} {
		wantIDList(t, f, c.list(biz.live, "/links?"+f, 1), want)
	}
	for q, field := range map[string]string{
		"status=deleted": "status", "status=": "status", "currency=usd": "currency", "created_after=2026": "created_after",
		"customer_id=cst_1": "customer_id", "limit=x": "limit", "cursor=": "cursor",
	} {
		c.call(request{method: "GET", path: "/links?" + q, key: biz.live}, 400, "invalid_request", field)
	}
}

// FuzzLinkFilter checks that any query either parses or fails with an
// invalid_request naming a parameter, and never panics.
func FuzzLinkFilter(f *testing.F) {
	for _, s := range []string{"", "q=mug", "status=archived", "status=deleted", "currency=EUR", "currency=eur",
		"created_after=2026-01-02", "created_before=x", "q=%00", "q=%ff", "y=1", "status=active&status=archived"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		_, err = parseLinkFilter(v)
		checkFilterError(t, err)
	})
}

// FuzzUpdateLinkBody checks the PATCH /links body decoder, with its
// optional success_url, on any input: it either decodes or fails with a
// payd error, never panics, and keeps absent apart from null.
func FuzzUpdateLinkBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"success_url":null}`, `{"success_url":""}`, `{"success_url":"https://x/"}`,
		`{"success_url":1}`, `{"success_url":{"a":1}}`, `{"success_url":"\u0000"}`, `{"amount":null}`, `{"name":"a","name":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req updateLinkRequest
		err := decodeJSON(body, &req)
		if err != nil {
			if payd.ErrorCode(err) == payd.ErrInternal {
				t.Fatalf("decode error %v is not a payd error", err)
			}
			return
		}
		if !req.SuccessURL.set && req.SuccessURL.value != "" {
			t.Fatalf("absent success_url holds %q", req.SuccessURL.value)
		}
	})
}
