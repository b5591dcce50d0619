package api

import (
	"net/http"
	"strings"
	"testing"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestPatchMe changes the signed-in person's name: spaces around it are
// dropped, a field left out is kept, a name too long or on two lines is
// refused on field name, and without a session the answer is 401. Every
// answer is checked against the OpenAPI document by the harness.
func TestPatchMe(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		me := br.call(request{method: "PATCH", path: "/me", body: `{"name":"  Ada King  "}`}, http.StatusOK)["data"].(map[string]any)
		if me["name"] != "Ada King" || me["email"] != "ada@example.com" {
			t.Fatalf("PATCH /me = %v", me)
		}
		if got := br.call(request{method: "GET", path: "/me"}, http.StatusOK)["data"].(map[string]any)["name"]; got != "Ada King" {
			t.Fatalf("GET /me name %v", got)
		}
		if got := br.call(request{method: "PATCH", path: "/me", body: `{}`}, http.StatusOK)["data"].(map[string]any)["name"]; got != "Ada King" {
			t.Fatalf("empty PATCH changed the name to %v", got)
		}
		long := `{"name":"` + strings.Repeat("a", 201) + `"}`
		for _, body := range []string{long, `{"name":"Ada\nKing"}`} {
			r := br.call(request{method: "PATCH", path: "/me", body: body}, http.StatusBadRequest, payd.ErrInvalidRequest)
			if r["error"].(map[string]any)["field"] != "name" {
				t.Fatalf("refusal %v", r)
			}
		}
		br.call(request{method: "PATCH", path: "/me", body: `{"name":1}`}, http.StatusBadRequest)
		if got := br.call(request{method: "PATCH", path: "/me", body: `{"name":""}`}, http.StatusOK)["data"].(map[string]any)["name"]; got != "" {
			t.Fatalf("cleared name %v", got)
		}
		newBrowser(t, b).call(request{method: "PATCH", path: "/me", body: `{"name":"Eve"}`}, http.StatusUnauthorized, payd.ErrUnauthenticated)
	})
}
