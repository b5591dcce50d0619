package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"payd"
)

// errBadURL marks an endpoint URL that cannot be sent to at all (it does
// not parse, or names no usable port), so that Reason files it under
// invalid url with ErrInsecureURL.
var errBadURL = errors.New("webhook: bad endpoint URL")

// Reason maps why an attempt got no answer onto the fixed vocabulary of
// the delivery log (payd.AttemptTimeout and the rest). The error itself
// can name payd's resolver, an internal address a name resolved to or a
// proxy; it goes to payd's log, never to the business.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrForbiddenAddress):
		return payd.AttemptForbiddenAddress
	case errors.Is(err, ErrInsecureURL), errors.Is(err, errBadURL):
		return payd.AttemptInvalidURL
	case isDNS(err):
		return payd.AttemptDNSFailure
	case isTLS(err):
		return payd.AttemptTLSError
	case isTimeout(err):
		return payd.AttemptTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return payd.AttemptConnectionRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNABORTED):
		return payd.AttemptConnectionClosed
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return payd.AttemptUnreachable
	}
	return payd.AttemptConnectionError
}

// isDNS reports a failed name lookup, including the dialer's own "no
// addresses" answer.
func isDNS(err error) bool {
	var d *net.DNSError
	return errors.As(err, &d)
}

// isTLS reports a failed TLS handshake: a certificate that does not
// verify, an alert from the receiver, or something that is not TLS.
func isTLS(err error) bool {
	var (
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

// isTimeout reports the answer deadline, or a connect or handshake that
// ran out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
