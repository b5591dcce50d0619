package payd

import (
	"net/netip"
	"slices"
)

// The one table of addresses a webhook may never reach outside --dev
// (spec 6.3 rule 7, docs/webhook-delivery.md). Both checks read it: the
// URL rules when an endpoint is saved (CheckWebhookURL, for literal
// addresses) and package webhook's dialer on every connection
// (webhook.CheckAddr, for resolved addresses). Two lists once disagreed,
// so that some addresses passed registration and then failed every
// delivery; one table, like tailscale's net/tsaddr, cannot.

// ForbiddenRange is one range of the table with the reason shown when an
// address in it is refused.
type ForbiddenRange struct {
	Prefix netip.Prefix
	Reason string
}

// forbiddenRanges follows the IANA special-purpose registries. More
// specific entries come first so the reason names the most telling class
// (cloud metadata rather than link-local). Every IPv6 address outside
// 2000::/3 is refused by a rule of its own; the entries outside that block
// are here to give clearer reasons.
var forbiddenRanges = mustRanges(
	// Cloud metadata services: the classic SSRF prize.
	"169.254.169.254/32", "cloud metadata", // AWS, GCP, Azure, Oracle, DigitalOcean
	"100.100.100.200/32", "cloud metadata", // Alibaba Cloud
	"168.63.129.16/32", "cloud metadata", // Azure wire server: a public address only Azure hosts reach
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
	"192.88.99.0/24", "6to4 relay anycast (deprecated)",
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

// GlobalUnicast is the only IPv6 block assigned for public use; every IPv6
// address outside it is refused even where no entry of the table names it
// (4000::1, say).
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nat64 is the well-known NAT64 prefix (RFC 6052). A host on an IPv6-only
// network reaches IPv4 through it, so its addresses are judged by the IPv4
// address they carry rather than refused outright.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// mustRanges turns prefix, reason pairs into the table; it panics on a
// typo so a bad table cannot ship (every test of the package loads it).
func mustRanges(pairs ...string) []ForbiddenRange {
	out := make([]ForbiddenRange, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, ForbiddenRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// ForbiddenRanges returns a copy of the table, in the order it is read,
// for tests and documentation.
func ForbiddenRanges() []ForbiddenRange { return slices.Clone(forbiddenRanges) }

// ForbiddenAddress returns why a webhook may not reach ip outside --dev,
// or "" when it may. IPv4-mapped addresses and addresses under the
// well-known NAT64 prefix are judged by the IPv4 address inside them
// (the reason then names the form too); the other IPv6 forms that embed
// IPv4 (6to4, Teredo, IPv4-compatible, local-use NAT64) are refused
// outright, because nobody serves webhooks from them and unwrapping each
// is more rules to get wrong. An address with a zone is link-scoped by
// definition and refused.
func ForbiddenAddress(ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.Zone() != "":
		return "scoped (has a zone)"
	case ip.Is4In6():
		return embedded("IPv4-mapped", ip.Unmap())
	case nat64.Contains(ip):
		a := ip.As16()
		return embedded("NAT64", netip.AddrFrom4([4]byte(a[12:])))
	}
	for _, r := range forbiddenRanges {
		if r.Prefix.Contains(ip) {
			return r.Reason
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return "not global unicast"
	}
	return ""
}

// embedded judges the IPv4 address inside an IPv6 form.
func embedded(form string, inner netip.Addr) string {
	if reason := ForbiddenAddress(inner); reason != "" {
		return form + " " + reason
	}
	return ""
}
