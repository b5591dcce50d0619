package mail

import (
	"embed"
	htmltemplate "html/template"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"payd"
)

// The bodies of payd's emails (docs/email.md "Templates"). Each kind has
// a text template, templates/KIND.txt, defining "subject" and "text", and
// an HTML one, templates/KIND.html, defining "content" for the shared
// layout. The text body carries each code and link alone on its line, so
// a person, a test or a reader of GET /devnet/emails finds it by line; the
// HTML body escapes everything it shows (html/template) and loads
// nothing: no images, no fonts, no tracking.
//
// The functions below build an outbox email (payd.NewEmail) due at now,
// the service clock's time, which also dates what the email says ("until
// 16:35 UTC"). Their errors are invalid_request: a caller's bug, never the
// recipient's.

// Kinds of email, the payd.Email Kind of each function's email; payd
// names them, since its quotas count some (payd.QuotaEmailKinds).
const (
	KindSignupCode       = payd.EmailSignupCode
	KindAccountExists    = payd.EmailAccountExists
	KindPasswordReset    = payd.EmailPasswordReset
	KindEmailChangeCode  = payd.EmailChangeCode
	KindEmailChangeAlert = payd.EmailChangeAlert
	KindInvitation       = payd.EmailInvitation
)

// ResetValidity is how long a password reset link works (payd.ResetTTL):
// the email says so, and the API enforces it. Emailed codes work for
// payd.CodeTTL (spec 8.1).
const ResetValidity = payd.ResetTTL

//go:embed templates
var templateFiles embed.FS

// bodies are the parsed templates of one kind.
type bodies struct {
	text *template.Template
	html *htmltemplate.Template
}

// templates holds every kind's templates, parsed once; a template that
// does not parse stops the program at start (and every test of mail).
var templates = parseTemplates(KindSignupCode, KindAccountExists, KindPasswordReset, KindEmailChangeCode, KindEmailChangeAlert, KindInvitation)

var funcs = map[string]any{"short": short}

func parseTemplates(kinds ...string) map[string]bodies {
	m := make(map[string]bodies, len(kinds))
	for _, k := range kinds {
		m[k] = bodies{
			text: template.Must(template.New(k).Funcs(funcs).Option("missingkey=error").
				ParseFS(templateFiles, "templates/"+k+".txt", "templates/footer.txt")),
			html: htmltemplate.Must(htmltemplate.New(k).Funcs(funcs).Option("missingkey=error").
				ParseFS(templateFiles, "templates/"+k+".html", "templates/layout.html", "templates/button.html")),
		}
	}
	return m
}

// emailData is what the templates show; each kind uses some of it.
type emailData struct {
	To      string
	Subject string
	// Code is a 6-digit emailed code.
	Code string
	// Link is an absolute http(s) address; Action the words of its button.
	Link   string
	Action string
	// Valid is how long the code or link works ("15 minutes"); Until when
	// it stops ("16:35 UTC"); When is the time of the event, in full.
	Valid, Until, When string
	// NewEmail is the address an account changed to.
	NewEmail string
	// Inviter, Business and Role describe an invitation.
	Inviter, Business, Role string
}

// SignupCode is the email with the 6-digit code that finishes a sign-up,
// valid for payd.CodeTTL from now.
func SignupCode(to, code string, now time.Time) (*payd.Email, error) {
	if err := checkCode(code); err != nil {
		return nil, err
	}
	d := emailData{Code: code}
	d.valid(now, payd.CodeTTL)
	return render(KindSignupCode, to, d, now)
}

// AccountExists answers a sign-up for an address that already has an
// account: instead of a code, a link to sign in (and a reminder that a
// forgotten password can be reset), so the sign-up form never tells
// whether an address has an account.
func AccountExists(to, signInLink string, now time.Time) (*payd.Email, error) {
	if err := payd.CheckRedirectURL("link", signInLink, true); err != nil {
		return nil, err
	}
	return render(KindAccountExists, to, emailData{Link: signInLink, Action: "Sign in"}, now)
}

// PasswordReset is the email with the link that resets a password, valid
// for ResetValidity from now. link is absolute, http(s).
func PasswordReset(to, link string, now time.Time) (*payd.Email, error) {
	if err := payd.CheckRedirectURL("link", link, true); err != nil {
		return nil, err
	}
	d := emailData{Link: link, Action: "Choose a new password"}
	d.valid(now, ResetValidity)
	return render(KindPasswordReset, to, d, now)
}

// EmailChangeCode is the email to the new address of an email change, with
// the 6-digit code that confirms it, valid for payd.CodeTTL from now.
func EmailChangeCode(to, code string, now time.Time) (*payd.Email, error) {
	if err := checkCode(code); err != nil {
		return nil, err
	}
	d := emailData{Code: code}
	d.valid(now, payd.CodeTTL)
	return render(KindEmailChangeCode, to, d, now)
}

// EmailChangeAlert is the email to the old address of an account whose
// email changed at now to newEmail, with the link that undoes the change
// (POST /email-changes/undo). undoLink is absolute, http(s).
func EmailChangeAlert(to, newEmail, undoLink string, now time.Time) (*payd.Email, error) {
	if err := payd.CheckEmail("new_email", newEmail); err != nil {
		return nil, err
	}
	if err := payd.CheckRedirectURL("link", undoLink, true); err != nil {
		return nil, err
	}
	d := emailData{NewEmail: newEmail, Link: undoLink, Action: "Undo the change",
		When: now.UTC().Format("2 January 2006 at 15:04 UTC")}
	return render(KindEmailChangeAlert, to, d, now)
}

// Invitation is the email inviting to into the team of a business: who
// invited them (a name or an address), the business's name, the role
// offered (admin, developer or viewer, as payd.ParseRole takes: owner is
// held, never given) and the link that accepts, which works for
// payd.InvitationTTL.
// The names are shown on one line each, control and direction-changing
// characters replaced by spaces, so that no name can draw a line (a
// false link) of its own in the text body. acceptLink is absolute,
// http(s).
func Invitation(to, inviter, business string, role payd.MemberRole, acceptLink string, now time.Time) (*payd.Email, error) {
	if err := payd.CheckRedirectURL("link", acceptLink, true); err != nil {
		return nil, err
	}
	if _, err := payd.ParseRole(string(role)); err != nil {
		return nil, err
	}
	d := emailData{Inviter: oneLine(inviter), Business: oneLine(business), Role: string(role),
		Link: acceptLink, Action: "Accept the invitation", Valid: validity(payd.InvitationTTL)}
	for field, v := range map[string]string{"inviter": d.Inviter, "business": d.Business} {
		if v == "" {
			return nil, payd.FieldError(field, "%s is required", field)
		}
	}
	return render(KindInvitation, to, d, now)
}

// valid sets how long a code or link works from now, and until when.
func (d *emailData) valid(now time.Time, ttl time.Duration) {
	d.Valid = validity(ttl)
	d.Until = now.Add(ttl).UTC().Format("15:04 UTC")
}

// validity writes ttl for people: "15 minutes", "1 hour", "7 days".
func validity(ttl time.Duration) string {
	if ttl%(24*time.Hour) == 0 {
		return plural(int(ttl/(24*time.Hour)), "day")
	}
	if ttl%time.Hour == 0 {
		return plural(int(ttl/time.Hour), "hour")
	}
	return plural(int(ttl/time.Minute), "minute")
}

func plural(n int, unit string) string {
	s := strconv.Itoa(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

// render executes kind's templates over d and makes the email.
func render(kind, to string, d emailData, now time.Time) (*payd.Email, error) {
	t := templates[kind]
	d.To = to
	var b strings.Builder
	if err := t.text.ExecuteTemplate(&b, "subject", d); err != nil {
		return nil, err
	}
	d.Subject = strings.TrimSpace(b.String())
	b.Reset()
	if err := t.text.ExecuteTemplate(&b, "text", d); err != nil {
		return nil, err
	}
	text := b.String()
	b.Reset()
	if err := t.html.ExecuteTemplate(&b, "layout", d); err != nil {
		return nil, err
	}
	return payd.NewEmail(to, d.Subject, text, b.String(), kind, now)
}

// checkCode refuses anything but the 6 ASCII digits of an emailed code.
func checkCode(code string) error {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return payd.FieldError("code", "an emailed code is 6 digits")
	}
	return nil
}

// maxName bounds a name in a subject, which must stay one short line.
const maxName = 60

// short cuts s to maxName characters, with an ellipsis when cut.
func short(s string) string {
	if utf8.RuneCountInString(s) <= maxName {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:maxName-1])) + "…"
}

// oneLine replaces every run of spaces, control characters and format
// characters (the bidirectional overrides among them) in s with one
// space, and trims it: a name shown in an email stays on its line and
// reads in the order it was typed.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
	}), " ")
}

// Letters writes the account emails for the API (payd.Letters).
type Letters struct{}

// NewLetters returns the account emails' writer.
func NewLetters() Letters { return Letters{} }

// SignupCode: see the package function.
func (Letters) SignupCode(to, code string, now time.Time) (*payd.Email, error) {
	return SignupCode(to, code, now)
}

// AccountExists: see the package function.
func (Letters) AccountExists(to, signInLink string, now time.Time) (*payd.Email, error) {
	return AccountExists(to, signInLink, now)
}

// PasswordReset: see the package function.
func (Letters) PasswordReset(to, link string, now time.Time) (*payd.Email, error) {
	return PasswordReset(to, link, now)
}

// EmailChangeCode: see the package function.
func (Letters) EmailChangeCode(to, code string, now time.Time) (*payd.Email, error) {
	return EmailChangeCode(to, code, now)
}

// EmailChangeAlert: see the package function.
func (Letters) EmailChangeAlert(to, newEmail, undoLink string, now time.Time) (*payd.Email, error) {
	return EmailChangeAlert(to, newEmail, undoLink, now)
}

// Invitation: see the package function.
func (Letters) Invitation(to, inviter, business string, role payd.MemberRole, acceptLink string, now time.Time) (*payd.Email, error) {
	return Invitation(to, inviter, business, role, acceptLink, now)
}
