package payd

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAttemptErrorShown keeps raw errors of attempts recorded before the
// vocabulary out of the API: only the vocabulary passes.
func TestAttemptErrorShown(t *testing.T) {
	for s, want := range map[string]string{
		"": "", "timeout": "timeout", "dns failure": "dns failure", "http 500": "http 500", "http 302": "http 302",
		`Post "https://x.example/": lookup x.example on 10.255.255.53:53: no such host`: AttemptConnectionError,
		"webhook: forbidden address 10.0.0.5 (private)":                                 AttemptConnectionError,
		"http 5000": AttemptConnectionError, "http 050": AttemptConnectionError, "http abc": AttemptConnectionError,
	} {
		if got := AttemptErrorShown(s); got != want {
			t.Errorf("%q shows as %q, want %q", s, got, want)
		}
	}
}

// FuzzAttemptErrorShown checks that whatever text an attempt stored, the
// API shows a word of the vocabulary or "http " and a status that reads
// back the same.
func FuzzAttemptErrorShown(f *testing.F) {
	for _, s := range []string{"", "timeout", "http 500", "http 5000", "http -1", "http +50", "lookup x on 10.0.0.1:53"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AttemptErrorShown(s)
		if got != s && got != AttemptConnectionError {
			t.Fatalf("%q shows as %q", s, got)
		}
		if got == "" || slices.Contains(AttemptErrors, got) {
			return
		}
		code, ok := strings.CutPrefix(got, "http ")
		n, err := strconv.Atoi(code)
		if !ok || err != nil || AttemptHTTPStatus(n) != got || n < 100 || n > 999 {
			t.Fatalf("%q shows as %q, outside the vocabulary", s, got)
		}
	})
}
