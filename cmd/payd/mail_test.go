package main

import (
	"strings"
	"testing"

	"payd/clock"
	"payd/store/storetest"
)

// TestNewOutbox checks how --dev, --smtp and --mail-from choose the
// outbox, and that a bad --smtp is refused without quoting its password.
func TestNewOutbox(t *testing.T) {
	db := storetest.OpenSQLite(t)
	log := storetest.Logger(t)
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "keep", "send", "none", or an error's text
	}{
		{"dev", Config{Dev: true, SMTP: "smtp://u:p@mail.example.com:587"}, "keep"},
		{"none", Config{}, "none"},
		{"smtp", Config{SMTP: "smtp://u:p@mail.example.com:587", MailFrom: "payd <no-reply@example.com>"}, "send"},
		{"no from", Config{SMTP: "smtp://u:p@mail.example.com:587"}, "--smtp needs --mail-from"},
		{"no smtp", Config{MailFrom: "no-reply@example.com"}, "--mail-from needs --smtp"},
		{"bad url", Config{SMTP: "smtp://user:Hunter2-secret@mail.example.com:99999", MailFrom: "no-reply@example.com"}, "--smtp: "},
		{"bad from", Config{SMTP: "smtp://u:p@mail.example.com", MailFrom: "nobody"}, "--mail-from: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := newOutbox(&c.cfg, db, clock.Real{}, log)
			switch c.want {
			case "keep", "send":
				if err != nil || o == nil {
					t.Fatalf("newOutbox = %v, %v", o, err)
				}
			case "none":
				if err != nil || o != nil {
					t.Fatalf("newOutbox = %v, %v; want none", o, err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Hunter2") {
					t.Fatalf("newOutbox error %v, want %q without the password", err, c.want)
				}
			}
		})
	}
}
