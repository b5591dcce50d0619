package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"payd"
	"payd/clock"
)

// Sender sends emails; SMTPSender is the real one. The outbox loop hands
// it a batch at a time, so a sender may use one connection for the batch.
type Sender interface {
	// Send sends es in order and returns one error per email, in the same
	// order: nil for each email the server accepted. One email refused
	// does not fail the others. Errors never hold credentials.
	Send(ctx context.Context, es []*payd.Email) []error
}

// SMTPOptions tune the SMTP sender; zero values take the defaults.
type SMTPOptions struct {
	// TLS configures STARTTLS and smtps://; nil means the system's roots.
	// The server name is always the configured host, and TLS 1.2 is the
	// least accepted. Tests set RootCAs to trust their own server.
	TLS *tls.Config
	// Timeout bounds connecting and then each command of the exchange
	// (go-mail sets it as the connection's deadline). 30 s by default.
	Timeout time.Duration
	// HELO is the name payd gives in EHLO; the machine's host name by
	// default.
	HELO string
	// Wall is the real time, which alone stamps the Date header: a mail
	// client reads it against its own clock, so it must not follow the
	// service clock that POST /devnet/clock moves. Nil means clock.Real.
	Wall clock.Clock
}

func (o SMTPOptions) withDefaults() SMTPOptions {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Wall == nil {
		o.Wall = clock.Real{}
	}
	return o
}

// SMTPSender sends email through one SMTP server, as multipart/alternative
// (text and HTML) or text alone, with go-mail (docs/email.md says why).
// Each Send opens one connection: STARTTLS when the server offers it on
// smtp://, TLS from the start on smtps://; then AUTH PLAIN (or LOGIN when
// PLAIN is not offered), which is refused, before any credential is sent,
// over a connection that is not encrypted unless the server is on
// loopback.
type SMTPSender struct {
	cfg    SMTPConfig
	from   *netmail.Address
	domain string // of the From address, for Message-IDs
	opts   SMTPOptions
}

// NewSMTPSender returns a sender through the server cfg names, sending as
// from (--mail-from: "payd <no-reply@example.com>" or a bare address).
func NewSMTPSender(cfg SMTPConfig, from string, o SMTPOptions) (*SMTPSender, error) {
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("mail: the From address %q is not an email address", from)
	}
	_, domain, _ := strings.Cut(a.Address, "@")
	if cfg.Host == "" || cfg.Port == 0 {
		return nil, errors.New("mail: the SMTP server has no host or port")
	}
	return &SMTPSender{cfg: cfg, from: a, domain: domain, opts: o.withDefaults()}, nil
}

var _ Sender = (*SMTPSender)(nil)

// Send sends es over one connection; see Sender.
func (s *SMTPSender) Send(ctx context.Context, es []*payd.Email) []error {
	errs := make([]error, len(es))
	msgs := make([]*gomail.Msg, len(es))
	var batch []*gomail.Msg
	for i, e := range es {
		if msgs[i], errs[i] = s.message(e); errs[i] == nil {
			batch = append(batch, msgs[i])
		}
	}
	if len(batch) == 0 {
		return errs
	}
	connErr, sendErr := s.exchange(ctx, batch)
	for i, m := range msgs {
		switch {
		case m == nil:
		case connErr != nil:
			errs[i] = s.clean(fmt.Errorf("connecting to %s: %w", s.cfg.Addr(), connErr))
		case m.IsDelivered(): // accepted, even if the RSET after it failed
		case m.HasSendError():
			errs[i] = s.clean(m.SendError())
		default: // the connection check before the first message failed
			errs[i] = s.clean(cmp(sendErr, errors.New("not sent")))
		}
	}
	return errs
}

// exchange connects, sends the batch and says goodbye. connErr is a
// failure to connect, start TLS or authenticate, which fails every
// message; sendErr is what sending returned (each message also carries
// its own outcome).
func (s *SMTPSender) exchange(ctx context.Context, batch []*gomail.Msg) (connErr, sendErr error) {
	c, err := gomail.NewClient(s.cfg.Host, s.options()...)
	if err != nil {
		return err, nil
	}
	sc, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return err, nil
	}
	sendErr = c.SendWithSMTPClient(sc, batch...)
	_ = c.CloseWithSMTPClient(sc) // QUIT: the messages are through already
	return nil, sendErr
}

// options configure a go-mail client for the server.
func (s *SMTPSender) options() []gomail.Option {
	conf := &tls.Config{}
	if s.opts.TLS != nil {
		conf = s.opts.TLS.Clone()
	}
	conf.ServerName, conf.MinVersion = s.cfg.Host, max(conf.MinVersion, tls.VersionTLS12)
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.opts.Timeout), gomail.WithTLSConfig(conf),
		gomail.WithDialContextFunc(s.dialer(conf))}
	if s.cfg.ImplicitTLS {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuthCustom(&auth{user: s.cfg.Username, pass: s.cfg.Password, host: s.cfg.Host}))
	}
	if s.opts.HELO != "" {
		opts = append(opts, gomail.WithHELO(s.opts.HELO))
	}
	return opts
}

// dialer connects to the server, with TLS from the start for smtps://.
// It is ours because go-mail writes the address as host:port without
// brackets, which breaks an IPv6 literal ([::1]:25).
func (s *SMTPSender) dialer(conf *tls.Config) gomail.DialContextFunc {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		d := &net.Dialer{}
		if s.cfg.ImplicitTLS {
			return (&tls.Dialer{NetDialer: d, Config: conf}).DialContext(ctx, network, s.cfg.Addr())
		}
		return d.DialContext(ctx, network, s.cfg.Addr())
	}
}

// message renders e. The Message-ID is made of the email's id, the same
// on every attempt, so a receiving system can tell a resend after a crash
// (sent, but not yet recorded as sent) from a new email.
func (s *SMTPSender) message(e *payd.Email) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	m.FromMailAddress(s.from)
	if err := m.To(e.To); err != nil {
		return nil, fmt.Errorf("the recipient is not an email address: %w", err)
	}
	m.Subject(e.Subject)
	m.SetMessageIDWithValue(e.ID + "@" + s.domain)
	m.SetDateWithValue(s.opts.Wall.Now())
	// RFC 3834: an automatic message, to which autoresponders must not reply.
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetBodyString(gomail.TypeTextPlain, e.Text)
	if e.HTML != "" {
		m.AddAlternativeString(gomail.TypeTextHTML, e.HTML)
	}
	return m, nil
}

// clean returns err's text with the user name and password cut out, in
// case a server or library ever echoes them: errors are logged and stored
// as the email's last error. Credentials shorter than 3 characters are
// left alone, since cutting them would mangle every message.
func (s *SMTPSender) clean(err error) error {
	msg := err.Error()
	for _, secret := range []string{s.cfg.Password, s.cfg.Username} {
		if len(secret) >= 3 {
			msg = strings.ReplaceAll(msg, secret, "xxxxx")
		}
	}
	return errors.New(msg)
}

// cmp returns the first of errs that is not nil.
func cmp(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// errCleartextAuth refuses to send a password where it could be read.
var errCleartextAuth = errors.New("refusing to send the SMTP password over a connection without TLS to a host that is " +
	"not loopback (the server offered no STARTTLS; use smtps:// or a server that offers STARTTLS)")

// auth picks AUTH PLAIN, or LOGIN when the server offers only that, once
// the server's offer is known, and refuses both on a connection without
// TLS to any host but loopback: without TLS an attacker in the path can
// strip STARTTLS from the server's offer and read a PLAIN password.
type auth struct {
	user, pass, host string
	next             smtp.Auth
}

// Start implements smtp.Auth.
func (a *auth) Start(si *smtp.ServerInfo) (string, []byte, error) {
	if !si.TLS && !loopback(a.host) {
		return "", nil, errCleartextAuth
	}
	// The check above is ours; the mechanisms are told to allow what it
	// allowed (their own check knows only "localhost" and two addresses).
	switch {
	case offers(si.Auth, "PLAIN"):
		a.next = smtp.PlainAuth("", a.user, a.pass, si.Name, true)
	case offers(si.Auth, "LOGIN"):
		a.next = smtp.LoginAuth(a.user, a.pass, si.Name, true)
	default:
		return "", nil, fmt.Errorf("the SMTP server offers neither AUTH PLAIN nor LOGIN (it offers %q)", strings.Join(si.Auth, " "))
	}
	return a.next.Start(si)
}

// Next implements smtp.Auth.
func (a *auth) Next(fromServer []byte, more bool) ([]byte, error) {
	return a.next.Next(fromServer, more)
}

// offers reports whether the server lists the mechanism.
func offers(mechs []string, mech string) bool {
	for _, m := range mechs {
		if strings.EqualFold(m, mech) {
			return true
		}
	}
	return false
}
