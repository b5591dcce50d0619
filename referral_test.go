package payd

import (
	"strings"
	"testing"
)

func TestReferralCode(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := NewReferralCode()
		if n, ok := NormalizeReferralCode(c); !ok || n != c || seen[c] {
			t.Fatalf("NewReferralCode() = %q: normalises to %q, %v; or repeats", c, n, ok)
		}
		seen[c] = true
	}
	for in, want := range map[string]string{
		"ab2c-de3f": "AB2CDE3F", " AB2C DE3F ": "AB2CDE3F", "zzzzzzzz": "ZZZZZZZZ",
		"AB2CDE3": "", "AB2CDE3FG": "", "AB0CDE3F": "", "AB1CDE3F": "", "ABOCDE3F": "", "ABICDE3F": "",
		"ABLCDE3F": "", "ABUCDE3F": "", "AB2CDE3F\x00": "", "ÄB2CDE3F": "", "": "",
	} {
		got, ok := NormalizeReferralCode(in)
		if ok != (want != "") || ok && got != want {
			t.Errorf("NormalizeReferralCode(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// FuzzNormalizeReferralCode: a code that is accepted is exactly
// ReferralCodeLength characters of the alphabet and normalises to itself.
func FuzzNormalizeReferralCode(f *testing.F) {
	for _, s := range []string{"AB2C-DE3F", "ab2cde3f", "", "0000", "ÄÖÜ", strings.Repeat("2", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := NormalizeReferralCode(s)
		if !ok {
			return
		}
		if len(got) != ReferralCodeLength || strings.Trim(got, ReferralAlphabet) != "" {
			t.Fatalf("NormalizeReferralCode(%q) = %q", s, got)
		}
		if again, ok := NormalizeReferralCode(got); !ok || again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
	})
}
