package payd

import (
	"testing"
	"time"
)

func TestPasswordLock(t *testing.T) {
	want := map[int]time.Duration{1: 0, 4: 0, 5: time.Minute, 6: 0, 9: 0, 10: 5 * time.Minute, 14: 0,
		15: 15 * time.Minute, 19: 0, 20: time.Hour, 21: 0, 25: time.Hour, 95: time.Hour, 100: time.Hour}
	for n, d := range want {
		if got := PasswordLock(n); got != d {
			t.Errorf("PasswordLock(%d) = %v, want %v", n, got, d)
		}
	}
	for n, d := range map[int]time.Duration{1: 0, 4: 0, 5: 15 * time.Minute, 6: 0, 10: 15 * time.Minute} {
		if got := CodeLock(n); got != d {
			t.Errorf("CodeLock(%d) = %v, want %v", n, got, d)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	for in, want := range map[string]string{"123456": "123456", "123 456": "123456", "12-34-56": "123456", " 000001 ": "000001"} {
		if got, ok := NormalizeCode(in); !ok || got != want {
			t.Errorf("NormalizeCode(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "12345", "1234567", "12345a", "１２３４５６", "123456\x00"} {
		if _, ok := NormalizeCode(in); ok {
			t.Errorf("NormalizeCode(%q) accepted", in)
		}
	}
	for range 100 {
		c := NewCode()
		if got, ok := NormalizeCode(c); !ok || got != c {
			t.Fatalf("NewCode() = %q does not read back", c)
		}
	}
}

func FuzzNormalizeCode(f *testing.F) {
	for _, s := range []string{"123456", "12 34 56", "", "abc", "1-2-3-4-5-6"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := NormalizeCode(s)
		if !ok {
			return
		}
		if len(got) != 6 {
			t.Fatalf("NormalizeCode(%q) = %q", s, got)
		}
		for i := 0; i < 6; i++ {
			if got[i] < '0' || got[i] > '9' {
				t.Fatalf("NormalizeCode(%q) = %q", s, got)
			}
		}
		if again, ok := NormalizeCode(got); !ok || again != got {
			t.Fatalf("not idempotent: %q", s)
		}
	})
}

func TestSessionExpiry(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	token, s := NewSession("usr_1", "password", "UA", "127.0.0.1", t0)
	if s.TokenHash != SecretHash(token) || token == "" {
		t.Fatal("the row must hold the token's hash")
	}
	if !s.Live(t0.Add(SessionIdle-time.Second)) || s.Live(t0.Add(SessionIdle)) {
		t.Error("idle expiry")
	}
	// Used every few hours, it still ends at SessionMax.
	for at := t0; at.Before(t0.Add(SessionMax)); at = at.Add(6 * time.Hour) {
		s.LastSeenAt = at
	}
	if s.Live(t0.Add(SessionMax)) {
		t.Error("absolute expiry")
	}
	if !s.Proven(t0.Add(ProofTTL-time.Second)) || s.Proven(t0.Add(ProofTTL)) {
		t.Error("proof window")
	}
}

func TestRolePermissions(t *testing.T) {
	for _, r := range Roles {
		p := r.Permissions()
		if r == RoleOwner || r == RoleAdmin {
			for _, a := range Areas {
				if p[a] != AccessWrite {
					t.Errorf("%s cannot write %s", r, a)
				}
			}
		}
		if r == RoleViewer {
			for _, a := range Areas {
				if p[a] != AccessRead {
					t.Errorf("viewer %s = %v", a, p[a])
				}
			}
			if r.ManagesKeys() || r.ManagesTeam() {
				t.Error("viewer manages keys or team")
			}
		}
	}
	if _, err := ParseRole("owner"); err == nil {
		t.Error("owner can be given")
	}
}
