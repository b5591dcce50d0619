package payd

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheckPassword(t *testing.T) {
	tests := []struct {
		name, password, email string
		want                  string // the message, "" for accepted
	}{
		{"ok", "violet-tram-lantern", "", ""},
		{"ok with email", "violet-tram-lantern", "alice@example.com", ""},
		{"ok exactly 8", "Zq7!vR2m", "", ""},
		{"8 repeated 16 times", strings.Repeat("Zq7!vR2m", 16), "", msgPasswordRepetitive},
		{"ok unicode", "ĉevalo-ŝtupo-ĵurnalo", "", ""},
		{"ok cyrillic", "пароль-синий-трамвай", "", ""},
		{"ok no ascii letters", "東京タワー夜景綺麗", "", ""},
		{"ok 128 runes", "k" + strings.Repeat("Zq7!vR2mX", 14) + "abcdefghi"[:1], "", ""},

		{"empty", "", "", msgPasswordShort},
		{"7", "Zq7!vR2", "", msgPasswordShort},
		{"7 runes 14 bytes", "ĉĉĝĥĵŝŭ", "", msgPasswordShort},
		{"129", "x" + strings.Repeat("Zq7!vR2m", 16), "", msgPasswordLong},
		{"invalid utf-8", "abcdefgh\xff", "", msgPasswordInvalid},

		{"digits only", "83920174", "", msgPasswordNoLetters},
		{"symbols and digits", "8392!#0174", "", msgPasswordNoLetters},

		{"one char", "aaaaaaaaaaaa", "", msgPasswordRepetitive},
		{"pair", "abababab", "", msgPasswordRepetitive},
		{"triple with tail", "xyzxyzxyzx", "", msgPasswordRepetitive},
		{"word twice", "tramlinetramline", "", msgPasswordRepetitive},
		{"sequence", "abcdefghij", "", msgPasswordRepetitive},
		{"descending", "zyxwvutsrq", "", msgPasswordRepetitive},
		{"step two", "acegikmoq", "", msgPasswordRepetitive},
		{"three distinct", "aabbccaabbcacb", "", msgPasswordRepetitive},
		{"mostly one", "aaaaaaaaaXy7!", "", msgPasswordRepetitive},

		{"email local", "alice.smith1", "alice.smith@example.com", msgPasswordEmail},
		{"email case", "Alice.Smith!!", "alice.smith@example.com", msgPasswordEmail},
		{"whole email", "bob@example.com", "bob@example.com", msgPasswordEmail},
		{"domain label", "examplecorp24", "bob@examplecorp.com", msgPasswordEmail},
		{"part of local", "alice.smith.pay", "alice.smith.payments@example.com", msgPasswordEmail},
		{"local plus enough", "alice-violet-tram", "alice@example.com", ""},
		{"short local ignored", "jo-violet-tram", "jo@example.com", ""},

		{"common", "password", "", msgPasswordCommon},
		{"common upper", "PASSWORD", "", msgPasswordCommon},
		{"common mixed", "Baseball", "", msgPasswordCommon},
		{"common with year", "dragon2024", "", msgPasswordCommon},
		{"common wrapped", "1monkey1!", "", msgPasswordCommon},
		{"common listed digits", "1qaz2wsx", "", msgPasswordCommon},
		{"common plus too much", "dragon20241!", "", ""},
		{"common inside", "purple-dragon-tea", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPassword(tt.password, tt.email)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckPassword(%q) = %v, want nil", tt.password, err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != ErrWeakPassword || e.Field != "password" || e.Message != tt.want {
				t.Fatalf("CheckPassword(%q) = %#v, want weak_password %q", tt.password, err, tt.want)
			}
		})
	}
}

func TestCommonList(t *testing.T) {
	set := commonPasswords()
	if len(set) != 10000 {
		t.Errorf("common list holds %d passwords, want 10000", len(set))
	}
	for p := range set {
		if p == "" || p != strings.ToLower(p) || strings.TrimSpace(p) != p {
			t.Errorf("common list entry %q is not a trimmed lower-case word", p)
		}
	}
}

func TestBreachedPassword(t *testing.T) {
	if e := BreachedPassword(); e.Code != ErrWeakPassword || !strings.Contains(e.Message, "breach") {
		t.Errorf("BreachedPassword() = %#v", e)
	}
	if e := InvalidCredentials(); e.Code != ErrInvalidCredentials || e.Field != "" {
		t.Errorf("InvalidCredentials() = %#v", e)
	}
}

// FuzzCheckPassword checks that CheckPassword never panics and that an
// accepted password really passes each rule.
func FuzzCheckPassword(f *testing.F) {
	for _, s := range []string{"violet-tram-lantern", "password", "abababab", "ĉevalo-ŝtupo", "\xff\xfe", "alice.smith1"} {
		f.Add(s, "alice.smith@example.com")
	}
	f.Fuzz(func(t *testing.T, password, email string) {
		err := CheckPassword(password, email)
		if err == nil {
			n := utf8.RuneCountInString(password)
			if !utf8.ValidString(password) || n < MinPasswordLength || n > MaxPasswordLength ||
				!strings.ContainsFunc(password, unicode.IsLetter) || repetitive([]rune(password)) {
				t.Fatalf("accepted %q", password)
			}
			if _, ok := commonPasswords()[strings.ToLower(password)]; ok {
				t.Fatalf("accepted common %q", password)
			}
			return
		}
		if ErrorCode(err) != ErrWeakPassword {
			t.Fatalf("CheckPassword(%q) = %v", password, err)
		}
	})
}
