package webhook

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrForbiddenAddress is what every refused connection wraps, so the
// delivery loop and tests recognise an address refusal with errors.Is
// whatever layer (dialer, transport, client) reports it.
var ErrForbiddenAddress = errors.New("webhook: forbidden address")

// ForbiddenAddressError names the refused address and the rule that
// refused it, so a business reading its delivery log learns why its
// endpoint was never contacted.
type ForbiddenAddressError struct {
	// Addr is the IP address that was refused.
	Addr netip.Addr
	// Reason names the forbidden range, such as "loopback".
	Reason string
}

// Error describes the refusal for logs and delivery records.
func (e *ForbiddenAddressError) Error() string {
	return fmt.Sprintf("webhook: forbidden address %s (%s)", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrForbiddenAddress) true for every refusal.
func (e *ForbiddenAddressError) Is(target error) bool { return target == ErrForbiddenAddress }

// rule is one forbidden range and the reason shown when it matches.
type rule struct {
	prefix netip.Prefix
	reason string
}

// forbidden lists every range a delivery may not reach outside --dev. More
// specific entries come first so the reason names the most telling class
// (cloud metadata rather than link-local). The list follows the IANA
// special-purpose registries. CheckAddr also refuses all IPv6 outside
// 2000::/3 by a rule of its own; the IPv6 entries outside that block are
// here only to give clearer reasons.
var forbidden = mustRules(
	// Cloud metadata services: the classic SSRF prize.
	"169.254.169.254/32", "cloud metadata", // AWS, GCP, Azure, Oracle, DigitalOcean
	"100.100.100.200/32", "cloud metadata", // Alibaba Cloud
	"168.63.129.16/32", "cloud metadata", // Azure wire server (a public address)
	"fd00:ec2::254/128", "cloud metadata", // AWS over IPv6
	// IPv4.
	"0.0.0.0/8", "unspecified or this network",
	"10.0.0.0/8", "private",
	"100.64.0.0/10", "carrier-grade NAT",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local",
	"172.16.0.0/12", "private",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation",
	"192.88.99.0/24", "6to4 relay anycast",
	"192.168.0.0/16", "private",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation",
	"203.0.113.0/24", "documentation",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
	// IPv6.
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"2001::/32", "Teredo",
	"2001::/23", "IETF protocol assignments",
	"2001:db8::/32", "documentation",
	"2002::/16", "6to4",
	"3fff::/20", "documentation",
	"fc00::/7", "private (unique local)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

// globalUnicast is the only IPv6 block assigned for public use; anything
// outside it is refused even if no entry above names it.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nat64 is the well-known NAT64 prefix (RFC 6052). A host on an IPv6-only
// network reaches IPv4 through it, so its addresses are judged by the IPv4
// address they carry rather than refused outright.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// mustRules turns prefix, reason pairs into rules; it panics on a typo so
// a bad table cannot ship (the package tests load it).
func mustRules(pairs ...string) []rule {
	rules := make([]rule, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		rules = append(rules, rule{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return rules
}

// CheckAddr returns nil when a delivery may connect to ip outside --dev,
// and a *ForbiddenAddressError otherwise. IPv4-mapped IPv6 addresses and
// addresses under the well-known NAT64 prefix are judged by the IPv4
// address inside them; other IPv6 forms that embed IPv4 (6to4, Teredo,
// IPv4-compatible, local-use NAT64) are refused outright, because nobody
// serves webhooks from them and unwrapping each is more rules to get
// wrong. Addresses with a zone are link-scoped by definition and refused.
func CheckAddr(ip netip.Addr) error {
	if !ip.IsValid() {
		return &ForbiddenAddressError{ip, "invalid"}
	}
	if ip.Zone() != "" {
		return &ForbiddenAddressError{ip, "scoped (has a zone)"}
	}
	if ip.Is4In6() {
		return wrapEmbedded(ip, ip.Unmap(), "IPv4-mapped")
	}
	if nat64.Contains(ip) {
		a := ip.As16()
		return wrapEmbedded(ip, netip.AddrFrom4([4]byte(a[12:])), "NAT64")
	}
	for _, r := range forbidden {
		if r.prefix.Contains(ip) {
			return &ForbiddenAddressError{ip, r.reason}
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return &ForbiddenAddressError{ip, "not global unicast"}
	}
	return nil
}

// wrapEmbedded judges the IPv4 address inside outer and, when it is
// refused, reports outer with the embedded reason.
func wrapEmbedded(outer, inner netip.Addr, form string) error {
	err := CheckAddr(inner)
	var f *ForbiddenAddressError
	if errors.As(err, &f) {
		return &ForbiddenAddressError{outer, form + " " + f.Reason}
	}
	return err
}
