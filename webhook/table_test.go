package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"payd"
)

// TestAddressTableAtRegistrationAndConnect walks every range of the one
// address table (payd.ForbiddenRanges) and asks both of its callers about
// addresses at and around each range's edges: registration
// (payd.CheckWebhookURL on a literal URL) and connect (CheckAddr, the
// dialer's socket hook, and a real Post through the sender). Both must give
// the table's verdict, with the table's reason, so a caller that kept a
// list of its own, or skipped the table, fails here for the first range
// they disagree on. The IPv4-mapped and NAT64 forms of every IPv4 probe
// must be judged as the address they carry.
func TestAddressTableAtRegistrationAndConnect(t *testing.T) {
	s := NewSender(ClientOptions{Timeout: testTimeout, Resolver: newResolver()})
	d := newDialer(ClientOptions{}.withDefaults())
	seen := map[netip.Addr]bool{}
	for _, r := range payd.ForbiddenRanges() {
		first, last := r.Prefix.Masked().Addr(), lastAddr(r.Prefix)
		if got := payd.ForbiddenAddress(first); got == "" {
			t.Errorf("%s (%s): its first address %s is allowed", r.Prefix, r.Reason, first)
		}
		for _, ip := range []netip.Addr{first, first.Next(), last, first.Prev(), last.Next()} {
			if !ip.IsValid() || seen[ip] {
				continue
			}
			seen[ip] = true
			agree(t, s, d, ip)
			if ip.Is4() {
				a, n := ip.As4(), netip.MustParseAddr("64:ff9b::").As16()
				copy(n[12:], a[:])
				mapped, nat := netip.AddrFrom16(ip.As16()), netip.AddrFrom16(n)
				for _, wrapped := range []netip.Addr{mapped, nat} {
					if (payd.ForbiddenAddress(wrapped) == "") != (payd.ForbiddenAddress(ip) == "") {
						t.Errorf("%s is judged unlike the %s it carries", wrapped, ip)
					}
					agree(t, s, d, wrapped)
				}
			}
		}
	}
}

// TestAddressTableDisputed pins the addresses on which the registration
// and connect lists once disagreed (issue 23), and a few plain ones, at
// both callers.
func TestAddressTableDisputed(t *testing.T) {
	s := NewSender(ClientOptions{Timeout: testTimeout, Resolver: newResolver()})
	d := newDialer(ClientOptions{}.withDefaults())
	for a, allowed := range map[string]bool{
		"168.63.129.16": false, "192.88.99.1": false, "3fff::1": false, "4000::1": false,
		"64:ff9b::808:808": true, "64:ff9b::7f00:1": false, "64:ff9b:1::808:808": false,
		"8.8.8.8": true, "2606:4700:4700::1111": true, "::ffff:8.8.8.8": true, "2001:db8::1": false,
	} {
		ip := netip.MustParseAddr(a)
		if got := payd.ForbiddenAddress(ip) == ""; got != allowed {
			t.Errorf("%s: allowed = %v, want %v", a, got, allowed)
		}
		agree(t, s, d, ip)
	}
}

// agree checks that registration and connect both give the table's
// verdict on ip.
func agree(t *testing.T, s *Sender, d *dialer, ip netip.Addr) {
	t.Helper()
	reason := payd.ForbiddenAddress(ip)
	ap := netip.AddrPortFrom(ip, 443)
	regErr := payd.CheckWebhookURL("https://"+ap.String()+"/hook", false)
	connErr, ctlErr := CheckAddr(ip), d.control("tcp", ap.String(), nil)
	if reason == "" {
		if regErr != nil || connErr != nil || ctlErr != nil {
			t.Errorf("%s is allowed by the table; registration: %v, connect: %v, socket: %v", ip, regErr, connErr, ctlErr)
		}
		return
	}
	var pe *payd.Error
	if !errors.As(regErr, &pe) || pe.Field != "url" || !strings.Contains(pe.Message, reason) {
		t.Errorf("%s (%s): registration answered %v", ip, reason, regErr)
	}
	var fe *ForbiddenAddressError
	if !errors.As(connErr, &fe) || fe.Reason != reason || !errors.Is(ctlErr, ErrForbiddenAddress) {
		t.Errorf("%s (%s): connect answered %v, socket %v", ip, reason, connErr, ctlErr)
	}
	res := s.Post(context.Background(), "https://"+ap.String()+"/hook", nil, []byte("{}"))
	if !errors.As(res.Err, &fe) || fe.Reason != reason {
		t.Errorf("%s (%s): a delivery got %d %v", ip, reason, res.Status, res.Err)
	}
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
