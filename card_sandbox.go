package payd

import (
	"context"
	"time"

	"payd/money"
)

// CardSandboxSession is one session of the sandbox card provider
// (card/sandbox, docs/card.md "The sandbox provider"): payd's own stand-in
// for a provider's hosted card page. It lives in the database so that
// every replica's page and poller see the same state.
type CardSandboxSession struct {
	// ID is "cs_" and random: the session payd's checkout records, and
	// the charge's provider reference.
	ID         string
	CheckoutID string
	Route      int
	// Amount and Currency are what the card is charged.
	Amount   int64
	Currency money.Currency
	// Deliver is the coin sent to Deposit on Network once paid.
	Deliver money.CoinAmount
	Network money.Network
	Deposit Deposit
	Email   string
	// ReturnURL is where the page sends the customer when done.
	ReturnURL string
	State     CardSandboxState
	// Last4 is the card's last four digits once one was entered.
	Last4 string
	// DeclineCode is one of the CardDecline codes, when declined.
	DeclineCode string
	// PayAt is when a delayed card's delivery falls due (nil: at once).
	PayAt *time.Time
	// TxHash is the delivery's transaction, when delivered.
	TxHash    string
	ExpiresAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CardSandboxState is where a sandbox session stands: a CardStatus, or
// CardSandboxDelivering while one caller sends the coin.
type CardSandboxState string

// CardSandboxDelivering is the sandbox's own state between processing and
// delivered: a caller won the right to send the coin (at most one does)
// and is sending it. The provider reports it as processing.
const CardSandboxDelivering CardSandboxState = "delivering"

// CardSandboxStore keeps the sandbox card provider's sessions.
type CardSandboxStore interface {
	// CreateCardSandboxSession stores a new session; conflict when its id
	// exists.
	CreateCardSandboxSession(ctx context.Context, s *CardSandboxSession) error
	// CardSandboxSession returns a session by id; not_found when none.
	CardSandboxSession(ctx context.Context, id string) (*CardSandboxSession, error)
	// MoveCardSandboxSession stores s's state, Last4, DeclineCode, PayAt,
	// TxHash and UpdatedAt only if the stored state is still from, in one
	// conditional statement, and reports whether it did: of concurrent
	// moves from one state, on any replicas, exactly one wins.
	MoveCardSandboxSession(ctx context.Context, s *CardSandboxSession, from CardSandboxState) (bool, error)
}
