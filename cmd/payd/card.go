package main

import (
	"context"
	"log/slog"
	"net/http"

	"payd"
	"payd/api"
	"payd/card/sandbox"
	"payd/card/stripe"
	"payd/chain/devnet"
	"payd/clock"
	"payd/store"
)

// The card providers --card chooses (docs/card.md).
const (
	cardNone    = "none"
	cardSandbox = sandbox.Name
	cardStripe  = "stripe"
)

// The devnet delivers the sandbox's coin.
var _ sandbox.Deliverer = (*devnet.Devnet)(nil)

// card is the configured card provider: the provider for api.Options.Card
// (nil for none), and the sandbox's pages when it is the sandbox.
type card struct {
	provider payd.CardProvider
	sandbox  *sandbox.Provider
}

// cardChoice is --card, or its default: the sandbox with --dev, none
// otherwise.
func (c *Config) cardChoice() string {
	switch {
	case c.Card != "":
		return c.Card
	case c.Dev:
		return cardSandbox
	}
	return cardNone
}

// checkCard refuses a --card that serve cannot run: an unknown provider,
// stripe without its secrets, or the sandbox without --dev (it delivers its coin through a network
// adapter of its own, and only the devnet has one).
func (c *Config) checkCard() error {
	switch name := c.cardChoice(); {
	case name == cardSandbox && !c.Dev:
		return usagef("--card sandbox needs --dev: the sandbox delivers its coin on the devnet, " +
			"the only network it can send on; without --dev use --card none")
	case name == cardStripe && (c.StripeSecretKey == "" || c.StripeWebhookSecret == ""):
		return usagef("--card stripe needs --stripe-secret-key and --stripe-webhook-secret (docs/card.md)")
	case name != cardSandbox && name != cardStripe && name != cardNone:
		return usagef("--card %q: use sandbox, stripe or none (docs/card.md)", name)
	}
	return nil
}

// newCard makes the provider --card names (checkCard has passed).
func newCard(cfg *Config, db *store.DB, clk clock.Clock, public string, dn *devnet.Devnet, log *slog.Logger) (*card, error) {
	if err := cfg.checkCard(); err != nil {
		return nil, err
	}
	switch cfg.cardChoice() {
	case cardNone:
		return &card{}, nil
	case cardStripe:
		// Stripe signs webhooks with the real time: the tolerance is
		// measured on the wall clock even when --dev moves the service's.
		p, err := stripe.New(stripe.Config{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret,
			Clock: clock.Real{}})
		if err != nil {
			return nil, err
		}
		return &card{provider: p}, nil
	}
	sb, err := sandbox.New(sandbox.Options{Store: db, Clock: clk, PublicURL: public, Deliverer: dn,
		Log: log.With(slog.String("card", sandbox.Name))})
	if err != nil {
		return nil, err
	}
	return &card{provider: sb, sandbox: sb}, nil
}

// connect lets the sandbox tell srv of each change its page makes at once,
// as a provider's webhook would: srv polls the session and applies what it
// says. A failure is logged; the card poller tries again.
func (c *card) connect(srv *api.Server, log *slog.Logger) {
	if c.sandbox == nil {
		return
	}
	c.sandbox.Notify = func(ctx context.Context, session string) {
		if err := srv.PollCard(ctx, session); err != nil {
			log.WarnContext(ctx, "the sandbox's card change was not applied; the card poller tries again",
				slog.String("session", session), slog.Any("error", err))
		}
	}
}

// mount serves the sandbox's card pages at /sandbox/card/ on mux.
func (c *card) mount(mux *http.ServeMux) {
	if c.sandbox != nil {
		mux.Handle(sandbox.PagePath, c.sandbox.Handler())
	}
}
