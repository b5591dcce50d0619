package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDashboardSignInOut walks the way in and out: a browser without a
// session is sent to the sign-in page; a wrong password is refused with a
// sentence; the right one opens the business's home; signing out ends the
// session and the home is out of reach again.
func TestDashboardSignInOut(t *testing.T) {
	m := newMerchant(t, desktop)
	if got := m.text("main h1"); got != "Ada's Books" {
		t.Fatalf("home heading %q", got)
	}
	if !strings.HasSuffix(m.location(), "/dashboard/"+m.biz+"/") {
		t.Fatalf("signed in at %s", m.location())
	}
	m.review("home")
	m.click("details.account-menu summary")
	m.submit("#sign-out")
	if got := m.text("#flash"); got != "You are signed out." {
		t.Fatalf("flash %q", got)
	}
	m.open(m.s.origin + "/dashboard/" + m.biz + "/")
	m.waitURL("/dashboard/sign-in?next=%2Fdashboard%2F" + m.biz + "%2F")
	m.fill("#email", m.email)
	m.fill("#password", "not the password at all")
	m.submit(`#signin-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "The email address or password is not right." {
		t.Fatalf("refusal %q", got)
	}
	m.review("sign-in-refused")
	m.fill("#password", m.pw)
	m.submit(`#signin-form button[type="submit"]`)
	if !strings.HasSuffix(m.location(), "/dashboard/"+m.biz+"/") {
		t.Fatalf("after sign-in at %s", m.location())
	}
	// Another site's form is refused before the API sees it.
	req, _ := http.NewRequest("POST", m.s.origin+"/dashboard/sign-out", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site sign-out: %d", res.StatusCode)
	}
}
