package payd

import (
	"strings"
	"testing"
	"time"
)

func TestNewEmail(t *testing.T) {
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	e, err := NewEmail("ada@example.com", "Your code", "Code 123456", "<p>123456</p>", "signup_code", now)
	if err != nil {
		t.Fatal(err)
	}
	if !HasPrefix(e.ID, PrefixEmail) || e.Status != EmailPending || e.NextAttemptAt == nil || !e.NextAttemptAt.Equal(now) ||
		e.Attempts != 0 || e.Final() {
		t.Fatalf("new email %+v", e)
	}
	for _, c := range []struct{ to, subject, text, html, kind, field string }{
		{"Ada <ada@example.com>", "s", "t", "", "k", "to"},
		{"ada@example.com\r\nBcc: eve@example.com", "s", "t", "", "k", "to"},
		{"ada@example.com", "", "t", "", "k", "subject"},
		{"ada@example.com", "a\r\nBcc: eve@example.com", "t", "", "k", "subject"},
		{"ada@example.com", strings.Repeat("s", MaxEmailSubject+1), "t", "", "k", "subject"},
		{"ada@example.com", "s", " ", "", "k", "text"},
		{"ada@example.com", "s", "t\x00", "", "k", "text"},
		{"ada@example.com", "s", "t", "\xff", "k", "html"},
		{"ada@example.com", "s", strings.Repeat("t", MaxEmailBody+1), "", "k", "text"},
		{"ada@example.com", "s", "t", "", "Signup", "kind"},
		{"ada@example.com", "s", "t", "", "", "kind"},
	} {
		_, err := NewEmail(c.to, c.subject, c.text, c.html, c.kind, now)
		if pe, ok := err.(*Error); !ok || pe.Code != ErrInvalidRequest || pe.Field != c.field {
			t.Errorf("NewEmail(%q, %q, …, %q): %v, want invalid_request on %s", c.to, c.subject, c.kind, err, c.field)
		}
	}
}

func TestEmailOutcomes(t *testing.T) {
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	retry := func(n int, last time.Time) (time.Time, bool) { return last.Add(time.Minute), n < 2 }
	e, _ := NewEmail("ada@example.com", "s", "t", "h", "k", now)
	lease := now.Add(time.Minute)
	e.LeaseUntil = &lease
	e.Failed(strings.Repeat("é", MaxEmailError), now, retry)
	if e.Status != EmailRetrying || e.Attempts != 1 || !e.NextAttemptAt.Equal(now.Add(time.Minute)) || e.LeaseUntil != nil ||
		e.Text != "t" || len(e.LastError) > MaxEmailError || !strings.HasPrefix(e.LastError, "é") || strings.ContainsRune(e.LastError, '\uFFFD') {
		t.Fatalf("after one failure: %+v", e)
	}
	e.Failed("again", now.Add(time.Minute), retry)
	if e.Status != EmailFailed || e.NextAttemptAt != nil || e.Text != "" || e.HTML != "" || !e.Final() {
		t.Fatalf("after the last failure: %+v", e)
	}
	s, _ := NewEmail("ada@example.com", "s", "t", "h", "k", now)
	s.Sent(now)
	if s.Status != EmailSent || s.Attempts != 1 || s.SentAt == nil || s.Text != "" || s.NextAttemptAt != nil {
		t.Fatalf("sent: %+v", s)
	}
	k, _ := NewEmail("ada@example.com", "s", "t", "h", "k", now)
	k.Kept(now)
	if k.Status != EmailKept || k.Text != "t" || k.HTML != "h" || k.NextAttemptAt != nil || !k.Final() {
		t.Fatalf("kept: %+v", k)
	}
}
