package mail

import (
	"strings"
	"testing"
	"time"

	"github.com/wneessen/go-mail/smtp"
)

func TestParseSMTPURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want SMTPConfig
		err  string
	}{
		{in: "smtp://u%40x.com:p%3Aw%2Fd%40@mail.example.com:2525",
			want: SMTPConfig{Host: "mail.example.com", Port: 2525, Username: "u@x.com", Password: "p:w/d@"}},
		{in: "smtp://mail.example.com", want: SMTPConfig{Host: "mail.example.com", Port: 587}},
		{in: "SMTPS://u:p@mail.example.com/", want: SMTPConfig{Host: "mail.example.com", Port: 465, Username: "u", Password: "p", ImplicitTLS: true}},
		{in: "smtp://u:p@[::1]:25", want: SMTPConfig{Host: "::1", Port: 25, Username: "u", Password: "p"}},
		{in: "mail.example.com:25", err: "must look like"},
		{in: "http://mail.example.com", err: "scheme"},
		{in: "smtp://:25", err: "no host"},
		{in: "smtp://u:p@h:0", err: "port"},
		{in: "smtp://u:p@h:70000", err: "port"},
		{in: "smtp://u:p@h:25/x", err: "nothing after"},
		{in: "smtp://u:p@h:25?tls=no", err: "nothing after"},
		{in: "smtp://u:p@h:25#f", err: "nothing after"},
		{in: "smtp://u@h:25", err: "both"},
		{in: "smtp://:p@h:25", err: "both"},
		{in: "smtp://u:p%zz@h:25", err: "malformed"},
		{in: "smtp://u:p@ss@h:x", err: "malformed"},
	} {
		got, err := ParseSMTPURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSMTPURL(%q) = %+v, %v; want an error saying %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSMTPURL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestSMTPConfigString(t *testing.T) {
	c := SMTPConfig{Host: "mail.example.com", Port: 465, Username: "user", Password: "secret", ImplicitTLS: true}
	if s := c.String(); s != "smtps://xxxxx:xxxxx@mail.example.com:465" {
		t.Fatalf("String() = %s", s)
	}
}

// FuzzParseSMTPURL: the parser never panics, never quotes the URL in an
// error (it holds the password), and what it accepts survives a round
// trip through the URL it describes.
func FuzzParseSMTPURL(f *testing.F) {
	for _, s := range []string{"smtp://u:p@h:25", "smtps://u%40x:p%3A@[::1]:465/", "smtp://h", "smtp://u:p@h:x",
		"smtp://u:p@h:25?q#f", "smtp://%zz@h", "smtp://u:p@@h", "smtp://u:pass@ho st:25", "SMTP://H:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseSMTPURL(s)
		if err != nil {
			if len(s) > 12 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error quotes the URL: %v", err)
			}
			return
		}
		if c.Host == "" || c.Port < 1 || c.Port > 65535 || (c.Username == "") != (c.Password == "") {
			t.Fatalf("accepted %q as %+v", s, c)
		}
		back := c.String()
		if c.Username != "" {
			back = strings.Replace(back, "xxxxx:xxxxx@", urlUser(c)+"@", 1)
		}
		again, err := ParseSMTPURL(back)
		if err != nil || again != c {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, c, back, again, err)
		}
	})
}

// urlUser is c's user name and password as a URL writes them.
func urlUser(c SMTPConfig) string {
	return escape(c.Username) + ":" + escape(c.Password)
}

// escape percent-encodes every byte but letters and digits.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' {
			b.WriteByte(ch)
			continue
		}
		b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[ch>>4])+string("0123456789abcdef"[ch&15])))
	}
	return b.String()
}

// TestAuthRefusedInTheClear: a password is never sent over a connection
// without TLS to a host that is not loopback, whatever the server offers;
// on loopback, or over TLS, PLAIN is preferred and LOGIN taken when alone.
func TestAuthRefusedInTheClear(t *testing.T) {
	for _, c := range []struct {
		host  string
		tls   bool
		mechs []string
		want  string // mechanism, or "" for a refusal
	}{
		{"mail.example.com", false, []string{"PLAIN", "LOGIN"}, ""},
		{"192.0.2.1", false, []string{"PLAIN"}, ""},
		{"mail.example.com", true, []string{"LOGIN", "PLAIN"}, "PLAIN"},
		{"mail.example.com", true, []string{"login"}, "LOGIN"},
		{"mail.example.com", true, []string{"CRAM-MD5"}, ""},
		{"127.0.0.1", false, []string{"PLAIN"}, "PLAIN"},
		{"127.0.0.2", false, []string{"PLAIN"}, "PLAIN"},
		{"::1", false, []string{"LOGIN"}, "LOGIN"},
		{"localhost", false, []string{"PLAIN"}, "PLAIN"},
	} {
		a := &auth{user: "u", pass: "p", host: c.host}
		mech, resp, err := a.Start(&smtp.ServerInfo{Name: c.host, TLS: c.tls, Auth: c.mechs})
		if c.want == "" {
			if err == nil {
				t.Errorf("%s tls=%v %v: started %s, want a refusal", c.host, c.tls, c.mechs, mech)
			}
			if strings.Contains(string(resp), "p") {
				t.Errorf("%s: the refusal sent the password", c.host)
			}
			continue
		}
		if err != nil || mech != c.want {
			t.Errorf("%s tls=%v %v: %s, %v; want %s", c.host, c.tls, c.mechs, mech, err, c.want)
		}
	}
}

func TestNextAttempt(t *testing.T) {
	var total, prev = RetryDelays[0] * 0, RetryDelays[0] * 0
	for n := 1; n < MaxAttempts; n++ {
		d := RetryDelays[n-1]
		if d <= prev {
			t.Fatalf("delay %d (%s) does not grow", n, d)
		}
		prev, total = d, total+d
	}
	if len(RetryDelays) != MaxAttempts-1 {
		t.Fatalf("%d delays for %d attempts", len(RetryDelays), MaxAttempts)
	}
	if total.String() != "5h22m40s" {
		t.Fatalf("the schedule spans %s", total)
	}
	if _, ok := NextAttempt(MaxAttempts, t0()); ok {
		t.Fatal("an attempt after the last")
	}
	if _, ok := NextAttempt(0, t0()); ok {
		t.Fatal("an attempt after attempt 0")
	}
	if next, ok := NextAttempt(1, t0()); !ok || next.Sub(t0()) != RetryDelays[0] {
		t.Fatalf("after the first: %v", next)
	}
}

func t0() time.Time { return time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC) }
