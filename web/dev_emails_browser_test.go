package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDevEmailsPageInBrowser opens the development page of kept emails
// after a sign-up, on a phone and a desktop: the code is there, the page
// fits, makes no third-party request and passes axe-core.
func TestDevEmailsPageInBrowser(t *testing.T) {
	s := startPayd(t)
	tok := s.must("POST", "/devnet/challenges", "", map[string]any{"form": "signup"})["token"].(string)
	if st, b := s.call("POST", "/accounts", "", map[string]any{"email": "try@example.com", "password": "correct horse battery", "name": "Try"},
		"Service-Challenge", tok, "Origin", s.origin); st != http.StatusAccepted {
		t.Fatalf("sign-up: %d %s", st, b)
	}
	for _, vp := range []viewport{phone, desktop} {
		t.Run(vp.name, func(t *testing.T) {
			b := newBrowser(t, vp)
			b.open(s.origin + "/dev/emails?to=try%40example.com")
			if got := b.text("h1"); !strings.Contains(got, "Emails kept") {
				t.Fatalf("h1 = %q", got)
			}
			if body := b.text(".mail-body"); !strings.Contains(body, "\n") || len(strings.TrimSpace(body)) < 6 {
				t.Fatalf("the email's text: %q", body)
			}
			b.checkFits()
			b.checkNoThirdParty()
			b.screenshot("dev-emails")
			b.checkA11y()
		})
	}
}
