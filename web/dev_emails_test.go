package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"payd/clock"
)

// TestDevEmails checks the development page of kept emails: only with
// Dev, a labelled form, the emails of the address newest first with
// their text escaped, a sentence when there are none, and a bad address
// said in words.
func TestDevEmails(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("to") {
		case "ada@example.com":
			io.WriteString(w, `{"data":[{"kind":"email","to":"ada@example.com","subject":"Your payd code",
				"text":"Your code:\n\n123456\n\n<script>alert(1)</script>","type":"signup_code","status":"kept",
				"created_at":"2026-11-25T16:00:00Z"}],"has_more":false,"next_cursor":null}`)
		case "bo@example.com":
			io.WriteString(w, `{"data":[],"has_more":false,"next_cursor":null}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":"invalid_request","message":"to is not an email address","field":"to"}}`)
		}
	})
	page := func(dev bool, path string) (int, string) {
		h, err := New(Options{API: api, APIBase: "/api/v1", Clock: clock.Real{}, Log: slog.New(slog.DiscardHandler), Dev: dev})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/", http.NotFoundHandler())
		h.Mount(mux)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, _ := page(false, "/dev/emails?to=ada@example.com"); code != http.StatusNotFound {
		t.Fatalf("without Dev: %d, want 404", code)
	}
	code, body := page(true, "/dev/emails")
	if code != 200 || !strings.Contains(body, `<label for="to">`) || !strings.Contains(body, `type="email"`) || strings.Contains(body, "<article") {
		t.Fatalf("the form alone: %d\n%s", code, body)
	}
	_, body = page(true, "/dev/emails?to=ada@example.com")
	for _, want := range []string{"Your payd code", "123456", "&lt;script&gt;", `value="ada@example.com"`, "2026-11-25 16:00:00 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("an email's text is not escaped")
	}
	if _, body = page(true, "/dev/emails?to=bo@example.com"); !strings.Contains(body, "No emails to bo@example.com yet.") {
		t.Errorf("no emails:\n%s", body)
	}
	if _, body = page(true, "/dev/emails?to=nonsense"); !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "not an email address") {
		t.Errorf("a bad address:\n%s", body)
	}
}
