package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestWebhooks covers the webhook endpoint routes (docs/webhooks.md) on
// both databases.
func TestWebhooks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		biz, other := b.newBusiness(true), b.newBusiness(false)
		t.Run("create shows the secret once", func(t *testing.T) { testCreateWebhook(t, b, biz) })
		t.Run("the idempotency key is ignored", func(t *testing.T) { testWebhookIdempotency(t, b, biz) })
		t.Run("bad fields", func(t *testing.T) { testWebhookFields(t, b, biz) })
		t.Run("update", func(t *testing.T) { testUpdateWebhookAPI(t, b, biz) })
		t.Run("rotation keeps the old secret for 24 hours", func(t *testing.T) { testRotateWebhook(t, b, db, biz) })
		t.Run("scoped to the business", func(t *testing.T) { testWebhookScope(t, b, biz, other) })
		t.Run("delete twice", func(t *testing.T) { testDeleteWebhookTwice(t, b, biz) })
		t.Run("restricted keys", func(t *testing.T) { testWebhookKeys(t, b, biz) })
		t.Run("list", func(t *testing.T) { testListWebhooksAPI(t, b) })
		t.Run("production refuses local URLs", func(t *testing.T) { testProductionWebhookURLs(t, b) })
	})
}

func testCreateWebhook(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	r := b.do(postWebhook(biz.live, map[string]any{"url": "https://hooks.example.com/payd?x=1",
		"event_types": []string{payd.EventPaymentSucceeded, payd.EventPaymentFailed}, "description": "Orders"}))
	d := c.dataOf(r, 201)
	wantFields(t, d, map[string]any{"kind": "webhook_endpoint", "url": "https://hooks.example.com/payd?x=1",
		"event_types": []string{"payment.succeeded", "payment.failed"}, "description": "Orders", "enabled": true,
		"previous_secret_expires_at": nil})
	wantSecret(t, d["secret"])
	if r.header.Get("Cache-Control") != "no-store" || !payd.HasPrefix(d["id"].(string), payd.PrefixWebhook) {
		t.Fatalf("headers %v, body %s", r.header, r.body)
	}
	path := "/webhooks/" + d["id"].(string)
	got := c.data(request{method: "GET", path: path, key: biz.live}, 200)
	delete(d, "secret")
	wantFields(t, got, d)
	if _, ok := got["secret"]; ok {
		t.Fatalf("GET shows the secret: %v", got)
	}
	body := c.call(request{method: "GET", path: "/webhooks", key: biz.live}, 200)
	if strings.Contains(fmt.Sprint(body), "whsec_") {
		t.Fatalf("the list shows a secret: %v", body)
	}
	// Dev mode takes http and loopback targets (CONTRACT.md).
	c.data(postWebhook(biz.live, map[string]any{"url": "http://127.0.0.1:9/hook", "event_types": []string{"*"}}), 201)
	c.data(postWebhook(biz.live, map[string]any{"url": "https://localhost/hook", "event_types": []string{"*"}}), 201)
}

func testWebhookIdempotency(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	for _, key := range []string{"same-key", strings.Repeat("k", 300)} {
		req := postWebhook(biz.live, map[string]any{"url": "https://hooks.example.com/a", "event_types": []string{"*"}})
		req.header = map[string]string{"Idempotency-Key": key}
		first, again := b.do(req), b.do(req)
		d1, d2 := c.dataOf(first, 201), c.dataOf(again, 201)
		if d1["id"] == d2["id"] || d1["secret"] == d2["secret"] || again.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("a retried POST /webhooks must make a second endpoint: %s then %s", first.body, again.body)
		}
	}
}

func testWebhookScope(t *testing.T, b *bundle, biz, other *testBusiness) {
	c := clTest{t, b}
	path := "/webhooks/" + c.data(postWebhook(biz.live, webhookBody()), 201)["id"].(string)
	for _, req := range []request{{method: "GET", path: path}, {method: "PATCH", path: path, body: `{}`},
		{method: "DELETE", path: path}, {method: "POST", path: path + "/rotate-secret"}} {
		req.key = other.live
		c.call(req, 404, "not_found")
	}
	if ids := c.list(other.live, "/webhooks", 100); len(ids) != 0 {
		t.Fatalf("another business lists %v", ids)
	}
	c.data(request{method: "GET", path: path, key: biz.live}, 200)
}

func testDeleteWebhookTwice(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	id := c.data(postWebhook(biz.live, webhookBody()), 201)["id"].(string)
	d := c.data(request{method: "DELETE", path: "/webhooks/" + id, key: biz.live}, 200)
	wantFields(t, d, map[string]any{"id": id, "kind": "webhook_endpoint", "deleted": true})
	c.call(request{method: "DELETE", path: "/webhooks/" + id, key: biz.live}, 404, "not_found")
	c.call(request{method: "GET", path: "/webhooks/" + id, key: biz.live}, 404, "not_found")
	if slices.Contains(c.list(biz.live, "/webhooks", 100), id) {
		t.Fatalf("a deleted endpoint is listed")
	}
}

// testWebhookKeys checks restricted keys: webhooks:read lists and reads
// but cannot change anything.
func testWebhookKeys(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	read, write, customers := b.restricted(biz, "webhooks:read"), b.restricted(biz, "webhooks:write"), b.restricted(biz, "customers:write")
	path := "/webhooks/" + c.data(postWebhook(write, webhookBody()), 201)["id"].(string)
	c.call(request{method: "GET", path: "/webhooks", key: read}, 200)
	c.data(request{method: "GET", path: path, key: read}, 200)
	for _, req := range []request{postWebhook(read, webhookBody()), {method: "PATCH", path: path, body: `{}`},
		{method: "DELETE", path: path}, {method: "POST", path: path + "/rotate-secret"}} {
		req.key = read
		c.call(req, 403, "permission_denied")
	}
	c.call(request{method: "GET", path: "/webhooks", key: customers}, 403, "permission_denied")
	c.call(request{method: "GET", path: "/webhooks"}, 401, "unauthenticated")
	c.data(request{method: "POST", path: path + "/rotate-secret", key: write}, 200)
}

func testWebhookFields(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	types := []string{payd.EventLinkCreated}
	cases := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"event_types": types}, "url"},
		{map[string]any{"url": "", "event_types": types}, "url"},
		{map[string]any{"url": 1, "event_types": types}, "url"},
		{map[string]any{"url": "ftp://hooks.example.com", "event_types": types}, "url"},
		{map[string]any{"url": "hooks.example.com/x", "event_types": types}, "url"},
		{map[string]any{"url": "https://user:pw@hooks.example.com", "event_types": types}, "url"},
		{map[string]any{"url": "https://hooks.example.com/#top", "event_types": types}, "url"},
		{map[string]any{"url": "http://127.0.0.1:0/hook", "event_types": types}, "url"},
		{map[string]any{"url": "https://hooks.example.com:99999/", "event_types": types}, "url"},
		{map[string]any{"url": "https://hooks.example.com/" + strings.Repeat("a", payd.MaxURLLength), "event_types": types}, "url"},
		{map[string]any{"url": "https://hooks.example.com"}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": []string{}}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": "payment.created"}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": []string{"payment.refunded"}}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": []string{"*", "payment.created"}}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": []string{"link.created", "link.created"}}, "event_types"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": types, "description": strings.Repeat("é", payd.MaxWebhookDescription+1)}, "description"},
		{map[string]any{"url": "https://hooks.example.com", "event_types": types, "enabled": false}, "enabled"},
	}
	for _, tc := range cases {
		c.call(postWebhook(biz.live, tc.body), 400, "invalid_request", tc.field)
	}
	c.data(postWebhook(biz.live, map[string]any{"url": "https://hooks.example.com", "event_types": types,
		"description": strings.Repeat("é", payd.MaxWebhookDescription)}), 201)
}

func testUpdateWebhookAPI(t *testing.T, b *bundle, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(postWebhook(biz.live, webhookBody()), 201)
	path := "/webhooks/" + d["id"].(string)
	patch := func(body string) request { return request{method: "PATCH", path: path, key: biz.live, body: body} }
	b.clock.Advance(time.Second)
	got := c.data(patch(`{"url":"https://other.example.org/in","event_types":["customer.created","payment.expired"],"description":"new","enabled":false}`), 200)
	wantFields(t, got, map[string]any{"url": "https://other.example.org/in", "event_types": []string{"customer.created", "payment.expired"},
		"description": "new", "enabled": false, "created_at": d["created_at"]})
	if got["updated_at"] == d["updated_at"] || got["secret"] != nil {
		t.Fatalf("after PATCH: %v", got)
	}
	unchanged := c.data(patch(`{}`), 200)
	delete(unchanged, "updated_at")
	wantFields(t, c.data(request{method: "GET", path: path, key: biz.live}, 200), unchanged)
	wantFields(t, c.data(patch(`{"enabled":true,"event_types":["*"]}`), 200), map[string]any{"enabled": true, "event_types": []string{"*"}})
	for body, field := range map[string]string{
		`{"url":"ftp://x.example"}`: "url", `{"event_types":[]}`: "event_types", `{"event_types":["nope"]}`: "event_types",
		`{"enabled":"yes"}`: "enabled", `{"secret":"whsec_x"}`: "secret", `{"description":"a\u0000b"}`: "description",
	} {
		c.call(patch(body), 400, "invalid_request", field)
	}
	c.call(request{method: "PATCH", path: "/webhooks/whk_missing", key: biz.live, body: `{}`}, 404, "not_found")
}

func testRotateWebhook(t *testing.T, b *bundle, db *store.DB, biz *testBusiness) {
	c := clTest{t, b}
	d := c.data(postWebhook(biz.live, webhookBody()), 201)
	id, first := d["id"].(string), d["secret"].(string)
	rotate := request{method: "POST", path: "/webhooks/" + id + "/rotate-secret", key: biz.live,
		header: map[string]string{"Idempotency-Key": "rotate"}}
	r := b.do(rotate)
	rotated := c.dataOf(r, 200)
	second := rotated["secret"].(string)
	wantSecret(t, second)
	until := b.clock.Now().Add(payd.WebhookSecretOverlap)
	if second == first || r.header.Get("Cache-Control") != "no-store" || rotated["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate answered %s", r.body)
	}
	secrets := func() []string {
		t.Helper()
		e, err := db.WebhookEndpointByID(context.Background(), biz.biz.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Secrets(b.clock.Now())
	}
	wantIDList(t, "just after rotating", secrets(), []string{second, first})
	advance := func(d time.Duration) {
		c.call(request{method: "POST", path: "/devnet/clock", body: fmt.Sprintf(`{"advance_seconds":%d}`, int(d.Seconds()))}, 200)
	}
	advance(until.Sub(b.clock.Now()).Truncate(time.Second) - time.Second)
	wantIDList(t, "a second before 24 hours", secrets(), []string{second, first})
	advance(2 * time.Second)
	wantIDList(t, "after 24 hours", secrets(), []string{second})
	wantFields(t, c.data(request{method: "GET", path: "/webhooks/" + id, key: biz.live}, 200),
		map[string]any{"previous_secret_expires_at": nil})
	// Rotating again within the overlap ends the older secret at once:
	// at most two ever sign. The Idempotency-Key never replays a rotation.
	third := c.data(rotate, 200)["secret"].(string)
	fourth := c.data(rotate, 200)["secret"].(string)
	wantIDList(t, "after rotating twice", secrets(), []string{fourth, third})
	c.call(request{method: "POST", path: "/webhooks/" + id + "/rotate-secret", key: biz.live, body: `{"expire":true}`}, 400, "invalid_request", "expire")
	c.call(request{method: "POST", path: "/webhooks/whk_missing/rotate-secret", key: biz.live}, 404, "not_found")
}

func testListWebhooksAPI(t *testing.T, b *bundle) {
	c := clTest{t, b}
	biz := b.newBusiness(false)
	var ids []string // newest first
	for range 5 {
		ids = append([]string{c.data(postWebhook(biz.live, webhookBody()), 201)["id"].(string)}, ids...)
		b.clock.Advance(time.Second)
	}
	for _, limit := range []int{1, 2, 5, 100} {
		wantIDList(t, fmt.Sprint("limit ", limit), c.list(biz.live, "/webhooks", limit), ids)
	}
	for q, field := range map[string]string{"enabled=true": "enabled", "limit=0": "limit", "limit=101": "limit", "cursor=abc": "cursor"} {
		c.call(request{method: "GET", path: "/webhooks?" + q, key: biz.live}, 400, "invalid_request", field)
	}
	// A cursor of another list is refused.
	c.data(request{method: "POST", path: "/customers", key: biz.live, body: `{}`}, 201)
	c.data(request{method: "POST", path: "/customers", key: biz.live, body: `{}`}, 201)
	cur := c.call(request{method: "GET", path: "/customers?limit=1", key: biz.live}, 200)["next_cursor"].(string)
	c.call(request{method: "GET", path: "/webhooks?cursor=" + url.QueryEscape(cur), key: biz.live}, 400, "invalid_request", "cursor")
}

// testProductionWebhookURLs runs a second server on the same database
// without --dev, where webhook targets must be public https.
func testProductionWebhookURLs(t *testing.T, b *bundle) {
	srv, err := New(context.Background(), Options{Store: b.db, Clock: b.clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Rates: fixedRates{testRates(b.clock.Now())}, Counter: NewMemoryCounter(b.clock), PublicURL: "http://payd.test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p := &bundle{t: t, db: b.db, clock: b.clock, srv: srv, http: hs, base: hs.URL + BasePath, logs: &syncBuffer{}}
	p.doc, p.router = loadRouter(t, p.base)
	c, biz := clTest{t, p}, b.newBusiness(true)
	for _, u := range []string{"http://hooks.example.com/", "https://127.0.0.1/", "https://localhost:8443/", "https://10.1.2.3/",
		"https://[::1]/", "https://169.254.169.254/latest/meta-data", "https://intranet/hook", "https://127.1/", "https://svc.internal/",
		"https://hooks.example.com:0/", "https://168.63.129.16/", "https://[3fff::1]/"} {
		c.call(postWebhook(biz.live, map[string]any{"url": u, "event_types": []string{"*"}}), 400, "invalid_request", "url")
	}
	id := c.data(postWebhook(biz.live, map[string]any{"url": "https://hooks.example.com:8443/in", "event_types": []string{"*"}}), 201)["id"]
	c.call(request{method: "PATCH", path: fmt.Sprint("/webhooks/", id), key: biz.live, body: `{"url":"https://192.168.1.1/"}`}, 400, "invalid_request", "url")
}

// TestCheckWebhookURL is the table of production's URL rules.
func TestCheckWebhookURL(t *testing.T) {
	ok := []string{"https://hooks.example.com/in", "https://example.com:8443/a?b=c", "https://8.8.8.8/", "https://[2606:4700::1111]/",
		"https://bücher.example/", "https://a.b.c.example.co.uk/x", "https://example.com./", "https://1password.com/",
		"https://example.com:1/", "https://example.com:65535/", "https://example.com:/", "https://[64:ff9b::808:808]/"}
	bad := []string{"", "http://example.com/", "https://localhost/", "https://LOCALHOST./", "https://a.localhost/", "https://0.0.0.0/",
		"https://127.0.0.1/", "https://[::ffff:127.0.0.1]/", "https://[::1]/", "https://[fe80::1%25en0]/", "https://[fd00::1]/",
		"https://172.16.0.1/", "https://192.168.0.1/", "https://100.64.0.1/", "https://224.0.0.1/", "https://255.255.255.255/",
		"https://2130706433/", "https://0x7f000001/", "https://127.1/", "https://0177.0.0.1/", "https://metadata/",
		"https://printer.local/", "https://db.internal/", "https://nas.home.arpa/", "https://[64:ff9b::a00:1]/", "https://[2002:a00:1::]/",
		"https://example.com/#x", "https://u@example.com/", "https:///path", "https://:443/", "mailto:a@example.com", "https://exa mple.com/",
		"https://example.com:0/", "https://example.com:99999/", "https://example.com:65536/", "https://[2001:db8::1]:0/",
		"https://168.63.129.16/", "https://192.88.99.1/", "https://[3fff::1]/", "https://[4000::1]/"}
	for _, u := range ok {
		if err := payd.CheckWebhookURL(u, false); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
	for _, u := range bad {
		var pe *payd.Error
		if err := payd.CheckWebhookURL(u, false); !errors.As(err, &pe) || pe.Field != "url" {
			t.Errorf("%q: got %v, want an invalid_request on url", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://localhost/", "http://payd-receiver/x"} {
		if err := payd.CheckWebhookURL(u, true); err != nil {
			t.Errorf("dev refused %q: %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:0/hook", "http://127.0.0.1:99999/hook", "https://localhost:00000/"} {
		var pe *payd.Error
		if err := payd.CheckWebhookURL(u, true); !errors.As(err, &pe) || pe.Field != "url" {
			t.Errorf("dev: %q: got %v, want an invalid_request on url", u, err)
		}
	}
}

// TestWebhookEventCatalogue keeps the catalogue, the OpenAPI document and
// docs/webhooks.md in step, and checks that every payment status has a type.
func TestWebhookEventCatalogue(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum         []string          `json:"enum"`
				Descriptions map[string]string `json:"x-enum-descriptions"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPIDocument(true), &doc); err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["WebhookEventType"]
	md, err := os.ReadFile("../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range payd.EventCatalogue {
		types = append(types, e.Type)
		if schema.Descriptions[e.Type] != e.Description || !strings.Contains(string(md), "| `"+e.Type+"` | "+e.Description+" |") {
			t.Errorf("%s is not documented as %q", e.Type, e.Description)
		}
	}
	wantIDList(t, "WebhookEventType", schema.Enum, types)
	for _, s := range payd.PaymentStatuses {
		if typ := payd.PaymentStatusEventType(s); !payd.KnownEventType(typ) {
			t.Errorf("payment status %s has no event type (%s)", s, typ)
		}
	}
}

// FuzzCreateWebhook checks that any create body either makes a valid
// endpoint or fails with a 400 naming a field, and never panics.
func FuzzCreateWebhook(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.com/in","event_types":["payment.succeeded"]}`,
		`{"url":"https://[::1]/","event_types":["*"],"description":"x"}`,
		`{"url":"http://127.0.0.1:9/","event_types":["*","link.created"]}`,
		`{"url":"https://0x7f.1/","event_types":["payment.failed","payment.failed"]}`,
		`{"url":"https://a@b.example/#f","event_types":[]}`,
	} {
		f.Add([]byte(s), false)
	}
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, dev bool) {
		var req createWebhookRequest
		if err := decodeJSON(body, &req); err != nil {
			return
		}
		e, err := payd.NewWebhookEndpoint("biz_x", req.update(), dev, now)
		if err != nil {
			var pe *payd.Error
			if !errors.As(err, &pe) || statusByCode[pe.Code] != 400 || pe.Field == "" {
				t.Fatalf("error %v is not a 400 naming a field", err)
			}
			return
		}
		if !dev && !strings.HasPrefix(e.URL, "https://") || len(e.Secrets(now)) != 1 || !slices.ContainsFunc(e.EventTypes, e.Receives) {
			t.Fatalf("invalid endpoint made: %+v", e)
		}
		if _, err := json.Marshal(withSecret(e, now)); err != nil {
			t.Fatal(err)
		}
	})
}

// postWebhook is POST /webhooks with body.
func postWebhook(key string, body map[string]any) request {
	return request{method: "POST", path: "/webhooks", key: key, body: jsonBody(body)}
}

// webhookBody is a valid create body.
func webhookBody() map[string]any {
	return map[string]any{"url": "https://hooks.example.com/payd", "event_types": []string{payd.EventPaymentSucceeded}}
}

// dataOf checks a response's status and returns its data object.
func (c clTest) dataOf(r *response, status int) map[string]any {
	c.t.Helper()
	d, ok := r.json(c.t)["data"].(map[string]any)
	if r.status != status || !ok {
		c.t.Fatalf("got %d %s, want %d with data", r.status, r.body, status)
	}
	return d
}

// wantSecret checks the form of a signing secret: whsec_ and the standard
// base64 of 32 bytes.
func wantSecret(t *testing.T, v any) {
	t.Helper()
	s, _ := v.(string)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, payd.WebhookSecretPrefix))
	if !strings.HasPrefix(s, payd.WebhookSecretPrefix) || err != nil || len(raw) != payd.WebhookSecretBytes {
		t.Fatalf("secret %q is not whsec_ and base64 of 32 bytes", s)
	}
}
