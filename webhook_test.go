package payd

import "testing"

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
