package web

import (
	"net/url"
	"strings"
	"testing"
)

// TestSafeNext keeps the sign-in page's next= on this site's dashboard.
func TestSafeNext(t *testing.T) {
	cases := map[string]string{
		"":                                "/dashboard/",
		"/dashboard/biz_1/payments?q=ada": "/dashboard/biz_1/payments?q=ada",
		"https://evil.example/dashboard/": "/dashboard/",
		"//evil.example/dashboard/":       "/dashboard/",
		"/dashboard\\@evil.example":       "/dashboard/",
		"/dashboard/\r\nSet-Cookie: x=1":  "/dashboard/",
		"/dashboardx":                     "/dashboard/",
		"/l/abc":                          "/dashboard/",
		"/dashboard/../api/v1/api-keys":   "/dashboard/../api/v1/api-keys",
		"javascript:alert(1)//dashboard/": "/dashboard/",
	}
	for in, want := range cases {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSafeNext: whatever next= holds, the browser is sent to a path of
// this origin: a redirect to it resolves against the site, never another.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"", "/dashboard/", "//x", "/dashboard/\\x", "https://x/dashboard/", "/dashboard/%2F%2Fx"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://pay.example/dashboard/sign-in")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if !strings.HasPrefix(got, "/dashboard/") {
			t.Fatalf("safeNext(%q) = %q", next, got)
		}
		u, err := base.Parse(got)
		if err != nil {
			return // the browser cannot follow it either; it stays on this site
		}
		if u.Host != "pay.example" || u.Scheme != "https" {
			t.Fatalf("safeNext(%q) = %q leads to %s", next, got, u)
		}
	})
}

// TestRetryText says a Retry-After in words a person reads.
func TestRetryText(t *testing.T) {
	cases := map[string]string{
		"": "", "x": "", "0": "", "-5": "",
		"1":    " Try again in 1 second.",
		"30":   " Try again in 30 seconds.",
		"89":   " Try again in 89 seconds.",
		"90":   " Try again in 2 minutes.",
		"900":  " Try again in 15 minutes.",
		"3600": " Try again in 60 minutes.",
		"5400": " Try again in 2 hours.",
	}
	for in, want := range cases {
		if got := retryText(in); got != want {
			t.Errorf("retryText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDashErrorText prefers the dashboard's sentence, falls back to the
// API's message, and adds the wait.
func TestDashErrorText(t *testing.T) {
	cases := []struct {
		ae   *apiError
		want string
	}{
		{nil, dashErrors["internal_error"]},
		{&apiError{Code: "invalid_credentials", Message: "email or password is wrong"}, "The email address or password is not right."},
		{&apiError{Code: "too_many_attempts", Message: "x", RetryAfter: "120"}, "Too many tries. Try again in 2 minutes."},
		{&apiError{Code: "link_archived", Message: "the link is archived"}, "The link is archived."},
		{&apiError{Code: "invalid_request", Field: "name", Message: "name must not be empty"}, "Name must not be empty."},
		{&apiError{Code: "odd_code"}, dashErrors["internal_error"]},
	}
	for _, c := range cases {
		if got := dashErrorText(c.ae); got != c.want {
			t.Errorf("dashErrorText(%+v) = %q, want %q", c.ae, got, c.want)
		}
	}
}

// TestNextHref keeps an invitation's token out of the query: it travels
// as the link's fragment, however the page was reached.
func TestNextHref(t *testing.T) {
	cases := []struct{ page, next, want string }{
		{"/dashboard/sign-up", "/dashboard/", "/dashboard/sign-up"},
		{"/dashboard/sign-up", "", "/dashboard/sign-up"},
		{"/dashboard/sign-in", "/dashboard/biz_1/payments?q=a b", "/dashboard/sign-in?next=%2Fdashboard%2Fbiz_1%2Fpayments%3Fq%3Da+b"},
		{"/dashboard/sign-up", "/dashboard/invitations/accept#token=T0k", "/dashboard/sign-up?next=%2Fdashboard%2Finvitations%2Faccept#token=T0k"},
	}
	for _, c := range cases {
		if got := nextHref(c.page, c.next); got != c.want {
			t.Errorf("nextHref(%q, %q) = %q, want %q", c.page, c.next, got, c.want)
		}
	}
	// Rendered, the fragment is still a fragment.
	v, err := loadViews()
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	p := &dashPage{Title: "Sign in", Data: signInPage{Next: "/dashboard/invitations/accept#token=T0k"}}
	if err := v.execute(&buf, "dash/signin.html", "dashlayout", p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `href="/dashboard/sign-up?next=%2fdashboard%2finvitations%2faccept#token=T0k"`) &&
		!strings.Contains(buf.String(), `href="/dashboard/sign-up?next=%2Fdashboard%2Finvitations%2Faccept#token=T0k"`) {
		t.Fatalf("the sign-up link does not keep the token in its fragment:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "%23token") {
		t.Fatal("the token went into a query")
	}
}

// TestParseMinor reads prices as typed, and refuses a decimal comma
// rather than reading "19,99" as 1999.
func TestParseMinor(t *testing.T) {
	cases := []struct {
		in, cur string
		want    int64
		ok      bool
	}{
		{"25", "USD", 2500, true}, {"25.5", "USD", 2550, true}, {" 25.50 ", "USD", 2550, true},
		{"1,250.00", "USD", 125000, true}, {"12,345,678", "USD", 1234567800, true}, {"500", "JPY", 500, true},
		{"19,99", "EUR", 0, false}, {"1,5", "EUR", 0, false}, {"1,2345", "USD", 0, false}, {",100", "USD", 0, false},
		{"25.", "USD", 0, false}, {"25.555", "USD", 0, false}, {"-5", "USD", 0, false}, {"5.5", "JPY", 0, false}, {"", "USD", 0, false},
	}
	for _, c := range cases {
		got, ok := parseMinor(c.in, c.cur)
		if got != c.want || ok != c.ok {
			t.Errorf("parseMinor(%q, %s) = %d, %v; want %d, %v", c.in, c.cur, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParseMinor: a price that is read is never negative, and it is what
// the same digits without their thousands commas say.
func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{"25", "1,250.00", "19,99", "0.01", "999999999999.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseMinor(s, "USD")
		if !ok {
			return
		}
		if n < 0 {
			t.Fatalf("parseMinor(%q) = %d", s, n)
		}
		if m, ok2 := parseMinor(strings.ReplaceAll(s, ",", ""), "USD"); !ok2 || m != n {
			t.Fatalf("parseMinor(%q) = %d but without commas %d, %v", s, n, m, ok2)
		}
	})
}
