package main

import (
	"errors"
	"fmt"
	"log/slog"

	"payd"
	"payd/clock"
	"payd/mail"
)

// newOutbox returns the email outbox serve runs (docs/email.md): with
// --dev one that keeps every email for GET /devnet/emails; with --smtp
// one that sends through that server as --mail-from; otherwise none
// (nil), and a route that must send email answers email_unavailable.
func newOutbox(cfg *Config, st payd.Store, clk clock.Clock, log *slog.Logger) (*mail.Outbox, error) {
	switch {
	case cfg.Dev:
		if cfg.SMTP != "" {
			log.Info("--dev keeps emails for GET /devnet/emails; --smtp is not used")
		}
		return mail.NewOutbox(st, nil, clk, log, mail.OutboxOptions{}), nil
	case cfg.SMTP == "" && cfg.MailFrom != "":
		return nil, errors.New("--mail-from needs --smtp, the mail server to send through")
	case cfg.SMTP == "":
		return nil, nil
	case cfg.MailFrom == "":
		return nil, errors.New("--smtp needs --mail-from, the address payd's emails come from")
	}
	sc, err := mail.ParseSMTPURL(cfg.SMTP)
	if err != nil {
		return nil, fmt.Errorf("--smtp: %w", err)
	}
	s, err := mail.NewSMTPSender(sc, cfg.MailFrom, mail.SMTPOptions{})
	if err != nil {
		return nil, fmt.Errorf("--mail-from: %w", err)
	}
	log.Info("email goes out through SMTP", slog.String("smtp", sc.String()))
	return mail.NewOutbox(st, s, clk, log, mail.OutboxOptions{}), nil
}
