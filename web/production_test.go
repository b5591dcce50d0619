package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestProductionPagesOfferNothing restarts payd without --dev, where no
// network has an adapter yet: a link's and a payment's page then offer no
// coin and say calmly that the business cannot take payments right now,
// and a form sent anyway is refused with a sentence (issue 15 item 13).
func TestProductionPagesOfferNothing(t *testing.T) {
	s := startPayd(t)
	link := s.link(nil)
	pay := s.payment(nil)
	s.serve() // the same database, without --dev
	for i, made := range []string{link["url"].(string), pay["url"].(string)} {
		u, err := url.Parse(made)
		if err != nil {
			t.Fatal(err)
		}
		page := s.origin + u.Path // the port changed with the restart
		res, err := http.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		html := string(body)
		if res.StatusCode != http.StatusOK || !strings.Contains(html, "not accepting payments right now") ||
			strings.Contains(html, `name="option"`) || strings.Contains(html, "Bitcoin") {
			t.Fatalf("%s without --dev: %d\n%s", page, res.StatusCode, html)
		}
		status, html := postForm(t, page, url.Values{"option": {"BTC/bitcoin"}, "idempotency_key": {"web_production_key_" + string(rune('a'+i))}})
		if status != http.StatusBadRequest || !strings.Contains(html, "This coin is not available right now") {
			t.Fatalf("a form sent anyway to %s: %d\n%s", page, status, html)
		}
	}
}
