package api

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"payd/store"
	"payd/store/storetest"
)

// TestCommon covers spec 7.1 and 7.2's request rules on both databases.
func TestCommon(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db,
			route{method: "POST", path: "/_test/boom", access: public, h: func(http.ResponseWriter, *http.Request) error {
				return errors.New("database password is hunter2")
			}},
			route{method: "POST", path: "/_test/echo", access: public, h: echo},
			route{method: "POST", path: "/_test/panic", access: public, h: func(http.ResponseWriter, *http.Request) error {
				panic("secret internals")
			}},
		)
		t.Run("unknown path is 404 not_found", func(t *testing.T) {
			r := b.do(request{method: "GET", path: "/nope"})
			if code, _ := r.errorCode(t); r.status != 404 || code != "not_found" {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
		t.Run("wrong method is 405 with empty body and no request id", func(t *testing.T) {
			r := b.do(request{method: "DELETE", path: "/exchange-rates"})
			if r.status != 405 || r.header.Get("Allow") != "GET" {
				t.Fatalf("got %d allow %q", r.status, r.header.Get("Allow"))
			}
		})
		t.Run("body over 1 MiB is 413", func(t *testing.T) {
			big := `{"advance_seconds":1,"x":"` + strings.Repeat("a", 1<<20) + `"}`
			r := b.do(request{method: "POST", path: "/devnet/clock", body: big})
			if code, _ := r.errorCode(t); r.status != 413 || code != "payload_too_large" {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
		t.Run("body exactly 1 MiB is read", func(t *testing.T) {
			body := `{"advance_seconds":1}` + strings.Repeat(" ", 1<<20-len(`{"advance_seconds":1}`))
			r := b.do(request{method: "POST", path: "/devnet/clock", body: body})
			if r.status != 200 {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
		t.Run("non-JSON content type is 415", func(t *testing.T) {
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "bogus"} {
				r := b.do(request{method: "POST", path: "/devnet/clock", body: `{"advance_seconds":1}`, contentType: ct})
				if code, _ := r.errorCode(t); r.status != 415 || code != "unsupported_media_type" {
					t.Fatalf("%s: got %d %s", ct, r.status, r.body)
				}
			}
		})
		t.Run("malformed JSON and bad UTF-8 are invalid_json", func(t *testing.T) {
			for _, body := range []string{`{"advance_seconds":`, `{"advance_seconds":1,}`, "{\"a\":\"\xff\"}", `[`} {
				r := b.do(request{method: "POST", path: "/devnet/clock", body: body})
				if code, _ := r.errorCode(t); r.status != 400 || code != "invalid_json" {
					t.Fatalf("%q: got %d %s", body, r.status, r.body)
				}
			}
		})
		t.Run("strict decoding names the field", func(t *testing.T) {
			cases := map[string]string{
				`{"name":"a","extra":1}`:          "extra",
				`{"name":"a","name":"b"}`:         "name",
				`{"metadata":{"k":"1","k":"2"}}`:  "metadata.k",
				`{"amount":"1"}`:                  "amount",
				`{"amount":1.5}`:                  "amount",
				`{"amount":99999999999999999999}`: "amount",
				`{"name":"a"} {}`:                 "body",
				`{"name":"a\u0000b"}`:             "name",
				`{"name":"\ud800"}`:               "name",
				`{"metadata":{"k":"\udc00x"}}`:    "metadata.k",
				`["name"]`:                        "body",
			}
			for body, field := range cases {
				r := b.do(request{method: "POST", path: "/_test/echo", body: body})
				code, got := r.errorCode(t)
				if r.status != 400 || code != "invalid_request" || got != field {
					t.Errorf("%s: got %d %s, want field %q", body, r.status, r.body, field)
				}
			}
			r := b.do(request{method: "POST", path: "/_test/echo", body: `{"name":"Zoë \ud83d\ude00","amount":5,"metadata":{"a":"b"}}`})
			if r.status != 200 || !strings.Contains(string(r.body), "Zoë 😀") {
				t.Fatalf("valid body refused: %d %s", r.status, r.body)
			}
		})
		t.Run("a failure is 500 internal_error, logged with the request id, never leaked", func(t *testing.T) {
			for _, p := range []string{"/_test/boom", "/_test/panic"} {
				r := b.do(request{method: "POST", path: p})
				code, _ := r.errorCode(t)
				if r.status != 500 || code != "internal_error" || strings.Contains(string(r.body), "hunter2") || strings.Contains(string(r.body), "secret internals") {
					t.Fatalf("%s: got %d %s", p, r.status, r.body)
				}
				id := r.header.Get("Service-Request-Id")
				if !strings.Contains(b.logs.String(), "request_id="+id) {
					t.Fatalf("%s: log has no line with %s", p, id)
				}
			}
		})
		t.Run("exchange rates are public", func(t *testing.T) {
			r := b.do(request{method: "GET", path: "/exchange-rates"})
			if r.status != 200 {
				t.Fatalf("got %d %s", r.status, r.body)
			}
			want := `"fiat":{`
			if !strings.Contains(string(r.body), `"BTC":{"price_usd":6400000}`) || !strings.Contains(string(r.body), want) {
				t.Fatalf("body %s", r.body)
			}
			if !strings.Contains(string(r.body), `"EUR":{"usd_rate":1.08}`) {
				t.Fatalf("usd_rate must be the exact decimal: %s", r.body)
			}
		})
		t.Run("openapi document is served", func(t *testing.T) {
			r := b.do(request{method: "GET", path: "/openapi.json"})
			if r.status != 200 || !strings.Contains(string(r.body), `"openapi"`) {
				t.Fatalf("got %d", r.status)
			}
		})
		t.Run("healthz", func(t *testing.T) {
			res, err := http.Get(b.http.URL + "/healthz")
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("healthz: %v %v", err, res)
			}
			res.Body.Close()
		})
	})
}

type echoRequest struct {
	Name     string            `json:"name"`
	Amount   int64             `json:"amount"`
	Metadata map[string]string `json:"metadata"`
}

// echo decodes strictly and answers what it read.
func echo(w http.ResponseWriter, r *http.Request) error {
	var req echoRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{req})
	return nil
}
