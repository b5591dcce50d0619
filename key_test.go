package payd

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

// keyKinds and keyModes list every combination a key can have.
var (
	keyKinds = []KeyKind{KeySecret, KeyRestricted, KeyPublishable}
	keyModes = []Mode{ModeLive, ModeTest}
)

// TestNewAPIKey checks the text and record of a new key of every kind and
// mode: prefix, length, alphabet, checksum, hash and hint.
func TestNewAPIKey(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	perms := Permissions{AreaPayments: AccessRead}
	want := map[KeyKind]map[Mode]string{
		KeySecret:      {ModeLive: "sk_live_", ModeTest: "sk_test_"},
		KeyRestricted:  {ModeLive: "rk_live_", ModeTest: "rk_test_"},
		KeyPublishable: {ModeLive: "pk_live_", ModeTest: "pk_test_"},
	}
	for _, kind := range keyKinds {
		for _, mode := range keyModes {
			secret, k := NewAPIKey("biz_1", kind, mode, perms, now)
			prefix := want[kind][mode]
			if !strings.HasPrefix(secret, prefix) || len(secret) != len(prefix)+keyRandomLen+keyChecksumLen {
				t.Errorf("NewAPIKey(%s, %s) = %q, want %s and %d more characters", kind, mode, secret, prefix, keyRandomLen+keyChecksumLen)
			}
			if !HasPrefix(secret, prefix) {
				t.Errorf("NewAPIKey(%s, %s) = %q, not base62 after the prefix", kind, mode, secret)
			}
			if gk, gm, ok := ParseAPIKey(secret); !ok || gk != kind || gm != mode {
				t.Errorf("ParseAPIKey(%q) = %s, %s, %t", secret, gk, gm, ok)
			}
			checkKeyRecord(t, secret, k, kind, mode, now)
		}
	}
}

// checkKeyRecord checks the stored record of a new key.
func checkKeyRecord(t *testing.T, secret string, k *APIKey, kind KeyKind, mode Mode, now time.Time) {
	t.Helper()
	if !HasPrefix(k.ID, PrefixAPIKey) || k.BusinessID != "biz_1" || k.Kind != kind || k.Mode != mode || !k.CreatedAt.Equal(now) || k.RevokedAt != nil {
		t.Errorf("NewAPIKey(%s, %s) record = %+v", kind, mode, k)
	}
	if k.Hash != HashAPIKey(secret) {
		t.Errorf("NewAPIKey(%s, %s) hash %q, want HashAPIKey of the secret", kind, mode, k.Hash)
	}
	if want := secret[:8] + "…" + secret[len(secret)-4:]; k.Hint != want {
		t.Errorf("NewAPIKey(%s, %s) hint %q, want %q", kind, mode, k.Hint, want)
	}
	// Only permissions of restricted keys mean anything; others keep none.
	if (kind == KeyRestricted) != (k.Permissions != nil) {
		t.Errorf("NewAPIKey(%s, %s) permissions %v", kind, mode, k.Permissions)
	}
}

// TestAPIKeyHintRevealsLittle checks over many keys that the hint shows the
// prefix and the last four characters and nothing else of the secret.
func TestAPIKeyHintRevealsLittle(t *testing.T) {
	for range 200 {
		secret, k := NewAPIKey("biz_1", KeySecret, ModeLive, nil, time.Time{})
		prefix, rest, ok := strings.Cut(k.Hint, "…")
		if !ok || prefix != "sk_live_" || len(rest) != 4 || !strings.HasSuffix(secret, rest) {
			t.Fatalf("hint %q of %q is not prefix…last4", k.Hint, secret)
		}
		if strings.Contains(k.Hint, secret[8:len(secret)-4]) {
			t.Fatalf("hint %q contains the middle of the secret", k.Hint)
		}
	}
}

// TestParseAPIKeyRefuses checks keys that must not parse.
func TestParseAPIKeyRefuses(t *testing.T) {
	good, _ := NewAPIKey("biz_1", KeySecret, ModeTest, nil, time.Time{})
	body := good[:len(good)-keyChecksumLen]
	tests := map[string]string{
		"empty":             "",
		"prefix only":       "sk_test_",
		"one short":         good[:len(good)-1],
		"one long":          good + "A",
		"unknown kind":      "xk" + good[2:],
		"uppercase kind":    "SK" + good[2:],
		"unknown mode":      "sk_prod" + good[7:],
		"missing separator": "sk_test-" + good[8:],
		"no separator":      "sktest_" + good[7:] + "A",
		"wrong checksum":    body + otherChecksum(good[len(body):]),
		"non-base62 body":   good[:10] + "-" + good[11:],
		"non-base62 sum":    body + "AAAAA_",
		"non-ASCII":         good[:10] + "é" + good[12:],
		"space":             " " + good[1:],
		"bearer prefix":     "Bearer " + good,
		"id not key":        NewID(PrefixAPIKey) + strings.Repeat("A", 18),
	}
	for name, s := range tests {
		if kind, mode, ok := ParseAPIKey(s); ok {
			t.Errorf("%s: ParseAPIKey(%q) = %s, %s, true", name, s, kind, mode)
		}
	}
	// A correct checksum over a body of the wrong alphabet is still refused.
	bad := "sk_live_" + strings.Repeat("-", keyRandomLen)
	if _, _, ok := ParseAPIKey(bad + keyChecksum(bad)); ok {
		t.Errorf("ParseAPIKey accepted a non-base62 body with a valid checksum")
	}
}

// TestAPIKeyChecksumCatchesTypos changes every character of a few random
// keys to every other character a key may hold, and swaps every adjacent
// pair: the checksum must catch each one.
func TestAPIKeyChecksumCatchesTypos(t *testing.T) {
	const alphabet = base62 + "_"
	for _, kind := range keyKinds {
		for _, mode := range keyModes {
			secret, _ := NewAPIKey("biz_1", kind, mode, nil, time.Time{})
			for i := range len(secret) {
				for j := range len(alphabet) {
					if c := alphabet[j]; c != secret[i] {
						typo := secret[:i] + string(c) + secret[i+1:]
						checkTypoRefused(t, secret, typo)
					}
				}
				if i+1 < len(secret) && secret[i] != secret[i+1] {
					swap := secret[:i] + string(secret[i+1]) + string(secret[i]) + secret[i+2:]
					checkTypoRefused(t, secret, swap)
				}
			}
		}
	}
}

// checkTypoRefused fails the test if a mistyped key parses.
func checkTypoRefused(t *testing.T, secret, typo string) {
	t.Helper()
	if kind, mode, ok := ParseAPIKey(typo); ok {
		t.Fatalf("ParseAPIKey accepted %q, a typo of %q, as %s %s", typo, secret, kind, mode)
	}
}

// TestHashAPIKey checks the hash against known SHA-256 values.
func TestHashAPIKey(t *testing.T) {
	tests := map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	}
	for in, want := range tests {
		if got := HashAPIKey(in); got != want {
			t.Errorf("HashAPIKey(%q) = %s, want %s", in, got, want)
		}
	}
	a, _ := NewAPIKey("biz_1", KeySecret, ModeLive, nil, time.Time{})
	b, _ := NewAPIKey("biz_1", KeySecret, ModeLive, nil, time.Time{})
	if HashAPIKey(a) == HashAPIKey(b) {
		t.Errorf("two keys share a hash")
	}
}

// TestParsePermissions checks accepted forms and their canonical text.
func TestParsePermissions(t *testing.T) {
	tests := []struct {
		in, canonical string
		want          Permissions
	}{
		{"payments:read", "payments:read", Permissions{AreaPayments: AccessRead}},
		{"customers:write,payments:read", "payments:read,customers:write",
			Permissions{AreaPayments: AccessRead, AreaCustomers: AccessWrite}},
		{" payments:read , links:write ", "payments:read,links:write",
			Permissions{AreaPayments: AccessRead, AreaLinks: AccessWrite}},
		{"payments:write,customers:write,links:write,webhooks:write,checkout_settings:write,wallet:write,metrics:write",
			"payments:write,customers:write,links:write,webhooks:write,checkout_settings:write,wallet:write,metrics:write",
			Permissions{AreaPayments: AccessWrite, AreaCustomers: AccessWrite, AreaLinks: AccessWrite, AreaWebhooks: AccessWrite,
				AreaCheckoutSettings: AccessWrite, AreaWallet: AccessWrite, AreaMetrics: AccessWrite}},
	}
	for _, tt := range tests {
		got, err := ParsePermissions(tt.in)
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("ParsePermissions(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if s := got.String(); s != tt.canonical {
			t.Errorf("ParsePermissions(%q).String() = %q, want %q", tt.in, s, tt.canonical)
		}
	}
}

// TestParsePermissionsRefuses checks every refusal: invalid_request on the
// permissions field.
func TestParsePermissionsRefuses(t *testing.T) {
	for _, in := range []string{
		"", "   ", ",", "payments:read,", ",payments:read", "payments", "payments:", ":read",
		"payment:read", "Payments:read", "payments:READ", "payments:none", "payments:admin",
		"payments:read:write", "payments :read", "payments: read", "payments:read,payments:write",
		"payments:read,payments:read", "payments:read;customers:read", "*:read",
	} {
		p, err := ParsePermissions(in)
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrInvalidRequest || e.Field != "permissions" || p != nil {
			t.Errorf("ParsePermissions(%q) = %v, %v; want invalid_request on permissions", in, p, err)
		}
	}
}

// TestPermissionsRoundTrip checks String and ParsePermissions against each
// other over every combination of levels for every area (3^7 sets).
func TestPermissionsRoundTrip(t *testing.T) {
	combos := 1
	for range Areas {
		combos *= 3
	}
	for n := 1; n < combos; n++ { // n = 0 is the empty set, which is refused
		p := Permissions{}
		for i, m := 0, n; i < len(Areas); i, m = i+1, m/3 {
			if lvl := Access(m % 3); lvl != AccessNone {
				p[Areas[i]] = lvl
			}
		}
		got, err := ParsePermissions(p.String())
		if err != nil || !maps.Equal(got, p) {
			t.Fatalf("ParsePermissions(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
}

// TestAccessString checks the wire names of access levels.
func TestAccessString(t *testing.T) {
	for lvl, want := range map[Access]string{AccessNone: "none", AccessRead: "read", AccessWrite: "write", Access(9): "none"} {
		if got := lvl.String(); got != want {
			t.Errorf("Access(%d).String() = %q, want %q", lvl, got, want)
		}
	}
}

// TestAPIKeyCan checks what each kind of key may do: a secret key
// everything, a publishable key nothing, a restricted key what it was
// granted, with write including read.
func TestAPIKeyCan(t *testing.T) {
	secret := &APIKey{Kind: KeySecret}
	public := &APIKey{Kind: KeyPublishable, Permissions: Permissions{AreaPayments: AccessWrite}}
	restricted := &APIKey{Kind: KeyRestricted, Permissions: Permissions{AreaPayments: AccessWrite, AreaCustomers: AccessRead}}
	bare := &APIKey{Kind: KeyRestricted}
	for _, area := range Areas {
		for _, lvl := range []Access{AccessRead, AccessWrite} {
			if !secret.Can(area, lvl) {
				t.Errorf("secret key cannot %s %s", lvl, area)
			}
			if public.Can(area, lvl) {
				t.Errorf("publishable key can %s %s", lvl, area)
			}
			if bare.Can(area, lvl) {
				t.Errorf("restricted key without permissions can %s %s", lvl, area)
			}
			want := area == AreaPayments || (area == AreaCustomers && lvl == AccessRead)
			if got := restricted.Can(area, lvl); got != want {
				t.Errorf("restricted key Can(%s, %s) = %t, want %t", area, lvl, got, want)
			}
		}
	}
	if !restricted.CanReadAny(AreaLinks, AreaCustomers) || restricted.CanReadAny(AreaLinks, AreaWallet) || restricted.CanReadAny() {
		t.Errorf("restricted key CanReadAny is wrong")
	}
	if public.CanReadAny(Areas...) {
		t.Errorf("publishable key can read something")
	}
}

// FuzzParseAPIKey checks that ParseAPIKey never panics and accepts only
// well-formed keys with a valid checksum, consistently.
func FuzzParseAPIKey(f *testing.F) {
	for _, kind := range keyKinds {
		for _, mode := range keyModes {
			s, _ := NewAPIKey("biz_1", kind, mode, nil, time.Time{})
			f.Add(s)
		}
	}
	f.Add("sk_live_")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		kind, mode, ok := ParseAPIKey(s)
		if !ok {
			if kind != "" || mode != "" {
				t.Fatalf("ParseAPIKey(%q) refused but returned %q, %q", s, kind, mode)
			}
			return
		}
		prefix := keyPrefixes[kind] + "_" + string(mode) + "_"
		body, sum := s[:len(s)-keyChecksumLen], s[len(s)-keyChecksumLen:]
		if !strings.HasPrefix(s, prefix) || !HasPrefix(s, prefix) || len(s) != len(prefix)+keyRandomLen+keyChecksumLen {
			t.Fatalf("ParseAPIKey(%q) accepted a malformed key as %s %s", s, kind, mode)
		}
		if keyChecksum(body) != sum {
			t.Fatalf("ParseAPIKey(%q) accepted a bad checksum", s)
		}
		if k2, m2, ok2 := ParseAPIKey(s); !ok2 || k2 != kind || m2 != mode {
			t.Fatalf("ParseAPIKey(%q) is not stable", s)
		}
	})
}

// FuzzParsePermissions checks that ParsePermissions never panics, refuses
// only with invalid_request, and that what it accepts survives String.
func FuzzParsePermissions(f *testing.F) {
	for _, s := range []string{"payments:read", "customers:write,payments:read", " links:write ", "", "payments:read,payments:write", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePermissions(s)
		if err != nil {
			if ErrorCode(err) != ErrInvalidRequest || p != nil {
				t.Fatalf("ParsePermissions(%q) = %v, %v", s, p, err)
			}
			return
		}
		if len(p) == 0 {
			t.Fatalf("ParsePermissions(%q) accepted no permissions", s)
		}
		for area, lvl := range p {
			if lvl != AccessRead && lvl != AccessWrite {
				t.Fatalf("ParsePermissions(%q) gave %s level %d", s, area, lvl)
			}
		}
		again, err := ParsePermissions(p.String())
		if err != nil || !maps.Equal(again, p) {
			t.Fatalf("ParsePermissions(%q).String() = %q does not parse back: %v, %v", s, p.String(), again, err)
		}
	})
}

// otherChecksum returns a checksum of the same length that is not sum:
// a fixed "000000" would be the right one once in 62^6 keys.
func otherChecksum(sum string) string {
	if other := strings.Repeat("0", len(sum)); other != sum {
		return other
	}
	return strings.Repeat("1", len(sum))
}
