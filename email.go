package payd

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Email from the outbox (DESIGN §7, docs/email.md): an email is a row
// written in the same transaction as the change that needs it, so a
// committed sign-up always gets its code; the outbox loop (package mail)
// claims due rows with a lease, sends them and records the outcome, the
// same way the webhook delivery loop works its queue.

// EmailStatus is where an email stands.
type EmailStatus string

// Email statuses. Pending and retrying emails are in the queue; the other
// three are final.
const (
	// EmailPending has not been tried yet.
	EmailPending EmailStatus = "pending"
	// EmailRetrying failed at least once and another attempt is due.
	EmailRetrying EmailStatus = "retrying"
	// EmailSent was accepted by the mail server.
	EmailSent EmailStatus = "sent"
	// EmailKept was kept instead of sent: development mode (--dev), where
	// GET /devnet/emails shows it.
	EmailKept EmailStatus = "kept"
	// EmailFailed was given up after the last attempt of the schedule.
	EmailFailed EmailStatus = "failed"
)

// EmailLease is how long a claimed email is held before another replica
// may send it: well past the SMTP sender's timeouts (a dial and a send of
// one batch), so a holder still sending is never doubled, and a crashed
// holder's claim lapses within two minutes.
const EmailLease = 2 * time.Minute

// Limits of an email's fields, checked by NewEmail. The bodies are bounded
// so one row can never grow the outbox without limit; payd's own emails
// are a few kilobytes.
const (
	MaxEmailSubject = 200
	MaxEmailBody    = 256 << 10
	MaxEmailKind    = 64
	MaxEmailError   = 500
)

// Email is one email in the outbox.
type Email struct {
	ID string
	// To is one plain address (ada@example.com), as the caller gave it.
	To      string
	Subject string
	// Text is the plain-text body; HTML the HTML alternative, which may be
	// empty (the email is then text alone). Both are cleared once the
	// email is sent or has failed (Scrub): they carry sign-in codes and
	// reset links, which the database must not keep in plain text longer
	// than it takes to send them.
	Text string
	HTML string
	// Kind says what the email is for (signup_code, password_reset, …),
	// for logs and the operator; the outbox treats every kind alike.
	Kind   string
	Status EmailStatus
	// Attempts counts the sending attempts made.
	Attempts int
	// NextAttemptAt is when the outbox sends it next; nil once final.
	NextAttemptAt *time.Time
	// LeaseUntil is when a claim on it lapses; nil when nobody holds it.
	LeaseUntil *time.Time
	// Version counts every write, so a holder whose lease lapsed and was
	// taken over cannot overwrite the new holder's result.
	Version int
	// SentAt is when the server accepted it (or it was kept).
	SentAt *time.Time
	// LastError is why the last attempt failed, credentials never included.
	LastError string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewEmail returns a pending email due at now, after checking its fields:
// to a plain address, a one-line subject of 1 to MaxEmailSubject
// characters, a text body of 1 to MaxEmailBody bytes and an HTML body of
// at most as many, valid UTF-8 throughout, and a kind of 1 to MaxEmailKind
// lower-case letters, digits and '_'. Errors are invalid_request naming
// the field.
func NewEmail(to, subject, text, html, kind string, now time.Time) (*Email, error) {
	if err := CheckEmail("to", to); err != nil {
		return nil, err
	}
	if strings.TrimSpace(subject) == "" {
		return nil, FieldError("subject", "subject is required")
	}
	if err := CheckText("subject", subject, MaxEmailSubject, false); err != nil {
		return nil, err
	}
	if err := checkBody("text", text, true); err != nil {
		return nil, err
	}
	if err := checkBody("html", html, false); err != nil {
		return nil, err
	}
	if !validKind(kind) {
		return nil, FieldError("kind", "kind must be 1 to %d lower-case letters, digits or '_'", MaxEmailKind)
	}
	due := now
	return &Email{ID: NewID(PrefixEmail), To: to, Subject: subject, Text: text, HTML: html, Kind: kind,
		Status: EmailPending, NextAttemptAt: &due, CreatedAt: now, UpdatedAt: now}, nil
}

// checkBody checks a body: valid UTF-8 of at most MaxEmailBody bytes, and
// not empty when required.
func checkBody(field, s string, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return FieldError(field, "%s is required", field)
	case len(s) > MaxEmailBody:
		return FieldError(field, "%s is longer than %d bytes", field, MaxEmailBody)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return FieldError(field, "%s must be valid UTF-8 without NUL", field)
	}
	return nil
}

// validKind reports whether k is 1 to MaxEmailKind of [a-z0-9_].
func validKind(k string) bool {
	if k == "" || len(k) > MaxEmailKind {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Final reports whether the email is out of the queue for good.
func (e *Email) Final() bool {
	return e.Status == EmailSent || e.Status == EmailKept || e.Status == EmailFailed
}

// Sent records that the server accepted the email at now: it leaves the
// queue and its bodies are scrubbed.
func (e *Email) Sent(now time.Time) {
	e.Attempts++
	e.Status, e.SentAt, e.LastError = EmailSent, &now, ""
	e.end(now)
	e.Scrub()
}

// Kept records that the email was kept instead of sent (development
// mode): it leaves the queue with its bodies, which GET /devnet/emails
// shows.
func (e *Email) Kept(now time.Time) {
	e.Status, e.SentAt = EmailKept, &now
	e.end(now)
}

// Failed records a failed attempt that ended at now: retrying at the
// policy's next time, or failed for good (bodies scrubbed) when the policy
// has none. reason is kept as LastError, cut to MaxEmailError bytes; it
// must not hold credentials (the SMTP sender's errors never do).
func (e *Email) Failed(reason string, now time.Time, policy RetryPolicy) {
	e.Attempts++
	e.LastError = truncateUTF8(reason, MaxEmailError)
	e.LeaseUntil, e.UpdatedAt = nil, now
	if next, ok := policy(e.Attempts, now); ok {
		e.Status, e.NextAttemptAt = EmailRetrying, &next
		return
	}
	e.Status = EmailFailed
	e.end(now)
	e.Scrub()
}

// Release hands a claimed email back unattempted, due at now: an attempt
// cut short by a shutdown says nothing of the server and must not use up
// one of the schedule's attempts, nor wait for its lease to lapse.
func (e *Email) Release(now time.Time) {
	e.NextAttemptAt, e.LeaseUntil, e.UpdatedAt = &now, nil, now
}

// end takes the email out of the queue.
func (e *Email) end(now time.Time) {
	e.NextAttemptAt, e.LeaseUntil, e.UpdatedAt = nil, nil, now
}

// Scrub clears the bodies, keeping the envelope (to, subject, kind) as the
// record of what went out.
func (e *Email) Scrub() { e.Text, e.HTML = "", "" }

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// EmailStore keeps the outbox. Emails belong to no business: they go to
// people (sign-up, sign-in, resets), who may belong to several.
type EmailStore interface {
	// CreateEmail stores a new email. Call it in the transaction of the
	// change that needs the email, so that both commit or neither does.
	// conflict if the id is taken.
	CreateEmail(ctx context.Context, e *Email) error
	// ClaimDueEmails leases up to limit emails whose next attempt is due at
	// now and whose lease is free, until until, oldest due first; any
	// number of replicas may claim at once and each email goes to one of
	// them. A claimed email is due again at until, so that a crashed
	// holder's email is claimed again once its lease lapses. Each comes
	// back with the version its holder must save with.
	ClaimDueEmails(ctx context.Context, now, until time.Time, limit int) ([]*Email, error)
	// SaveEmail writes e's state (after Sent, Kept or Failed) if its stored
	// version is still e.Version (the claim's), then counts e.Version on;
	// conflict when the lease was lost to another holder, not_found when
	// there is no such email.
	SaveEmail(ctx context.Context, e *Email) error
	// EmailByID returns the email; not_found otherwise.
	EmailByID(ctx context.Context, id string) (*Email, error)
	// ListEmails returns up to limit emails to the address to, matched in
	// any case (EmailKey), newest first (created_at, then id, descending),
	// whatever their status: the development listing shows an email as
	// soon as it is committed, before the outbox has kept it.
	ListEmails(ctx context.Context, to string, limit int) ([]*Email, error)
	// CountEmails counts the emails of the given kinds to the address
	// (any case) created at or after since: the quotas of spec 8.3.
	CountEmails(ctx context.Context, to string, kinds []string, since time.Time) (int, error)
}
