package mail_test

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/mail"
)

// now is 16:20:30 UTC, so the emails say "until 16:35 UTC" and "17:20 UTC".
var now = time.Date(2026, 11, 25, 16, 20, 30, 0, time.UTC)

// rendered is one email of each kind with the code or link it must carry.
type rendered struct {
	kind   string
	email  func() (*payd.Email, error)
	needle string // the code or link
	says   []string
}

func kinds() []rendered {
	const reset = "https://pay.example.com/dashboard/reset#token=rst_a1b2&next=/home"
	const undo = "https://pay.example.com/dashboard/email-changes/undo#token=und_c3d4"
	const accept = "https://pay.example.com/dashboard/invitations/accept#token=inv_e5f6"
	return []rendered{
		{mail.KindSignupCode, func() (*payd.Email, error) { return mail.SignupCode("ada@example.com", "042917", now) },
			"042917", []string{"15 minutes", "until 16:35 UTC"}},
		{mail.KindAccountExists, func() (*payd.Email, error) {
			return mail.AccountExists("ada@example.com", "https://pay.example.com/dashboard/sign-in", now)
		}, "https://pay.example.com/dashboard/sign-in", []string{"already", "Forgot password"}},
		{mail.KindPasswordReset, func() (*payd.Email, error) { return mail.PasswordReset("ada@example.com", reset, now) },
			reset, []string{"1 hour", "until 17:20 UTC"}},
		{mail.KindEmailChangeCode, func() (*payd.Email, error) { return mail.EmailChangeCode("new@example.com", "900001", now) },
			"900001", []string{"15 minutes", "until 16:35 UTC"}},
		{mail.KindEmailChangeAlert, func() (*payd.Email, error) {
			return mail.EmailChangeAlert("ada@example.com", "new@example.com", undo, now)
		}, undo, []string{"new@example.com", "25 November 2026 at 16:20 UTC"}},
		{mail.KindInvitation, func() (*payd.Email, error) {
			return mail.Invitation("grace@example.com", "Ada Lovelace", "Analytical Engines", "developer", accept, now)
		}, accept, []string{"Ada Lovelace", "Analytical Engines", "developer"}},
	}
}

func TestTemplates(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.kind, func(t *testing.T) {
			e, err := k.email()
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind != k.kind || e.Status != payd.EmailPending || !e.CreatedAt.Equal(now) || e.Subject == "" ||
				!strings.Contains(e.Subject, "payd") {
				t.Fatalf("email %+v", e)
			}
			// The code or link is alone on a line of the text body, and in
			// the HTML body (a link in its href and shown, escaped).
			if !slices.Contains(strings.Split(e.Text, "\n"), k.needle) {
				t.Errorf("text has no line %q:\n%s", k.needle, e.Text)
			}
			escaped := html.EscapeString(k.needle)
			if n := strings.Count(e.HTML, escaped); n == 0 || strings.HasPrefix(k.needle, "https:") &&
				(n != 2 || !strings.Contains(e.HTML, `href="`+escaped+`"`)) {
				t.Errorf("HTML shows %q %d times:\n%s", escaped, n, e.HTML)
			}
			for _, s := range append(k.says, e.To) {
				if !strings.Contains(e.Text, s) || !strings.Contains(e.HTML, html.EscapeString(s)) {
					t.Errorf("a body does not say %q", s)
				}
			}
			checkHTML(t, e.HTML)
			if !strings.Contains(e.HTML, "<title>"+html.EscapeString(e.Subject)+"</title>") {
				t.Errorf("HTML title is not the subject %q", e.Subject)
			}
			// Every text line fits a mail client's 78 columns, but for a
			// line that is only a link.
			for _, l := range strings.Split(e.Text, "\n") {
				if len(l) > 78 && l != k.needle {
					t.Errorf("text line of %d: %q", len(l), l)
				}
			}
		})
	}
}

// checkHTML refuses what payd's emails never hold: anything fetched when
// the email is opened, scripts and styles a client would strip.
func checkHTML(t *testing.T, h string) {
	t.Helper()
	if !strings.HasPrefix(h, "<!DOCTYPE html>") {
		t.Errorf("HTML starts %.30q", h)
	}
	for _, bad := range []string{"<img", "src=", "url(", "<script", "<link", "<style", "@import", "<iframe", "ZgotmplZ"} {
		if strings.Contains(strings.ToLower(h), strings.ToLower(bad)) {
			t.Errorf("HTML holds %q", bad)
		}
	}
}

func TestTemplatesEscape(t *testing.T) {
	inviter := `Eve <script>alert("x")</script> & co`
	business := "Acme <b>Bold</b>\n\nhttps://evil.example/steal\u202e"
	link := `https://pay.example.com/accept?token=inv_1&x="><script>`
	e, err := mail.Invitation("grace@example.com", inviter, business, "admin", link, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"<script>", "<b>", `"><script`} {
		if strings.Contains(e.HTML, raw) {
			t.Errorf("HTML holds %q unescaped:\n%s", raw, e.HTML)
		}
	}
	for _, want := range []string{"Eve &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co", "Acme &lt;b&gt;Bold&lt;/b&gt; https://evil.example/steal"} {
		if !strings.Contains(e.HTML, want) {
			t.Errorf("HTML lacks %q:\n%s", want, e.HTML)
		}
	}
	// The href keeps the link, percent-encoded where it must be.
	if !strings.Contains(e.HTML, `href="https://pay.example.com/accept?token=inv_1&amp;x=%22%3e%3cscript%3e"`) {
		t.Errorf("href:\n%s", e.HTML)
	}
	// The plain text keeps names as typed but on one line: the business's
	// line break and its right-to-left override are gone, so the only
	// line that is a link is the real one.
	lines := strings.Split(e.Text, "\n")
	if slices.Contains(lines, "https://evil.example/steal") || !slices.Contains(lines, link) ||
		strings.ContainsRune(e.Text, '\u202e') || !strings.Contains(e.Text, "Acme <b>Bold</b> https://evil.example/steal") {
		t.Errorf("text:\n%s", e.Text)
	}
	if strings.ContainsAny(e.Subject, "\n\r") {
		t.Errorf("subject %q", e.Subject)
	}
}

func TestTemplatesLongNames(t *testing.T) {
	long := strings.Repeat("Ä", 300)
	e, err := mail.Invitation("grace@example.com", long, long, "viewer", "https://pay.example.com/a", now)
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(e.Subject)); n > 150 || !strings.Contains(e.Subject, "…") {
		t.Errorf("subject of %d characters: %q", n, e.Subject)
	}
	if !strings.Contains(e.Text, long) {
		t.Error("the body does not show the full name")
	}
}

func TestTemplatesRefuse(t *testing.T) {
	for name, f := range map[string]func() (*payd.Email, error){
		"short code":       func() (*payd.Email, error) { return mail.SignupCode("a@example.com", "12345", now) },
		"letters":          func() (*payd.Email, error) { return mail.EmailChangeCode("a@example.com", "12345a", now) },
		"non-ASCII digits": func() (*payd.Email, error) { return mail.SignupCode("a@example.com", "١٢٣٤٥٦", now) },
		"javascript link": func() (*payd.Email, error) {
			return mail.PasswordReset("a@example.com", "javascript:alert(1)", now)
		},
		"relative link": func() (*payd.Email, error) { return mail.PasswordReset("a@example.com", "/reset?t=1", now) },
		"bad address":   func() (*payd.Email, error) { return mail.SignupCode("not an address", "123456", now) },
		"bad new email": func() (*payd.Email, error) {
			return mail.EmailChangeAlert("a@example.com", "x", "https://p.example/u", now)
		},
		"no inviter": func() (*payd.Email, error) {
			return mail.Invitation("a@example.com", " \n", "Acme", "admin", "https://p.example/a", now)
		},
		"no business": func() (*payd.Email, error) {
			return mail.Invitation("a@example.com", "Ada", "", "admin", "https://p.example/a", now)
		},
		"undo in a data": func() (*payd.Email, error) {
			return mail.EmailChangeAlert("a@example.com", "b@example.com", "data:text/html,x", now)
		},
	} {
		if e, err := f(); err == nil || payd.ErrorCode(err) != payd.ErrInvalidRequest {
			t.Errorf("%s: %v, %v", name, e, err)
		}
	}
}

func ExampleSignupCode() {
	e, err := mail.SignupCode("ada@example.com", "042917", time.Date(2026, 11, 25, 16, 20, 30, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Subject)
	fmt.Println()
	fmt.Print(e.Text)
	// Output:
	// Your payd sign-up code
	//
	// Here is the code to finish signing up for payd:
	//
	// 042917
	//
	// Enter it on the sign-up page. It works for 15 minutes, until 16:35 UTC.
	//
	// If you did not sign up for payd, you can ignore this email: no account
	// is made without the code.
	//
	// --
	// Sent by payd to ada@example.com.
}
