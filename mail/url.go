package mail

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Default ports: message submission with STARTTLS (RFC 6409) for smtp://,
// submission over implicit TLS (RFC 8314) for smtps://.
const (
	DefaultPort    = 587
	DefaultTLSPort = 465
)

// SMTPConfig is a mail server as --smtp names it.
type SMTPConfig struct {
	Host string
	Port int
	// Username and Password are for AUTH; both empty for a server that
	// takes mail without it (a local relay).
	Username string
	Password string
	// ImplicitTLS is smtps://: TLS from the first byte. Otherwise the
	// connection starts in the clear and is upgraded with STARTTLS
	// whenever the server offers it.
	ImplicitTLS bool
}

// ParseSMTPURL reads smtp://USER:PASS@HOST:PORT or smtps://…: the user
// name and password percent-decoded (a password holding '@', ':' or '/'
// must be written %40, %3A, %2F), the port 587 or 465 when left out, and
// nothing after the port (no path, query or fragment). The errors never
// quote the URL, since it holds the password.
func ParseSMTPURL(s string) (SMTPConfig, error) {
	var c SMTPConfig
	scheme, _, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		return c, errors.New("the SMTP URL must look like smtp://USER:PASS@HOST:PORT or smtps://USER:PASS@HOST:PORT")
	case strings.EqualFold(scheme, "smtp"):
	case strings.EqualFold(scheme, "smtps"):
		c.ImplicitTLS = true
	default:
		return c, errors.New("the SMTP URL's scheme must be smtp or smtps")
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the whole URL: say what is wrong without it.
		return c, errors.New("the SMTP URL is malformed (percent-encode '@', ':', '/' and '%' in the user name and password)")
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return c, errors.New("the SMTP URL may hold nothing after HOST:PORT")
	}
	if c.Host = u.Hostname(); c.Host == "" {
		return c, errors.New("the SMTP URL names no host")
	}
	if !validHost(c.Host) {
		return c, errors.New("the SMTP URL's host must be a host name or an IP address ([…] for IPv6)")
	}
	if c.Port, err = port(u.Port(), c.ImplicitTLS); err != nil {
		return c, err
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
		if c.Username == "" || c.Password == "" {
			return c, errors.New("the SMTP URL must give both a user name and a password, or neither")
		}
	}
	return c, nil
}

// validHost reports whether host is an IP address or a DNS name: letters,
// digits, '-', '_' and dots, at most 253 characters.
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	if len(host) > 253 || strings.HasPrefix(host, ".") || strings.Contains(host, "..") {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// port reads the URL's port, or the scheme's default when it has none.
func port(s string, implicitTLS bool) (int, error) {
	if s == "" {
		if implicitTLS {
			return DefaultTLSPort, nil
		}
		return DefaultPort, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, errors.New("the SMTP URL's port must be a number from 1 to 65535")
	}
	return p, nil
}

// Addr is host:port.
func (c SMTPConfig) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// String is the URL with the user name and password left out, for logs.
func (c SMTPConfig) String() string {
	u := url.URL{Scheme: "smtp", Host: c.Addr()}
	if c.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if c.Username != "" {
		u.User = url.UserPassword("xxxxx", "xxxxx")
	}
	return u.String()
}

// loopback reports whether host is this machine: "localhost" or a
// loopback address. Mail to it never crosses a network.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
