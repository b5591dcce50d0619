// Package challenge verifies the bot-check tokens of sign-up, sign-in and
// password reset (spec 5 rule 8, docs/bot-check.md): through Cloudflare
// Turnstile or hCaptcha in production, through tokens payd issues itself
// with --dev, or not at all with --challenge none.
package challenge

import (
	"context"
	"strings"

	"payd"
)

// The providers --challenge names.
const (
	ProviderTurnstile = "turnstile"
	ProviderHCaptcha  = "hcaptcha"
	ProviderNone      = "none"
)

// maxSecret bounds a provider secret: Turnstile's are 35 characters and
// hCaptcha's 42 or so; a value far longer is a paste gone wrong.
const maxSecret = 256

// Config is a parsed --challenge value. Its String form hides the secret,
// so a Config may be logged.
type Config struct {
	Provider string // ProviderTurnstile, ProviderHCaptcha or ProviderNone
	Secret   string // the provider's secret key; empty for none
}

// String names the provider and hides the secret.
func (c Config) String() string {
	if c.Secret == "" {
		return c.Provider
	}
	return c.Provider + ":[redacted]"
}

// Parse reads the value of --challenge: "turnstile:SECRET",
// "hcaptcha:SECRET" or "none". The error is invalid_request on field
// challenge and never repeats the secret, since a mistyped flag lands in
// logs and terminals.
func Parse(s string) (Config, error) {
	if s == ProviderNone {
		return Config{Provider: ProviderNone}, nil
	}
	name, secret, ok := strings.Cut(s, ":")
	if !ok || (name != ProviderTurnstile && name != ProviderHCaptcha) {
		return Config{}, payd.FieldError("challenge", "--challenge must be turnstile:SECRET, hcaptcha:SECRET or none")
	}
	if secret == "" {
		return Config{}, payd.FieldError("challenge", "--challenge %s needs the widget's secret key after the colon", name)
	}
	if len(secret) > maxSecret {
		return Config{}, payd.FieldError("challenge", "the %s secret is longer than %d characters", name, maxSecret)
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; c <= ' ' || c > '~' {
			return Config{}, payd.FieldError("challenge", "the %s secret holds a space or a character that is not printable ASCII", name)
		}
	}
	return Config{Provider: name, Secret: secret}, nil
}

// New returns the Challenger a Config names. The dev challenger is not
// among them: --dev makes it with NewDev, over the database.
func New(c Config, o Options) (payd.Challenger, error) {
	switch c.Provider {
	case ProviderTurnstile:
		return NewTurnstile(c.Secret, o), nil
	case ProviderHCaptcha:
		return NewHCaptcha(c.Secret, o), nil
	case ProviderNone:
		return None{}, nil
	}
	return nil, payd.FieldError("challenge", "unknown bot-check provider %q", c.Provider)
}

// None accepts every token, even none at all. It is for a deployment whose
// sign-up, sign-in and reset are already behind a bot check of their own (a
// WAF or an edge challenge in front of payd), or a closed one reached only
// over a private network, with sign-up paused and users made by the CLI;
// the per-IP limits of spec 8.2 still apply. It is also the operator's way
// out of a long provider outage, since payd otherwise fails closed.
type None struct{}

// Verify accepts the token.
func (None) Verify(context.Context, payd.ChallengeForm, string, string) error { return nil }

var _ payd.Challenger = None{}
