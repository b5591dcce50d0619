package totp

import (
	"crypto/rand"
	"crypto/subtle"

	"payd"
)

// Recovery codes replace the authenticator app once each, for a person who
// lost their phone. Each is 10 characters of a 32-letter alphabet, 50
// random bits, shown as xxxxx-xxxxx.
//
// They are stored as SHA-256 hex (payd.SecretHash), a fast hash, on purpose
// (docs/two-step.md):
//   - Online, 50 bits cannot be guessed: codes share the per-person lock of
//     spec 8.3 (5 wrong two-step codes lock codes for 15 minutes), about 480
//     guesses a day against 10 codes in 2^50, so a year of guessing has odds of
//     about one in 600 million.
//   - Offline, a slow hash would buy nothing: whoever reads the database
//     also reads the TOTP secret beside the hashes, which must be stored so
//     that it can be used and gives the second step away by itself. The hash
//     is there so that the codes cannot be read back from the database, a
//     backup or a log, as DESIGN §7 asks of every code.
//   - A fast hash costs a sign-in nothing, where argon2id over 10 codes
//     would cost 10 slow hashes per attempt, which the password's bound on
//     concurrent hashes was sized without.
const (
	// RecoveryCodes is how many codes a set holds.
	RecoveryCodes = 10
	// recoveryLen is the number of characters of a code, dash not counted.
	recoveryLen = 10
	// maxRecoveryInput bounds what NormalizeRecoveryCode looks at.
	maxRecoveryInput = 64
)

// recoveryAlphabet is Crockford's base32 in lower case: digits and letters
// without i, l, o and u, so no two characters look alike (0 and o, 1 and l
// or i) and no word is spelled by accident. 32 letters: a random byte's low
// five bits choose one without bias.
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewRecoveryCodes makes a new set of RecoveryCodes codes: plain, formatted
// xxxxx-xxxxx, to show the person once, and hashes, in the same order, to
// store (HashRecoveryCode of each).
func NewRecoveryCodes() (plain []string, hashes []string) {
	plain, hashes = make([]string, RecoveryCodes), make([]string, RecoveryCodes)
	for i := range plain {
		var b [recoveryLen]byte
		rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
		for j := range b {
			b[j] = recoveryAlphabet[b[j]&31]
		}
		plain[i] = string(b[:5]) + "-" + string(b[5:])
		hashes[i] = hashRecovery(string(b[:]))
	}
	return plain, hashes
}

// NormalizeRecoveryCode returns the 10 characters of the recovery code s
// as stored before hashing, or false when s is not one. It forgives what a
// person does when copying a code: upper or lower case, spaces and dashes
// anywhere, and the letters Crockford's base32 reads as digits (o as 0, i
// and l as 1). Only ASCII is looked at, so no Unicode case folding (the
// Kelvin sign folds to k) lets two inputs differ where the person sees one.
func NormalizeRecoveryCode(s string) (string, bool) {
	if len(s) > maxRecoveryInput {
		return "", false
	}
	var b [recoveryLen]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '-' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		switch c {
		case 'o':
			c = '0'
		case 'i', 'l':
			c = '1'
		}
		if !inAlphabet(c) || n == recoveryLen {
			return "", false
		}
		b[n] = c
		n++
	}
	if n != recoveryLen {
		return "", false
	}
	return string(b[:]), true
}

// inAlphabet reports whether c is a letter of recoveryAlphabet.
func inAlphabet(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' && c != 'i' && c != 'l' && c != 'o' && c != 'u'
}

// HashRecoveryCode returns the hash to store for the recovery code s, as
// MatchRecoveryCode compares them, and false when s is not a code.
func HashRecoveryCode(s string) (string, bool) {
	n, ok := NormalizeRecoveryCode(s)
	if !ok {
		return "", false
	}
	return hashRecovery(n), true
}

// hashRecovery is the stored form of a normalised code: payd.SecretHash,
// the hex SHA-256 every other code and token is stored as.
func hashRecovery(normalized string) string { return payd.SecretHash(normalized) }

// MatchRecoveryCode returns the index in hashes of the recovery code the
// person typed, or false when it is none of them (malformed included). It
// compares with every hash, in constant time and without stopping at a
// match, so the time taken says nothing of which one matched. The caller
// spends the code by removing its hash (or blanking it: an empty hash never
// matches) in the same transaction that accepts it, and counts a miss as a
// wrong two-step code (invalid_code, spec 8.3).
func MatchRecoveryCode(hashes []string, input string) (index int, ok bool) {
	n, valid := NormalizeRecoveryCode(input)
	if !valid {
		return -1, false
	}
	want := []byte(hashRecovery(n))
	index = -1
	for i, h := range hashes {
		eq := subtle.ConstantTimeCompare([]byte(h), want)
		index = subtle.ConstantTimeSelect(eq&subtle.ConstantTimeEq(int32(index), -1), i, index)
	}
	return index, index >= 0
}
