package payd

import (
	"crypto/rand"
	"math/big"
	"strings"
)

// Referral codes (docs/accounts.md "Referrals"): every business has a code
// it shares; a new business may name the code that referred it, and change
// it until it has a wallet (referral_locked).

// ReferralAlphabet is what referral codes are made of: digits and capital
// letters without those read for one another (0 and O, 1, I and L) and U,
// so a code read aloud or copied from paper comes out right.
const ReferralAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// ReferralCodeLength is the length of a referral code: 30⁸ ≈ 6.6 × 10¹¹
// codes, so a random one repeats an existing one with odds of one in
// 650,000 even among a million businesses (the unique index then refuses
// it and the creation fails as a conflict).
const ReferralCodeLength = 8

// NewReferralCode returns a random referral code.
func NewReferralCode() string {
	var b strings.Builder
	n := big.NewInt(int64(len(ReferralAlphabet)))
	for range ReferralCodeLength {
		i, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b.WriteByte(ReferralAlphabet[i.Int64()])
	}
	return b.String()
}

// NormalizeReferralCode reads a referral code as people type it: in any
// case, with spaces and dashes, which it drops. It reports whether the
// result is a well-formed code; any other character (the look-alikes O,
// I, L among them) makes it not one.
func NormalizeReferralCode(s string) (string, bool) {
	if len(s) > 4*ReferralCodeLength {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-':
		case r < 128 && strings.IndexByte(ReferralAlphabet, byte(r)) >= 0:
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	out := b.String()
	return out, len(out) == ReferralCodeLength
}

// ReferralLocked is the referral_locked error: the business has a wallet.
func ReferralLocked() *Error {
	return &Error{Code: ErrReferralLocked, Field: "referral_code",
		Message: "the business has a wallet: the code that referred it can no longer change"}
}
