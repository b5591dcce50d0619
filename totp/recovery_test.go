package totp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"payd/totp"
)

var recoveryShape = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$`)

func TestNewRecoveryCodes(t *testing.T) {
	plain, hashes := totp.NewRecoveryCodes()
	if len(plain) != 10 || len(hashes) != 10 {
		t.Fatalf("%d codes, %d hashes", len(plain), len(hashes))
	}
	seen := map[string]bool{}
	for i, p := range plain {
		if !recoveryShape.MatchString(p) {
			t.Errorf("code %q", p)
		}
		// Stored as SHA-256 hex of the 10 characters without the dash.
		sum := sha256.Sum256([]byte(strings.ReplaceAll(p, "-", "")))
		if hashes[i] != hex.EncodeToString(sum[:]) {
			t.Errorf("hash %d of %q: %s", i, p, hashes[i])
		}
		if h, ok := totp.HashRecoveryCode(p); !ok || h != hashes[i] {
			t.Errorf("HashRecoveryCode(%q) = %q, %v", p, h, ok)
		}
		if seen[p] {
			t.Errorf("code %q twice", p)
		}
		seen[p] = true
	}
	again, _ := totp.NewRecoveryCodes()
	if again[0] == plain[0] {
		t.Fatal("two sets alike")
	}
}

// TestRecoveryAlphabet checks that every letter of the alphabet turns up
// and none other, over enough codes that a missing one would be noticed.
func TestRecoveryAlphabet(t *testing.T) {
	count := map[rune]int{}
	for range 100 {
		plain, _ := totp.NewRecoveryCodes()
		for _, p := range plain {
			for _, c := range strings.ReplaceAll(p, "-", "") {
				count[c]++
			}
		}
	}
	// 10,000 characters over 32 letters: about 312 each.
	if len(count) != 32 {
		t.Fatalf("%d letters used: %v", len(count), count)
	}
	for c, n := range count {
		if strings.ContainsRune("ilou", c) || n < 200 || n > 450 {
			t.Errorf("letter %q: %d times", c, n)
		}
	}
}

func TestMatchRecoveryCode(t *testing.T) {
	// Fixed codes, as a person would type them back.
	codes := []string{"7k3qd-x9m2a", "00011-abcde", "vwxyz-56789"}
	hashes := make([]string, len(codes))
	for i, c := range codes {
		h, ok := totp.HashRecoveryCode(c)
		if !ok {
			t.Fatalf("HashRecoveryCode(%q)", c)
		}
		hashes[i] = h
	}
	for in, want := range map[string]int{
		"7k3qd-x9m2a":                           0,
		"7K3QD-X9M2A":                           0,
		" 7k3qd x9m2a ":                         0,
		"7k3qdx9m2a":                            0,
		"7-k-3-q-d-x-9-m-2":                     -1,
		"OO0iL-ABCDE":                           1, // o is 0; i and l are 1
		"ooo11abcde":                            1,
		"VWXYZ-56789":                           2,
		"vwxyz-56788":                           -1,
		"vwxyz-5678":                            -1,
		"vwxyz-567899":                          -1,
		"uwxyz-56789":                           -1, // u is no letter of the alphabet
		"vwxyz–56789":                           -1, // an en dash is not a dash
		"vwxyz-5678\u212a":                      -1, // the Kelvin sign does not fold to k
		"":                                      -1,
		strings.Repeat(" ", 70) + "vwxyz-56789": -1,
	} {
		i, ok := totp.MatchRecoveryCode(hashes, in)
		if i != want || ok != (want >= 0) {
			t.Errorf("MatchRecoveryCode(%q) = %d, %v; want %d", in, i, ok, want)
		}
	}
	// A spent code (its hash blanked) no longer matches; the others do.
	spent := append([]string(nil), hashes...)
	spent[1] = ""
	if i, ok := totp.MatchRecoveryCode(spent, "00011-abcde"); ok {
		t.Errorf("a spent code matched at %d", i)
	}
	if i, ok := totp.MatchRecoveryCode(spent, "vwxyz-56789"); !ok || i != 2 {
		t.Errorf("after spending one: %d, %v", i, ok)
	}
	if _, ok := totp.MatchRecoveryCode(nil, "vwxyz-56789"); ok {
		t.Error("matched in no codes")
	}
	// The first of two equal hashes is the one matched.
	if i, ok := totp.MatchRecoveryCode([]string{hashes[2], hashes[2]}, "vwxyz-56789"); !ok || i != 0 {
		t.Errorf("duplicate hashes: %d, %v", i, ok)
	}
}

func FuzzNormalizeRecoveryCode(f *testing.F) {
	for _, s := range []string{"7k3qd-x9m2a", "OO0IL-ABCDE", " a b c d e f g h j k ", "uuuuu-uuuuu", "", "----------", "\u212aaaaa-aaaaa"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := totp.NormalizeRecoveryCode(s)
		if !ok {
			if n != "" {
				t.Fatalf("refused %q but returned %q", s, n)
			}
			return
		}
		if len(s) > 64 || len(n) != 10 || !recoveryShape.MatchString(n[:5]+"-"+n[5:]) {
			t.Fatalf("NormalizeRecoveryCode(%q) = %q", s, n)
		}
		// Normalising is idempotent, and the displayed form normalises back.
		for _, again := range []string{n, n[:5] + "-" + n[5:], strings.ToUpper(n)} {
			if m, ok := totp.NormalizeRecoveryCode(again); !ok || m != n {
				t.Fatalf("%q normalised to %q, then %q to %q", s, n, again, m)
			}
		}
		// Only spaces, dashes, case and Crockford's o, i, l were forgiven.
		stripped := strings.NewReplacer(" ", "", "-", "", "o", "0", "i", "1", "l", "1").Replace(asciiLower(s))
		if stripped != n {
			t.Fatalf("NormalizeRecoveryCode(%q) = %q, want %q", s, n, stripped)
		}
	})
}

// asciiLower lowers ASCII letters only.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
