// Package sandbox is payd's own card provider for trying the card rail
// without a real one (CONTRACT.md "Card rail", docs/card.md "The sandbox
// provider"): a stand-in for a provider's hosted card page that takes the
// test cards, and that delivers the coin itself through the network
// adapter in use (the devnet's, with --dev).
//
// Its sessions live in the database (payd.CardSandboxStore), so every
// replica's page and the card poller see one state. It sends no HTTP
// webhooks: after each change its page makes it calls Notify at once, which
// payd serve sets to poll the session and apply the answer, as a webhook
// would; the poller catches anything Notify missed.
package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// Name is the provider's name, as checkouts record it and --card takes it.
const Name = "sandbox"

// Deliverer sends a card payment's coin to its deposit on a network, as a
// real provider does once the card is charged. The devnet is one
// (chain/devnet's Devnet.Deliver).
type Deliverer interface {
	// Deliver sends amount to the deposit on network n and returns the
	// transaction's hash.
	Deliver(ctx context.Context, n money.Network, to payd.Deposit, amount money.CoinAmount) (txHash string, err error)
}

// Options configure a Provider.
type Options struct {
	Store payd.CardSandboxStore
	Clock clock.Clock
	// PublicURL is payd's public base URL; the card page is under it at
	// /sandbox/card/{session}.
	PublicURL string
	Deliverer Deliverer
	Log       *slog.Logger
}

// Provider is the sandbox card provider, a payd.CardProvider, and its
// pages (Handler).
type Provider struct {
	store   payd.CardSandboxStore
	clock   clock.Clock
	public  string
	deliver Deliverer
	log     *slog.Logger
	pages   *pages
	// Notify, when set, is told of each change the page makes, at once,
	// as a provider's webhook would tell payd; payd serve sets it to poll
	// the session and apply what it says. Set it before serving.
	Notify func(ctx context.Context, session string)
}

var _ payd.CardProvider = (*Provider)(nil)

// New returns the sandbox provider.
func New(o Options) (*Provider, error) {
	if o.Store == nil || o.Clock == nil || o.Deliverer == nil {
		return nil, errors.New("sandbox.New: a store, a clock and a deliverer are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	pg, err := newPages()
	if err != nil {
		return nil, err
	}
	return &Provider{store: o.Store, clock: o.Clock, public: strings.TrimRight(o.PublicURL, "/"), deliver: o.Deliverer,
		log: o.Log, pages: pg}, nil
}

// Name is "sandbox".
func (p *Provider) Name() string { return Name }

// Delivers reports whether money supports asset on n: the sandbox delivers
// every coin payd takes.
func (p *Provider) Delivers(a money.Asset, n money.Network) bool { return money.Supports(a, n) }

// Limits are none of the sandbox's own: the spec's 5.00 to 10,000.00 US
// dollars apply everywhere.
func (p *Provider) Limits(money.Currency, string) payd.CardLimits { return payd.CardLimits{} }

// NeedsEmail is true, as for most real providers.
func (p *Provider) NeedsEmail() bool { return true }

// PagePath is where a session's card page is, under the public URL.
const PagePath = "/sandbox/card/"

// Start stores a new session waiting for a card and answers its page.
func (p *Provider) Start(ctx context.Context, req payd.CardSessionRequest) (payd.CardSession, error) {
	now := p.clock.Now()
	s := &payd.CardSandboxSession{ID: "cs_" + payd.RandomString(24), CheckoutID: req.CheckoutID, Route: req.Route,
		Amount: req.Amount, Currency: req.Currency, Deliver: req.Deliver, Network: req.Network,
		Deposit: payd.Deposit{Address: req.Address, Reference: req.Reference}, Email: req.Email, ReturnURL: req.ReturnURL,
		State: payd.CardSandboxState(payd.CardAwaiting), ExpiresAt: req.ExpiresAt, CreatedAt: now, UpdatedAt: now}
	if err := p.store.CreateCardSandboxSession(ctx, s); err != nil {
		return payd.CardSession{}, err
	}
	return payd.CardSession{ID: s.ID, RedirectURL: p.public + PagePath + s.ID}, nil
}

// RetryAfter is how long a card paid on the page may stay processing
// before a poll sends its coin: the page sends it at once, and a poll
// steps in only when the page's send failed or never finished.
const RetryAfter = 10 * time.Second

// Status answers how a session stands. A charged session whose coin is
// due (the delayed card's Delay after it was charged, or RetryAfter after
// a charge whose page did not send it) is delivered first, by whichever
// caller wins the session's move to delivering: at most one delivery per
// session, however many replicas poll at once. not_found for a session
// the sandbox never opened.
func (p *Provider) Status(ctx context.Context, session string) (payd.CardReport, error) {
	s, err := p.store.CardSandboxSession(ctx, session)
	if err != nil {
		return payd.CardReport{}, err
	}
	if s.State == payd.CardSandboxState(payd.CardProcessing) && p.due(s) {
		if s, err = p.deliverCoin(ctx, s); err != nil {
			return payd.CardReport{}, err
		}
	}
	return report(s), nil
}

// due reports whether a processing session's coin is for a poll to send.
func (p *Provider) due(s *payd.CardSandboxSession) bool {
	at := s.UpdatedAt.Add(RetryAfter)
	if s.PayAt != nil {
		at = *s.PayAt
	}
	return !p.clock.Now().Before(at)
}

// Webhook always answers invalid_signature: the sandbox sends no HTTP
// webhooks (it calls Notify instead), so a request to its webhook route
// is not from it.
func (p *Provider) Webhook(http.Header, []byte) ([]payd.CardReport, error) {
	return nil, payd.Errorf(payd.ErrInvalidSignature, "the sandbox card provider sends no webhooks")
}

// report is what Status says of a session.
func report(s *payd.CardSandboxSession) payd.CardReport {
	r := payd.CardReport{Session: s.ID, Status: payd.CardStatus(s.State), TxHash: s.TxHash}
	if s.State == payd.CardSandboxDelivering {
		r.Status = payd.CardProcessing
	}
	if s.Last4 != "" {
		r.Brand, r.Last4, r.CardCountry, r.Reference = "visa", s.Last4, "US", s.ID
	}
	if s.State == payd.CardSandboxState(payd.CardDeclined) {
		r.DeclineCode, r.DeclineMessage = s.DeclineCode, declineMessages[s.DeclineCode]
	}
	return r
}

// declineMessages are the sandbox's words for each decline, for the customer.
var declineMessages = map[string]string{
	payd.CardDeclinedGeneric:   "Your card was declined.",
	payd.CardInsufficientFunds: "Your card has insufficient funds.",
	payd.CardChallengeFailed:   "Your bank's security check was not completed.",
	payd.CardSessionExpired:    "The payment page expired before the card was paid.",
}

// move stores s in state to if it is still in state from, and reports
// whether it was.
func (p *Provider) move(ctx context.Context, s *payd.CardSandboxSession, from, to payd.CardSandboxState) (bool, error) {
	next := *s
	next.State, next.UpdatedAt = to, p.clock.Now()
	ok, err := p.store.MoveCardSandboxSession(ctx, &next, from)
	if ok {
		*s = next
	}
	return ok, err
}

// deliverCoin sends a charged session's coin, once: the caller that moves
// it from processing to delivering sends it and stores the transaction;
// any other caller reads the session again. When the send fails the
// session goes back to processing, to be tried on the next poll.
func (p *Provider) deliverCoin(ctx context.Context, s *payd.CardSandboxSession) (*payd.CardSandboxSession, error) {
	won, err := p.move(ctx, s, payd.CardSandboxState(payd.CardProcessing), payd.CardSandboxDelivering)
	if err != nil {
		return nil, err
	}
	if !won {
		return p.store.CardSandboxSession(ctx, s.ID)
	}
	// The send and what follows it run on a context the caller cannot
	// cancel: a send cut off half way could have gone out unrecorded, and
	// be sent again on the next poll.
	back := context.WithoutCancel(ctx)
	tx, err := p.deliver.Deliver(back, s.Network, s.Deposit, s.Deliver)
	if err != nil {
		if _, rerr := p.move(back, s, payd.CardSandboxDelivering, payd.CardSandboxState(payd.CardProcessing)); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	s.TxHash = tx
	if _, err := p.move(back, s, payd.CardSandboxDelivering, payd.CardSandboxState(payd.CardDelivered)); err != nil {
		return nil, err
	}
	return s, nil
}

// notify tells payd of a change at once (Notify), when it is set.
func (p *Provider) notify(ctx context.Context, session string) {
	if p.Notify != nil {
		p.Notify(ctx, session)
	}
}
