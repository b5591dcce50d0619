package payd

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Password length bounds, counted in Unicode code points (runes), because a
// person counts the characters they typed, not bytes. docs/passwords.md
// explains the choice.
const (
	// MinPasswordLength is OWASP ASVS 5's floor (6.2.1). A longer minimum
	// would mostly push people to pad; the common list, the repetition
	// rules, the optional breach check, argon2id and the per-email locks of
	// spec 8.3 do the rest.
	MinPasswordLength = 8
	// MaxPasswordLength leaves room for any passphrase (ASVS asks that at
	// least 64 be allowed) while bounding the work one request can ask
	// of the hasher: 128 runes are at most 512 bytes.
	MaxPasswordLength = 128
)

// The messages of weak_password, one per rule, so the person learns which
// rule failed (spec 7.6).
const (
	msgPasswordInvalid    = "password is not valid UTF-8 text"
	msgPasswordShort      = "password is too short: use at least 8 characters"
	msgPasswordLong       = "password is too long: use at most 128 characters"
	msgPasswordNoLetters  = "password has no letters: include at least one letter"
	msgPasswordRepetitive = "password is too repetitive: avoid repeated characters, repeated parts and sequences such as abcd or 4321"
	msgPasswordEmail      = "password is too repetitive: it is mostly your email address"
	msgPasswordCommon     = "password is too common: it is among the most used passwords"
	msgPasswordBreached   = "password was found in a data breach: choose another"
)

// CheckPassword applies payd's strength rules to a new password and
// returns a weak_password *Error naming the first rule it breaks, or nil.
// The rules run in order: length (too short, too long), no letters, too
// repetitive (one character or a short part repeated, a sequence, fewer
// than four different characters, or mostly the email address) and too
// common (among the 10,000 most used passwords, compared case-insensitively,
// also with up to four digits or symbols added around it). email may be
// empty.
//
// CheckPassword works on the string as given. The hasher (package password)
// normalises to NFKC before hashing; callers check the normalised string
// (password.Normalize) so the rules see what is stored. The root package
// does not normalise itself because it imports only the standard library,
// which has no Unicode normalisation.
func CheckPassword(password, email string) error {
	if msg := passwordRule(password, email); msg != "" {
		return &Error{Code: ErrWeakPassword, Field: "password", Message: msg}
	}
	return nil
}

// BreachedPassword is the weak_password error for a password a breach
// corpus knows (Have I Been Pwned, when configured).
func BreachedPassword() *Error {
	return &Error{Code: ErrWeakPassword, Field: "password", Message: msgPasswordBreached}
}

// InvalidCredentials is sign-in's one refusal, the same words for a wrong
// password, an unknown email and an account without a password, so the
// answer tells nobody which it was (spec 7.6). It names no field for the
// same reason.
func InvalidCredentials() *Error {
	return &Error{Code: ErrInvalidCredentials, Message: "the email or password is not right"}
}

// passwordRule returns the message of the first rule password breaks, or "".
func passwordRule(password, email string) string {
	if !utf8.ValidString(password) {
		return msgPasswordInvalid
	}
	runes := []rune(password)
	switch {
	case len(runes) < MinPasswordLength:
		return msgPasswordShort
	case len(runes) > MaxPasswordLength:
		return msgPasswordLong
	case !strings.ContainsFunc(password, unicode.IsLetter):
		return msgPasswordNoLetters
	case repetitive(runes):
		return msgPasswordRepetitive
	case mostlyEmail(strings.ToLower(password), strings.ToLower(email)):
		return msgPasswordEmail
	case common(strings.ToLower(password)):
		return msgPasswordCommon
	}
	return ""
}

// repetitive reports whether r is one short part repeated (its smallest
// period is at most half its length: aaaaaaaa, abcabcab,
// passwordpassword), a sequence with a constant step (abcdefgh, 97531),
// has fewer than four different characters, or is more than half one
// character. Each leaves far fewer guesses than its length suggests.
func repetitive(r []rune) bool {
	return period(r) <= len(r)/2 || constantStep(r) || fewDistinct(r)
}

// period returns the smallest p such that r[i] == r[i-p] for every i >= p.
func period(r []rune) int {
	for p := 1; p < len(r); p++ {
		ok := true
		for i := p; i < len(r) && ok; i++ {
			ok = r[i] == r[i-p]
		}
		if ok {
			return p
		}
	}
	return len(r)
}

// constantStep reports whether every rune differs from the one before by
// the same amount.
func constantStep(r []rune) bool {
	if len(r) < 3 {
		return false
	}
	step := r[1] - r[0]
	for i := 2; i < len(r); i++ {
		if r[i]-r[i-1] != step {
			return false
		}
	}
	return true
}

// fewDistinct reports whether r has fewer than four different runes or one
// rune makes up more than half of it.
func fewDistinct(r []rune) bool {
	counts := make(map[rune]int, len(r))
	most := 0
	for _, c := range r {
		counts[c]++
		most = max(most, counts[c])
	}
	return len(counts) < 4 || most*2 > len(r)
}

// mostlyEmail reports whether the lower-cased password is part of the
// email's local part, or leaves fewer than four characters once the
// address, its local part and its domain's first label are taken out
// (alice.smith1 for alice.smith@example.com, example2024 for
// bob@example.com). Parts shorter than three characters are ignored.
func mostlyEmail(password, email string) bool {
	local, domain, ok := cutLast(email, "@")
	if !ok || local == "" {
		return false
	}
	if len(local) >= MinPasswordLength && strings.Contains(local, password) {
		return true
	}
	label, _, _ := strings.Cut(domain, ".")
	rest := password
	for _, part := range []string{email, local, label} {
		if utf8.RuneCountInString(part) >= 3 {
			rest = strings.ReplaceAll(rest, part, "")
		}
	}
	return rest != password && utf8.RuneCountInString(rest) < MinPasswordLength/2
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// common reports whether the lower-cased password is on the common list,
// alone or with at most four non-letters before and after it (dragon2024!,
// 1monkey1), which people add to satisfy rules like these.
func common(password string) bool {
	list := commonPasswords()
	if _, ok := list[password]; ok {
		return true
	}
	core := strings.TrimFunc(password, func(r rune) bool { return !unicode.IsLetter(r) })
	added := utf8.RuneCountInString(password) - utf8.RuneCountInString(core)
	if added > 4 || utf8.RuneCountInString(core) < 4 {
		return false
	}
	_, ok := list[core]
	return ok
}

// commonList is the 10,000 most used passwords of zxcvbn 4.4.2's frequency
// list, one per line, lower case; password_common_LICENSE.txt says where
// it comes from and carries zxcvbn's MIT licence.
//
//go:embed password_common.txt
var commonList string

// commonPasswords is commonList as a set, built on first use.
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	lines := strings.Split(strings.TrimSpace(commonList), "\n")
	set := make(map[string]struct{}, len(lines))
	for _, l := range lines {
		set[l] = struct{}{}
	}
	return set
})
