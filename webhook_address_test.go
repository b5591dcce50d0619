package payd

import (
	"net/netip"
	"net/url"
	"strconv"
	"testing"
)

// TestForbiddenAddressReasons pins the reasons of the unwrapping rules,
// which the table alone does not show.
func TestForbiddenAddressReasons(t *testing.T) {
	for a, want := range map[string]string{
		"::ffff:127.0.0.1":   "IPv4-mapped loopback",
		"64:ff9b::a9fe:a9fe": "NAT64 cloud metadata",
		"64:ff9b::808:808":   "",
		"fe80::1%eth0":       "scoped (has a zone)",
		"2606:4700::1%eth0":  "scoped (has a zone)",
		"4000::1":            "not global unicast",
		"168.63.129.16":      "cloud metadata",
		"::7f00:1":           "IPv4-compatible (deprecated)",
	} {
		if got := ForbiddenAddress(netip.MustParseAddr(a)); got != want {
			t.Errorf("%s: %q, want %q", a, got, want)
		}
	}
	if got := ForbiddenAddress(netip.Addr{}); got != "invalid" {
		t.Errorf("zero address: %q", got)
	}
}

// FuzzCheckWebhookURL checks that whatever URL production accepts has a
// usable port and, for a literal host, an address the table allows, and
// that dev applies the same port rule.
func FuzzCheckWebhookURL(f *testing.F) {
	for _, s := range []string{"https://example.com/", "https://example.com:0/", "https://example.com:99999/",
		"https://[64:ff9b::808:808]:8443/", "https://168.63.129.16/", "https://[3fff::1]/", "http://127.0.0.1:8080/",
		"https://[fe80::1%25en0]/", "https://example.com:065535/"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, dev bool) {
		if CheckWebhookURL(s, dev) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", s, err)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("%q accepted with port %q", s, p)
			}
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !dev && ForbiddenAddress(ip) != "" {
			t.Fatalf("%q accepted with forbidden address %s (%s)", s, ip, ForbiddenAddress(ip))
		}
	})
}
