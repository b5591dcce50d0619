package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Resolver turns a host name into addresses. *net.Resolver implements it;
// tests give a map so a public-looking name can resolve to anything.
type Resolver interface {
	// LookupNetIP returns the addresses of host for network "ip", "ip4"
	// or "ip6", or a *net.DNSError.
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialTimeout bounds one connection attempt to one address, so a
// black-holed first address still leaves time for the next one within the
// answer deadline.
const dialTimeout = 10 * time.Second

// dialer resolves, checks and connects. It checks every resolved address
// before connecting to any, then connects to exactly the address it
// checked, and its Control hook checks again on the socket address, so no
// second resolution (DNS rebinding) can slip a different address in.
type dialer struct {
	resolver     Resolver
	checked      net.Dialer // Control refuses forbidden addresses.
	plain        net.Dialer // Only for the operator's configured proxy.
	allowPrivate bool
	proxyAddr    string         // host:port of the configured proxy, or "".
	exempt       netip.AddrPort // Tests only: one address:port let through.
}

// newDialer builds the dialer for opts; opts already has its defaults.
func newDialer(opts ClientOptions) *dialer {
	d := &dialer{
		resolver:     opts.Resolver,
		plain:        net.Dialer{Timeout: dialTimeout},
		allowPrivate: opts.AllowPrivate,
		proxyAddr:    proxyAddr(opts.Proxy),
		exempt:       opts.exempt,
	}
	d.checked = net.Dialer{Timeout: dialTimeout, Control: d.control}
	return d
}

// DialContext is the transport's only way out. The configured proxy is
// dialled as configured (the operator chose it, and it is then the
// proxy's job to filter targets); every other address is resolved,
// checked and dialled by IP.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.proxyAddr != "" && addr == d.proxyAddr {
		return d.plain.DialContext(ctx, network, addr)
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad port in %q: %w", errBadURL, addr, err)
	}
	if port == 0 { // refused at registration since ports were checked; older endpoints may hold it
		return nil, fmt.Errorf("%w: port 0 in %q", errBadURL, addr)
	}
	ips, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	// A name with any forbidden address is refused as a whole: mixing a
	// public and a private answer is a rebinding trick, not a setup.
	for _, ip := range ips {
		if err := d.check(netip.AddrPortFrom(ip, uint16(port))); err != nil {
			return nil, err
		}
	}
	return d.dialEach(ctx, network, ips, uint16(port))
}

// resolve returns the addresses to try for host: the literal itself, or
// the resolver's answer.
func (d *dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ipNetwork := "ip"
	switch network {
	case "tcp4":
		ipNetwork = "ip4"
	case "tcp6":
		ipNetwork = "ip6"
	}
	ips, err := d.resolver.LookupNetIP(ctx, ipNetwork, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return ips, nil
}

// dialEach connects to the checked addresses in order and returns the
// first connection made.
func (d *dialer) dialEach(ctx context.Context, network string, ips []netip.Addr, port uint16) (net.Conn, error) {
	var errs []error
	for _, ip := range ips {
		target := netip.AddrPortFrom(ip.Unmap(), port).String()
		conn, err := d.checked.DialContext(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control runs on the socket just before it connects. It repeats the check
// on the exact address the kernel is given, a guard against any path that
// reaches the checked dialer without going through DialContext's checks.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenAddressError{Reason: "unparsable socket address " + address}
	}
	return d.check(ap)
}

// check applies the address rules unless development allows everything.
func (d *dialer) check(ap netip.AddrPort) error {
	if d.allowPrivate || (d.exempt.IsValid() && ap == d.exempt) {
		return nil
	}
	return CheckAddr(ap.Addr())
}

// proxyAddr returns the host:port the transport dials for proxy u, in the
// same form the transport uses, or "" for no proxy.
func proxyAddr(u *url.URL) string {
	if u == nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}
