package main

import (
	"fmt"
	"log/slog"
	"net/url"

	"payd"
	"payd/api"
	"payd/challenge"
	"payd/clock"
	"payd/mail"
	"payd/password"
)

// accountOptions fills the API's account settings (docs/accounts.md):
// the password hasher, the breach check of --pwned, the bot check of
// --challenge (dev tokens by default with --dev), and the email letters,
// which can go out when outbox exists.
func accountOptions(o *api.Options, cfg *Config, st payd.Store, clk clock.Clock, log *slog.Logger, mailing bool) error {
	o.Passwords = password.NewHasher(password.Config{})
	if cfg.Pwned != "" {
		o.Breaches = password.NewPwned(password.PwnedConfig{BaseURL: cfg.Pwned, Clock: clk})
		log.Info("new passwords are checked against Pwned Passwords", slog.String("pwned", cfg.Pwned))
	}
	switch {
	case cfg.Challenge == "" && cfg.Dev:
		dev := challenge.NewDev(st, clk)
		o.Challenger, o.DevChallenges = dev, dev
	case cfg.Challenge == "":
		o.Challenger = challenge.None{}
		log.Warn("no bot check on sign-up, sign-in and reset: choose one with --challenge turnstile:SECRET or hcaptcha:SECRET, or --challenge none to silence this")
	default:
		c, err := challenge.Parse(cfg.Challenge)
		if err != nil {
			return usagef("--challenge: %v", err)
		}
		if o.Challenger, err = challenge.New(c, challenge.Options{Clock: clk, Hostname: publicHost(o.PublicURL), Logger: log}); err != nil {
			return fmt.Errorf("--challenge: %w", err)
		}
		log.Info("bot check", slog.String("challenge", c.String()))
	}
	o.Letters = mail.NewLetters()
	o.Mail = mailing
	o.EnforceHost = true
	return nil
}

// publicHost is the host name of the public URL, which a bot-check answer
// must name.
func publicHost(public string) string {
	u, err := url.Parse(public)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
