package webhook

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

// forbiddenCases holds an address of every forbidden class, by class. The
// client tests reuse it for literal URLs and for resolved host names.
var forbiddenCases = []struct {
	class string
	addrs []string
}{
	{"loopback", []string{"127.0.0.1", "127.8.9.10", "::1"}},
	{"unspecified", []string{"0.0.0.0", "0.1.2.3", "::"}},
	{"private", []string{"10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1"}},
	{"link-local", []string{"169.254.1.1", "fe80::1", "febf::1"}},
	{"carrier-grade NAT", []string{"100.64.0.1", "100.127.255.254"}},
	{"multicast", []string{"224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1"}},
	{"broadcast", []string{"255.255.255.255"}},
	{"metadata", []string{"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "168.63.129.16"}},
	{"IPv4-mapped", []string{"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:0.0.0.0"}},
	{"NAT64", []string{"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::c0a8:101", "64:ff9b:1::808:808"}},
	{"6to4", []string{"2002:7f00:1::1", "2002:808:808::1"}},
	{"IPv4-compatible", []string{"::7f00:1", "::a00:1", "::808:808"}},
	{"Teredo", []string{"2001:0:4136:e378:8000:63bf:3fff:fdd2"}},
	{"documentation", []string{"192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "3fff::1"}},
	{"benchmarking", []string{"198.18.0.1", "198.19.255.255", "2001:2::1"}},
	{"reserved", []string{"240.0.0.1", "192.0.0.8", "192.88.99.1", "100::1", "fec0::1", "4000::1", "5f00::1"}},
}

func TestCheckAddrForbidden(t *testing.T) {
	for _, c := range forbiddenCases {
		for _, a := range c.addrs {
			err := CheckAddr(netip.MustParseAddr(a))
			var f *ForbiddenAddressError
			if !errors.Is(err, ErrForbiddenAddress) || !errors.As(err, &f) {
				t.Errorf("%s %s: err = %v, want forbidden", c.class, a, err)
				continue
			}
			if f.Addr.String() != netip.MustParseAddr(a).String() || f.Reason == "" {
				t.Errorf("%s %s: error names %s (%q)", c.class, a, f.Addr, f.Reason)
			}
		}
	}
}

func TestCheckAddrZoneAndInvalid(t *testing.T) {
	for _, a := range []netip.Addr{{}, netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("2606:4700::1%eth0")} {
		if err := CheckAddr(a); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%v: err = %v", a, err)
		}
	}
}

func TestCheckAddrAllowed(t *testing.T) {
	for _, a := range []string{
		"8.8.8.8", "1.1.1.1", "93.184.215.14",
		"9.255.255.255", "11.0.0.0", // around 10/8
		"100.63.255.255", "100.128.0.0", // around 100.64/10
		"172.15.255.255", "172.32.0.0", // around 172.16/12
		"192.167.255.255", "192.169.0.0", // around 192.168/16
		"198.17.255.255", "198.20.0.0", // around 198.18/15
		"169.253.255.255", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001::200e",
		"::ffff:8.8.8.8", "64:ff9b::808:808", // public IPv4 inside
	} {
		if err := CheckAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// TestControlChecksSocketAddress covers the last guard: the socket hook
// refuses by itself, whatever reached it.
func TestControlChecksSocketAddress(t *testing.T) {
	d := newDialer(ClientOptions{}.withDefaults())
	for _, a := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:10.0.0.1]:80", "[fe80::1%eth0]:80", "not an address"} {
		if err := d.control("tcp", a, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("control(%q) = %v", a, err)
		}
	}
	if err := d.control("tcp", "8.8.8.8:443", nil); err != nil {
		t.Errorf("control(8.8.8.8) = %v", err)
	}
	dev := newDialer(ClientOptions{AllowPrivate: true}.withDefaults())
	if err := dev.control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("dev control(127.0.0.1) = %v", err)
	}
}

func TestProxyAddr(t *testing.T) {
	for raw, want := range map[string]string{
		"http://10.1.2.3":           "10.1.2.3:80",
		"https://proxy.corp":        "proxy.corp:443",
		"http://[fd00::1]:3128":     "[fd00::1]:3128",
		"socks5://127.0.0.1":        "127.0.0.1:1080",
		"http://user:pw@proxy:8080": "proxy:8080",
	} {
		u, _ := url.Parse(raw)
		if got := proxyAddr(u); got != want {
			t.Errorf("proxyAddr(%s) = %q, want %q", raw, got, want)
		}
	}
	if proxyAddr(nil) != "" {
		t.Error("nil proxy has an address")
	}
}
