package main

import (
	"fmt"
	"log/slog"
	"net"

	"payd"
	"payd/api"
	"payd/challenge"
	"payd/clock"
	"payd/mail"
	"payd/passkey"
	"payd/password"
	"payd/totp"
	"payd/web"
)

// challengeWidget is the bot check the dashboard's forms show: the dev
// tokens of --dev without --challenge, or the widget of the --challenge
// provider with --challenge-site-key.
func challengeWidget(cfg *Config) web.ChallengeWidget {
	if cfg.Challenge == "" && cfg.Dev {
		return web.ChallengeWidget{Kind: "dev"}
	}
	if c, err := challenge.Parse(cfg.Challenge); err == nil && c.Provider != challenge.ProviderNone && cfg.ChallengeSiteKey != "" {
		return web.ChallengeWidget{Kind: c.Provider, SiteKey: cfg.ChallengeSiteKey}
	}
	return web.ChallengeWidget{}
}

// checkSiteKey refuses a --challenge-site-key without a provider's
// --challenge, or one that is not a short printable word.
func checkSiteKey(cfg *Config, provider string) error {
	k := cfg.ChallengeSiteKey
	if k == "" {
		return nil
	}
	if provider != challenge.ProviderTurnstile && provider != challenge.ProviderHCaptcha {
		return usagef("--challenge-site-key needs --challenge turnstile:SECRET or hcaptcha:SECRET")
	}
	if len(k) > 200 {
		return usagef("--challenge-site-key is longer than 200 characters")
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c > '~' || c == '"' || c == '\'' || c == '<' || c == '>' {
			return usagef("--challenge-site-key holds a space, a quote or a character that is not printable ASCII")
		}
	}
	return nil
}

// accountOptions fills the API's account settings (docs/accounts.md):
// the password hasher, the breach check of --pwned, the bot check of
// --challenge (dev tokens by default with --dev), the passkey relying
// party of the public URL, the email letters, which can go out when
// outbox exists, and two-step sign-in's codes.
func accountOptions(o *api.Options, cfg *Config, st payd.Store, clk clock.Clock, log *slog.Logger, mailing bool) error {
	o.Passwords = password.NewHasher(password.Config{})
	if cfg.Pwned != "" {
		o.Breaches = password.NewPwned(password.PwnedConfig{BaseURL: cfg.Pwned, Clock: clk})
		log.Info("new passwords are checked against Pwned Passwords", slog.String("pwned", cfg.Pwned))
	}
	provider := ""
	if c, err := challenge.Parse(cfg.Challenge); err == nil {
		provider = c.Provider
	}
	if err := checkSiteKey(cfg, provider); err != nil {
		return err
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
		if o.Challenger, err = challenge.New(c, challenge.Options{Clock: clk, Hostname: api.PublicHost(o.PublicURL), Logger: log}); err != nil {
			return fmt.Errorf("--challenge: %w", err)
		}
		log.Info("bot check", slog.String("challenge", c.String()))
		if c.Provider != challenge.ProviderNone && cfg.ChallengeSiteKey == "" {
			log.Warn("the dashboard's sign-up, sign-in and reset forms show no bot-check widget: give its site key with --challenge-site-key")
		}
	}
	if rp, err := passkey.New(o.PublicURL, clk); err != nil {
		// An IP address for host: browsers refuse it as a relying party.
		log.Warn("passkeys are off: they need a public URL with a domain name (https, or http://localhost:PORT)",
			slog.String("public_url", o.PublicURL))
	} else {
		o.Passkeys = rp
	}
	o.Letters = mail.NewLetters()
	o.Mail = mailing
	// Only a public URL the operator named, or a specific address payd
	// listens on, is one clients use: a wildcard bind (:8080, 0.0.0.0)
	// without --public-url has none to check Host against.
	o.EnforceHost = cfg.PublicURL != "" || !wildcardURL(o.PublicURL)
	if !o.EnforceHost {
		log.Warn("listening on every address without --public-url: Host is not checked (edge_forbidden) and links name the listening address; set --public-url")
	}
	o.TwoFactor = totp.Authenticator{Issuer: "payd"}
	return nil
}

// wildcardURL reports whether a URL's host is an unspecified address
// (0.0.0.0, ::), as the default public URL of a wildcard bind is.
func wildcardURL(u string) bool {
	h := api.PublicHost(u)
	ip := net.ParseIP(h)
	return h == "" || ip != nil && ip.IsUnspecified()
}
