package payd

import (
	"strings"
	"testing"
)

// idPrefixes lists every id prefix payd issues.
var idPrefixes = []string{
	PrefixBusiness, PrefixAPIKey, PrefixRequest, PrefixPayment, PrefixCustomer, PrefixLink,
	PrefixCheckout, PrefixWallet, PrefixWebhook, PrefixDelivery, PrefixEvent, PrefixEmail, PrefixPasskey,
}

// TestNewIDShape checks that ids are their prefix and 24 base62 characters.
func TestNewIDShape(t *testing.T) {
	for _, prefix := range idPrefixes {
		id := NewID(prefix)
		if len(id) != len(prefix)+24 || !strings.HasPrefix(id, prefix) || !HasPrefix(id, prefix) {
			t.Errorf("NewID(%q) = %q, want the prefix and 24 base62 characters", prefix, id)
		}
	}
}

// TestNewIDUnique checks that 100,000 ids do not collide.
func TestNewIDUnique(t *testing.T) {
	const n = 100_000
	seen := make(map[string]struct{}, n)
	for range n {
		id := NewID(PrefixPayment)
		if _, dup := seen[id]; dup {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = struct{}{}
	}
}

// TestRandomString checks lengths and that every base62 character is drawn
// about equally often, which a modulo bias would break.
func TestRandomString(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 64, 1000} {
		if s := RandomString(n); len(s) != n {
			t.Errorf("RandomString(%d) has %d characters", n, len(s))
		}
	}
	const draws = 62 * 4000
	counts := map[rune]int{}
	for _, c := range RandomString(draws) {
		counts[c]++
	}
	if len(counts) != 62 {
		t.Fatalf("RandomString drew %d distinct characters, want 62", len(counts))
	}
	// Each count is Binomial(draws, 1/62): mean 4000, sd about 63. A bias
	// toward the first characters of the alphabet (c%62 over all 256 byte
	// values) would raise the first eight by 25%, far beyond 8 sd.
	for c, n := range counts {
		if n < 3500 || n > 4500 {
			t.Errorf("RandomString drew %q %d times in %d, want about 4000", c, n, draws)
		}
	}
}

// TestHasPrefix checks the id shape test.
func TestHasPrefix(t *testing.T) {
	tests := []struct {
		id, prefix string
		want       bool
	}{
		{"pmt_abc123XYZ", PrefixPayment, true},
		{"pmt_" + strings.Repeat("a", 64), PrefixPayment, true},
		{"pmt_" + strings.Repeat("a", 65), PrefixPayment, false},
		{"pmt_", PrefixPayment, false},
		{"pmt", PrefixPayment, false},
		{"", PrefixPayment, false},
		{"cst_abc", PrefixPayment, false},
		{"PMT_abc", PrefixPayment, false},
		{"pmt_abc-def", PrefixPayment, false},
		{"pmt_abc_def", PrefixPayment, false},
		{"pmt_abc def", PrefixPayment, false},
		{"pmt_abc\x00", PrefixPayment, false},
		{"pmt_abcé", PrefixPayment, false},
		{"pmt_pmt_abc", PrefixPayment, false},
		{"x_y", "x_", true},
	}
	for _, tt := range tests {
		if got := HasPrefix(tt.id, tt.prefix); got != tt.want {
			t.Errorf("HasPrefix(%q, %q) = %t, want %t", tt.id, tt.prefix, got, tt.want)
		}
	}
}

// TestIDOrder checks that ids sort by the millisecond they were made in, in
// byte order (as both databases compare them), across digit carries and for
// the whole range of times payd will see.
func TestIDOrder(t *testing.T) {
	times := []int64{0, 1, 61, 62, 63, 3843, 3844, 1_700_000_000_000, 1_800_000_000_000, 1_800_000_000_001, 62*62*62*62*62*62*62*62 - 1}
	prev := ""
	for _, ms := range times {
		id := IDAt(PrefixPayment, ms, "0000000000000000")
		if !HasPrefix(id, PrefixPayment) || len(id) != len(PrefixPayment)+24 {
			t.Fatalf("IDAt(%d) = %q, want the prefix and 24 base62 characters", ms, id)
		}
		if id <= prev {
			t.Errorf("IDAt(%d) = %q sorts before %q", ms, id, prev)
		}
		prev = id
	}
	if got, want := IDAt("x_", 62, "r"), "x_00000010r"; got != want {
		t.Errorf("IDAt(x_, 62, r) = %q, want %q", got, want)
	}
	// Ids made a millisecond apart sort in the order they were made.
	a := NewID(PrefixEvent)
	for b := NewID(PrefixEvent); b[:len(PrefixEvent)+idTime] == a[:len(PrefixEvent)+idTime]; b = NewID(PrefixEvent) {
		a = b
	}
	if b := NewID(PrefixEvent); b < a {
		t.Errorf("NewID made %q after %q", b, a)
	}
}
