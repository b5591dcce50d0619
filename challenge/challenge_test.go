package challenge

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"payd"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Config
		ok   bool
	}{
		{"none", Config{Provider: ProviderNone}, true},
		{"turnstile:1x0000000000000000000000000000000AA", Config{ProviderTurnstile, "1x0000000000000000000000000000000AA"}, true},
		{"hcaptcha:0x0000000000000000000000000000000000000000", Config{ProviderHCaptcha, "0x0000000000000000000000000000000000000000"}, true},
		{"turnstile:a:b", Config{ProviderTurnstile, "a:b"}, true},
		{"", Config{}, false},
		{"None", Config{}, false},
		{"none:", Config{}, false},
		{"turnstile", Config{}, false},
		{"turnstile:", Config{}, false},
		{"recaptcha:abc", Config{}, false},
		{"Turnstile:abc", Config{}, false},
		{"turnstile:ab c", Config{}, false},
		{"turnstile:abc\n", Config{}, false},
		{"hcaptcha:sécret", Config{}, false},
		{"turnstile:" + strings.Repeat("a", maxSecret+1), Config{}, false},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil {
			var pe *payd.Error
			if payd.ErrorCode(err) != payd.ErrInvalidRequest || !asField(err, &pe, "challenge") {
				t.Errorf("Parse(%q) error = %v, want invalid_request on challenge", tt.in, err)
			}
		}
	}
}

func asField(err error, pe **payd.Error, field string) bool {
	e, ok := err.(*payd.Error)
	*pe = e
	return ok && e.Field == field
}

func TestConfigStringHidesSecret(t *testing.T) {
	c := Config{Provider: ProviderTurnstile, Secret: testSecret}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v", c)} {
		if strings.Contains(s, testSecret) {
			t.Fatalf("%q shows the secret", s)
		}
	}
}

func TestNew(t *testing.T) {
	for _, in := range []string{"none", "turnstile:s", "hcaptcha:s"} {
		c, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := New(c, Options{})
		if err != nil || ch == nil {
			t.Fatalf("New(%v) = %v, %v", c, ch, err)
		}
	}
	if err := (None{}).Verify(context.Background(), payd.ChallengeSignup, "", ""); err != nil {
		t.Fatalf("None refused: %v", err)
	}
	if _, err := New(Config{Provider: "dev"}, Options{}); err == nil {
		t.Fatal("New(dev) made a challenger: --dev makes its own with NewDev")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "turnstile:1x0000000000000000000000000000000AA", "hcaptcha:0x00", "turnstile:",
		"hcaptcha", ":", "none:x", "turnstile:a b", "turnstile:\x00", "hcaptcha:ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if c != (Config{}) {
				t.Fatalf("Parse(%q) failed but returned %+v", s, c)
			}
			// The message never depends on what followed the colon beyond
			// its length and kinds of byte: the secret is not in it.
			if name, secret, ok := strings.Cut(s, ":"); ok {
				masked := []byte(secret)
				for i, c := range masked {
					if c > ' ' && c <= '~' {
						masked[i] = 'a'
					}
				}
				if _, err2 := Parse(name + ":" + string(masked)); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("Parse(%q) error %q differs for another secret: %v", s, err, err2)
				}
			}
			return
		}
		switch c.Provider {
		case ProviderNone:
			if s != "none" || c.Secret != "" {
				t.Fatalf("Parse(%q) = %+v", s, c)
			}
		case ProviderTurnstile, ProviderHCaptcha:
			if c.Provider+":"+c.Secret != s || c.Secret == "" || len(c.Secret) > maxSecret {
				t.Fatalf("Parse(%q) = %+v", s, c)
			}
			for _, r := range c.Secret {
				if r <= ' ' || r > '~' {
					t.Fatalf("Parse(%q) kept secret byte %q", s, r)
				}
			}
			if c.String() != c.Provider+":[redacted]" {
				t.Fatalf("String of %q shows the secret", s)
			}
			// Parsing is stable on the value a config would be written as.
			if again, err := Parse(c.Provider + ":" + c.Secret); err != nil || again != c {
				t.Fatalf("Parse round trip of %q = %+v, %v", s, again, err)
			}
		default:
			t.Fatalf("Parse(%q) = unknown provider %q", s, c.Provider)
		}
	})
}
