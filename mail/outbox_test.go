package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"payd"
	"payd/clock"
	"payd/loop/looptest"
	"payd/mail"
	"payd/store"
	"payd/store/storetest"
)

// t0 is the tests' service time: whole microseconds, as stored.
var t0 = time.Date(2031, 4, 5, 6, 7, 8, 123456000, time.UTC)

const (
	textBody = "Your code is 123456.\nIt lapses in 15 minutes; a long line follows so that quoted-printable has to wrap it " +
		"somewhere past the seventy-sixth character of the line.\n"
	htmlBody = "<p>Your code is <b>123456</b>.</p>"
	subject  = "Ihr Code für payd"
)

// bundle is what an outbox test starts from.
type bundle struct {
	clk    *clock.Fake
	st     *store.DB
	srv    *server
	cfg    mail.SMTPConfig
	outbox *mail.Outbox
}

// each runs fn on every database (PostgreSQL when PAYD_TEST_POSTGRES is set).
func each(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { fn(t, d) })
	}
}

// setup starts a server in mode and an outbox over a fresh store that
// sends to it as the test user.
func setup(t *testing.T, dialect string, mode serverMode) *bundle {
	t.Helper()
	b := &bundle{clk: clock.NewFake(t0)}
	b.st = storetest.Open(t, dialect, b.clk)
	b.srv = startServer(t, mode)
	b.cfg = mail.SMTPConfig{Host: "127.0.0.1", Port: b.srv.port(), Username: testUser, Password: testPass,
		ImplicitTLS: mode == implicitTLS}
	b.outbox = b.newOutbox(t, b.st, b.cfg)
	return b
}

// newOutbox returns an outbox over st sending through cfg, trusting the
// test server's certificate.
func (b *bundle) newOutbox(t *testing.T, st payd.Store, cfg mail.SMTPConfig) *mail.Outbox {
	t.Helper()
	s, err := mail.NewSMTPSender(cfg, "payd <no-reply@shop.example>", b.smtpOptions())
	if err != nil {
		t.Fatal(err)
	}
	return mail.NewOutbox(st, s, b.clk, storetest.Logger(t), mail.OutboxOptions{})
}

func (b *bundle) smtpOptions() mail.SMTPOptions {
	return mail.SMTPOptions{TLS: &tls.Config{RootCAs: b.srv.roots}, Timeout: 5 * time.Second}
}

// mustEmail stores a new email due now.
func mustEmail(t *testing.T, st payd.Store, now time.Time, to string) *payd.Email {
	t.Helper()
	e, err := payd.NewEmail(to, subject, textBody, htmlBody, "signup_code", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateEmail(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

// runOnce makes one pass of o.
func runOnce(t *testing.T, o *mail.Outbox) {
	t.Helper()
	if err := o.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// emailByID reads the email back.
func emailByID(t *testing.T, st payd.Store, id string) *payd.Email {
	t.Helper()
	e, err := st.EmailByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmailArrives(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode serverMode
		tls  bool
	}{{"STARTTLS", startTLS, true}, {"smtps", implicitTLS, true}, {"loopback without TLS", noTLS, false}} {
		t.Run(mode.name, func(t *testing.T) {
			each(t, func(t *testing.T, dialect string) {
				b := setup(t, dialect, mode.mode)
				e := mustEmail(t, b.st, t0, "Ada@Example.com")
				runOnce(t, b.outbox)
				msgs := b.srv.messages()
				if len(msgs) != 1 {
					t.Fatalf("the server got %d messages", len(msgs))
				}
				m := msgs[0]
				if m.tls != mode.tls || m.user != testUser || m.from != "no-reply@shop.example" ||
					len(m.to) != 1 || m.to[0] != "Ada@Example.com" {
					t.Fatalf("envelope: tls %v, user %q, from %q, to %v", m.tls, m.user, m.from, m.to)
				}
				checkMessage(t, m.data, e)
				got := emailByID(t, b.st, e.ID)
				if got.Status != payd.EmailSent || got.Attempts != 1 || got.SentAt == nil || !got.SentAt.Equal(t0) ||
					got.Text != "" || got.HTML != "" || got.NextAttemptAt != nil {
					t.Fatalf("after sending: %+v", got)
				}
				runOnce(t, b.outbox)
				if n := len(b.srv.messages()); n != 1 {
					t.Fatalf("sent again: %d messages", n)
				}
			})
		})
	}
}

// checkMessage parses the message as a mail client would and checks its
// headers and both parts.
func checkMessage(t *testing.T, data []byte, e *payd.Email) {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	h := msg.Header
	dec := new(mime.WordDecoder)
	subj, err := dec.DecodeHeader(h.Get("Subject"))
	if err != nil || subj != subject {
		t.Errorf("Subject %q (%v), want %q", subj, err, subject)
	}
	if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "payd" || from[0].Address != "no-reply@shop.example" {
		t.Errorf("From %q: %v", h.Get("From"), err)
	}
	if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "Ada@Example.com" {
		t.Errorf("To %q: %v", h.Get("To"), err)
	}
	if id := h.Get("Message-Id"); id != "<"+e.ID+"@shop.example>" {
		t.Errorf("Message-ID %q", id)
	}
	if _, err := h.Date(); err != nil {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	if a := h.Get("Auto-Submitted"); a != "auto-generated" {
		t.Errorf("Auto-Submitted %q", a)
	}
	typ, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || typ != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", h.Get("Content-Type"), err)
	}
	parts := map[string]string{}
	var order []string
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if !strings.EqualFold(pp["charset"], "utf-8") {
			t.Errorf("part %s charset %q", pt, pp["charset"])
		}
		parts[pt] = strings.ReplaceAll(string(b), "\r\n", "\n")
		order = append(order, pt)
	}
	// RFC 2046: the richest alternative comes last.
	if len(order) != 2 || order[0] != "text/plain" || order[1] != "text/html" {
		t.Fatalf("parts %v", order)
	}
	if parts["text/plain"] != textBody || parts["text/html"] != htmlBody {
		t.Errorf("bodies %q", parts)
	}
}

// TestRetries runs the whole schedule against a server that refuses and
// one that is down: each attempt comes exactly when due (not a
// millisecond early), and after the last the email has failed.
func TestRetries(t *testing.T) {
	refused := &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "mailbox unavailable"}
	for _, c := range []struct {
		name, reason string
		down         bool
	}{{"refused", "550", false}, {"down", "connecting to 127.0.0.1", true}} {
		t.Run(c.name, func(t *testing.T) {
			each(t, func(t *testing.T, dialect string) {
				b := setup(t, dialect, startTLS)
				b.srv.refuseWith(refused)
				if c.down {
					cfg := b.cfg
					cfg.Port = freePort(t)
					b.outbox = b.newOutbox(t, b.st, cfg)
				}
				e := mustEmail(t, b.st, t0, "ada@example.com")
				tries := func() int {
					if c.down {
						return 0
					}
					return b.srv.tries()
				}
				runOnce(t, b.outbox)
				at := t0
				for n := 1; n < mail.MaxAttempts; n++ {
					got := emailByID(t, b.st, e.ID)
					next := at.Add(mail.RetryDelays[n-1])
					if got.Status != payd.EmailRetrying || got.Attempts != n || got.NextAttemptAt == nil ||
						!got.NextAttemptAt.Equal(next) || !strings.Contains(got.LastError, c.reason) || got.Text != textBody {
						t.Fatalf("after attempt %d: %+v, want next %v", n, got, next)
					}
					if strings.Contains(got.LastError, testPass) || strings.Contains(got.LastError, testUser) {
						t.Fatalf("credentials in the error: %s", got.LastError)
					}
					before := tries()
					b.clk.Set(next.Add(-time.Millisecond))
					runOnce(t, b.outbox)
					if emailByID(t, b.st, e.ID).Attempts != n || tries() != before {
						t.Fatalf("attempt %d came early", n+1)
					}
					b.clk.Set(next)
					runOnce(t, b.outbox)
					if !c.down && tries() != before+1 {
						t.Fatalf("attempt %d: the server saw %d tries, want %d", n+1, tries(), before+1)
					}
					at = next
				}
				got := emailByID(t, b.st, e.ID)
				if got.Status != payd.EmailFailed || got.Attempts != mail.MaxAttempts || got.NextAttemptAt != nil ||
					got.Text != "" || got.HTML != "" || got.SentAt != nil {
					t.Fatalf("after the last attempt: %+v", got)
				}
				b.clk.Advance(100 * time.Hour)
				runOnce(t, b.outbox)
				if emailByID(t, b.st, e.ID).Attempts != mail.MaxAttempts {
					t.Fatal("tried again after failing")
				}
				if len(b.srv.messages()) != 0 {
					t.Fatal("a refused message arrived")
				}
			})
		})
	}
}

// TestRefusalThenAccepted: the server refuses once, then accepts; the
// retry delivers the email once.
func TestRefusalThenAccepted(t *testing.T) {
	each(t, func(t *testing.T, dialect string) {
		b := setup(t, dialect, startTLS)
		b.srv.refuseWith(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"})
		e := mustEmail(t, b.st, t0, "ada@example.com")
		runOnce(t, b.outbox)
		b.srv.refuseWith(nil)
		b.clk.Advance(mail.RetryDelays[0])
		runOnce(t, b.outbox)
		got := emailByID(t, b.st, e.ID)
		if got.Status != payd.EmailSent || got.Attempts != 2 || got.LastError != "" || len(b.srv.messages()) != 1 {
			t.Fatalf("after the retry: %+v, %d messages", got, len(b.srv.messages()))
		}
	})
}

// openTwice opens one database twice, as two replicas would.
func openTwice(t *testing.T, dialect string, clk clock.Clock) (*store.DB, *store.DB) {
	t.Helper()
	dsn := storetest.SQLiteDSN(t)
	if dialect == "postgres" {
		dsn = storetest.PostgresDSN(t)
	}
	return storetest.OpenDSN(t, dsn, clk), storetest.OpenDSN(t, dsn, clk)
}

// TestCrashedSenderClaimLapses: a replica claims an email and dies before
// sending it; another replica sends it once its lease lapses, exactly
// once, and the dead replica's late save is refused.
func TestCrashedSenderClaimLapses(t *testing.T) {
	each(t, func(t *testing.T, dialect string) {
		b := setup(t, dialect, startTLS)
		dead, alive := openTwice(t, dialect, b.clk)
		e := mustEmail(t, dead, t0, "ada@example.com")
		ctx := context.Background()
		claimed, err := dead.ClaimDueEmails(ctx, t0, t0.Add(payd.EmailLease), 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d: %v", len(claimed), err)
		}
		o := b.newOutbox(t, alive, b.cfg)
		runOnce(t, o)
		b.clk.Advance(payd.EmailLease - time.Millisecond)
		runOnce(t, o)
		if n := len(b.srv.messages()); n != 0 {
			t.Fatalf("sent %d while the claim held", n)
		}
		b.clk.Advance(time.Millisecond)
		runOnce(t, o)
		b.clk.Advance(time.Hour)
		runOnce(t, o)
		if n := len(b.srv.messages()); n != 1 {
			t.Fatalf("sent %d times, want once", n)
		}
		got := emailByID(t, alive, e.ID)
		if got.Status != payd.EmailSent || got.Attempts != 1 {
			t.Fatalf("after the takeover: %+v", got)
		}
		claimed[0].Sent(t0)
		if err := dead.SaveEmail(ctx, claimed[0]); payd.ErrorCode(err) != payd.ErrConflict {
			t.Fatalf("the dead replica's late save: %v", err)
		}
	})
}

// TestReplicasShareTheWork runs two outboxes over one database at once:
// every email arrives exactly once.
func TestReplicasShareTheWork(t *testing.T) {
	each(t, func(t *testing.T, dialect string) {
		b := setup(t, dialect, startTLS)
		one, two := openTwice(t, dialect, b.clk)
		const n = 30
		for range n {
			mustEmail(t, one, t0, "ada@example.com")
		}
		os := []*mail.Outbox{b.newOutbox(t, one, b.cfg), b.newOutbox(t, two, b.cfg)}
		var wg sync.WaitGroup
		for _, o := range os {
			wg.Go(func() {
				if err := o.RunOnce(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for _, m := range b.srv.messages() {
			msg, err := netmail.ReadMessage(bytes.NewReader(m.data))
			if err != nil {
				t.Fatal(err)
			}
			seen[msg.Header.Get("Message-Id")]++
		}
		if len(seen) != n {
			t.Fatalf("%d distinct emails arrived, want %d", len(seen), n)
		}
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("%s arrived %d times", id, c)
			}
		}
	})
}

// TestKept: without a sender (--dev) the outbox keeps every email, bodies
// and all, for the development listing, and nothing is sent.
func TestKept(t *testing.T) {
	each(t, func(t *testing.T, dialect string) {
		clk := clock.NewFake(t0)
		st := storetest.Open(t, dialect, clk)
		o := mail.NewOutbox(st, nil, clk, storetest.Logger(t), mail.OutboxOptions{})
		first := mustEmail(t, st, t0, "ada@example.com")
		second := mustEmail(t, st, t0.Add(time.Second), "ada@example.com")
		listed, err := st.ListEmails(context.Background(), "ADA@example.com", 10)
		if err != nil || len(listed) != 2 || listed[0].ID != second.ID || listed[0].Text != textBody {
			t.Fatalf("listed before the outbox ran: %+v, %v", listed, err)
		}
		clk.Advance(time.Second)
		runOnce(t, o)
		for _, e := range []*payd.Email{first, second} {
			got := emailByID(t, st, e.ID)
			if got.Status != payd.EmailKept || got.Text != textBody || got.HTML != htmlBody || got.NextAttemptAt != nil {
				t.Fatalf("kept: %+v", got)
			}
		}
	})
}

// TestWake: the started loop sends a new email when woken, without
// waiting for its tick (the fake clock never moves here).
func TestWake(t *testing.T) {
	b := setup(t, "sqlite", startTLS)
	b.outbox.Start(context.Background())
	defer b.outbox.Stop()
	mustEmail(t, b.st, t0, "ada@example.com")
	b.outbox.Wake()
	wall := clock.Real{}
	deadline := wall.Now().Add(10 * time.Second)
	for len(b.srv.messages()) == 0 {
		if wall.Now().After(deadline) {
			t.Fatal("the woken loop sent nothing")
		}
		clock.Sleep(wall, 5*time.Millisecond, nil)
	}
}

func TestOutboxStartStop(t *testing.T) {
	b := setup(t, "sqlite", startTLS)
	looptest.Check(t, b.outbox)
}

// TestBadCredentials: the server refuses the login; the error says so
// without the user name or password.
func TestBadCredentials(t *testing.T) {
	srv := startServer(t, startTLS)
	cfg := mail.SMTPConfig{Host: "127.0.0.1", Port: srv.port(), Username: "someone@example.com", Password: "wrong-Passw0rd"}
	s, err := mail.NewSMTPSender(cfg, "no-reply@shop.example", mail.SMTPOptions{TLS: &tls.Config{RootCAs: srv.roots}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := payd.NewEmail("ada@example.com", "Hi", "Hello", "", "test", t0)
	errs := s.Send(context.Background(), []*payd.Email{e})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "535") {
		t.Fatalf("error %v, want the server's 535", errs[0])
	}
	for _, secret := range []string{cfg.Password, cfg.Username} {
		if strings.Contains(errs[0].Error(), secret) {
			t.Fatalf("the error holds a credential: %v", errs[0])
		}
	}
	if strings.Contains(cfg.String(), cfg.Password) || strings.Contains(cfg.String(), cfg.Username) {
		t.Fatalf("String() holds a credential: %s", cfg)
	}
}

// TestUntrustedCertificate: a server whose certificate does not verify
// gets nothing, not even the password.
func TestUntrustedCertificate(t *testing.T) {
	srv := startServer(t, startTLS)
	cfg := mail.SMTPConfig{Host: "127.0.0.1", Port: srv.port(), Username: testUser, Password: testPass}
	s, err := mail.NewSMTPSender(cfg, "no-reply@shop.example", mail.SMTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := payd.NewEmail("ada@example.com", "Hi", "Hello", "", "test", t0)
	if errs := s.Send(context.Background(), []*payd.Email{e}); errs[0] == nil || !strings.Contains(errs[0].Error(), "certificate") {
		t.Fatalf("error %v, want a certificate error", errs[0])
	}
	if srv.tries() != 0 {
		t.Fatal("the server got a MAIL command over an unverified connection")
	}
}

// senderFunc is a Sender made of a function, for the loop's own rules.
type senderFunc func(ctx context.Context, es []*payd.Email) []error

func (f senderFunc) Send(ctx context.Context, es []*payd.Email) []error { return f(ctx, es) }

// TestShutdownMidSend: a send cut short by Stop (ctx ended) is handed back
// due at once, its attempt not counted, instead of waiting for its lease.
func TestShutdownMidSend(t *testing.T) {
	each(t, func(t *testing.T, dialect string) {
		clk := clock.NewFake(t0)
		st := storetest.Open(t, dialect, clk)
		ctx, cancel := context.WithCancel(context.Background())
		o := mail.NewOutbox(st, senderFunc(func(ctx context.Context, es []*payd.Email) []error {
			cancel()
			errs := make([]error, len(es))
			for i := range errs {
				errs[i] = ctx.Err()
			}
			return errs
		}), clk, storetest.Logger(t), mail.OutboxOptions{})
		e := mustEmail(t, st, t0, "ada@example.com")
		if err := o.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		got := emailByID(t, st, e.ID)
		if got.Status != payd.EmailPending || got.Attempts != 0 || got.LeaseUntil != nil || got.NextAttemptAt == nil ||
			!got.NextAttemptAt.Equal(t0) || got.LastError != "" {
			t.Fatalf("after a send cut short: %+v", got)
		}
	})
}

// TestIPv6Literal: a server named by an IPv6 address (smtps://u:p@[::1]:465)
// is reached, over implicit TLS and STARTTLS alike.
func TestIPv6Literal(t *testing.T) {
	for _, mode := range []serverMode{implicitTLS, startTLS} {
		srv := startServerOn(t, mode, "[::1]:0")
		cfg, err := mail.ParseSMTPURL("smtp://u:p@[::1]:" + strconv.Itoa(srv.port()))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Username, cfg.Password, cfg.ImplicitTLS = testUser, testPass, mode == implicitTLS
		s, err := mail.NewSMTPSender(cfg, "no-reply@shop.example", mail.SMTPOptions{TLS: &tls.Config{RootCAs: srv.roots}})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := payd.NewEmail("ada@example.com", "Hi", "Hello", "", "test", t0)
		if errs := s.Send(context.Background(), []*payd.Email{e}); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if m := srv.messages(); len(m) != 1 || !m[0].tls {
			t.Fatalf("messages %+v", m)
		}
	}
}
