package payd

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckPasskeyName(t *testing.T) {
	for in, want := range map[string]string{
		"Laptop":                            "Laptop",
		"  Ada's phone \t":                  "Ada's phone",
		strings.Repeat("é", MaxPasskeyName): strings.Repeat("é", MaxPasskeyName),
	} {
		if got, err := CheckPasskeyName(in); err != nil || got != want {
			t.Errorf("CheckPasskeyName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "   ", strings.Repeat("a", MaxPasskeyName+1), "a\x00b", "a\nb", "a\x7fb", "\xff"} {
		_, err := CheckPasskeyName(bad)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != ErrInvalidRequest || pe.Field != "name" {
			t.Errorf("CheckPasskeyName(%q) = %v, want invalid_request on name", bad, err)
		}
	}
}

func TestPasskeyLimit(t *testing.T) {
	if err := PasskeyLimit(MaxPasskeys - 1); err != nil {
		t.Fatalf("PasskeyLimit(%d) = %v", MaxPasskeys-1, err)
	}
	for _, n := range []int{MaxPasskeys, MaxPasskeys + 1} {
		if code := ErrorCode(PasskeyLimit(n)); code != ErrPasskeyLimit {
			t.Errorf("PasskeyLimit(%d) = %s, want passkey_limit", n, code)
		}
	}
}

func TestWebAuthnChallengeCheck(t *testing.T) {
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	c := &WebAuthnChallenge{Purpose: WebAuthnStepUp, Binding: "ses_1", CreatedAt: now, ExpiresAt: now.Add(WebAuthnChallengeTTL)}
	if err := c.Check(WebAuthnStepUp, "ses_1", now.Add(WebAuthnChallengeTTL-time.Nanosecond)); err != nil {
		t.Fatalf("Check within the window: %v", err)
	}
	for name, err := range map[string]error{
		"expired":         c.Check(WebAuthnStepUp, "ses_1", now.Add(WebAuthnChallengeTTL)),
		"another purpose": c.Check(WebAuthnRegister, "ses_1", now),
		"another session": c.Check(WebAuthnStepUp, "ses_2", now),
		"unbound":         c.Check(WebAuthnStepUp, "", now),
	} {
		if ErrorCode(err) != ErrPasskeyFailed {
			t.Errorf("%s: Check = %v, want passkey_failed", name, err)
		}
	}
}
