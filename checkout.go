package payd

import (
	"context"
	"time"

	"payd/money"
)

// CheckoutStatus is where a checkout stands (docs/checkouts.md; spec 2.5
// shows open, and errors name canceled, failed and expired).
type CheckoutStatus string

// The checkout statuses.
const (
	// CheckoutOpen: the quote is live and nothing has been seen yet.
	CheckoutOpen CheckoutStatus = "open"
	// CheckoutProcessing: a transfer was seen and waits for confirmations.
	CheckoutProcessing CheckoutStatus = "processing"
	// CheckoutUnderpaid: what arrived is confirmed but short, and the quote
	// is still live, so the customer can send the rest to the same address.
	CheckoutUnderpaid CheckoutStatus = "underpaid"
	// CheckoutCompleted: the quoted amount, or more, arrived and confirmed.
	CheckoutCompleted CheckoutStatus = "completed"
	// CheckoutExpired: the quote ended before the amount arrived.
	CheckoutExpired CheckoutStatus = "expired"
	// CheckoutCanceled: the customer, the business or a replacement
	// checkout ended it before anything arrived.
	CheckoutCanceled CheckoutStatus = "canceled"
	// CheckoutFailed: the attempt cannot go on; start a new checkout.
	CheckoutFailed CheckoutStatus = "failed"
)

// Who ended a canceled checkout (canceled_by).
const (
	CanceledByCustomer = "customer"
	CanceledByBusiness = "business"
	// CanceledByReplacement: the customer chose another coin; replaced_by
	// names the new checkout.
	CanceledByReplacement = "replacement"
)

// Review reasons of a checkout and its payment (review_reason; spec 2.11
// rule 10 leaves the set to us).
const (
	// ReviewLatePayment: funds arrived after the quote ended, or after the
	// payment ended; the business decides whether to accept them.
	ReviewLatePayment = "late_payment"
	// ReviewClaim: the customer says a transaction paid an ended checkout.
	ReviewClaim = "claim"
	// ReviewWrongAsset: a coin other than the quoted one reached the
	// deposit (USDT sent to a USDC checkout's address). It is in the
	// wallet but pays nothing; the business decides (refund, or accept).
	ReviewWrongAsset = "wrong_asset"
)

// LateWindow is how long a checkout's deposit stays watched after the
// checkout ends, so that a late payment is still noticed and goes to
// review instead of going unseen.
const LateWindow = 7 * 24 * time.Hour

// Checkout is one attempt to pay a payment on one rail (spec 2.5): for
// crypto, a coin amount quoted on a network and the deposit it goes to.
type Checkout struct {
	ID         string
	BusinessID string
	PaymentID  string
	LinkID     string
	Status     CheckoutStatus
	Rail       Rail
	// Amount and Currency are the price this checkout collects: the
	// payment's, or for a remainder the rest still due.
	Amount   int64
	Currency money.Currency
	// Breakdown is how the customer's total is made up (spec 2.7).
	Breakdown Breakdown
	// Crypto is the quote and deposit: for crypto what the customer sends,
	// for card the coin the provider delivers after the fee.
	Crypto *CryptoQuote
	// Card is the card rail's attempts; nil on crypto.
	Card *Card
	// Required is how many confirmations a transfer needs on the network.
	Required  int
	Remainder bool
	// PriorReceived is the payment's amount_received when the checkout
	// opened: a remainder adds to what earlier checkouts collected.
	PriorReceived int64
	CanceledBy    string
	ReplacedBy    string
	FailureCode   string
	ReviewReason  string
	SuccessURL    string
	// ExpiresAt is the end of the quote window.
	ExpiresAt time.Time
	// SentAt is when the first transfer was seen.
	SentAt *time.Time
	Email  string
	// Reporting is the US view of what this checkout collects.
	Reporting  Reporting
	FeeRateBps int
	// Transfers are those seen paying the deposit, in the order seen.
	Transfers []SeenTransfer
	// ClaimTxHash is the transaction a customer claimed paid the checkout
	// after it ended.
	ClaimTxHash string
	// WatchUntil is when the watcher stops reading the deposit.
	WatchUntil time.Time
	// Version counts stored changes; UpdateCheckout refuses a write based
	// on an older version, so that two writers never both apply a change.
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Breakdown is how a checkout's total is made up (spec 2.7), in minor
// units of the price currency. ProcessingFee is set when the customer
// carries the fee; NetworkFee is the estimate a crypto wallet pays on top.
type Breakdown struct {
	Price         int64
	ProcessingFee *int64
	NetworkFee    *int64
	Total         int64
}

// CryptoQuote is a crypto checkout's locked quote (spec 2.5 crypto).
type CryptoQuote struct {
	Asset   money.Asset
	Network money.Network
	// Amount is the coin amount asked for, in base units.
	Amount money.CoinAmount
	// PriorAmount is the coin that earlier checkouts of the payment
	// collected (a remainder's predecessors), zero for a first checkout.
	PriorAmount money.CoinAmount
	Deposit     Deposit
	// AddressIndex is the wallet's receive index the address came from.
	AddressIndex uint32
	// Rate is one coin in minor units of the price currency, for display.
	Rate int64
	// CoinPriceUSD is the coin's price in US cents the quote was made at.
	CoinPriceUSD int64
	// ExchangeRatesID is the snapshot the quote was made from (xr_), so
	// its sources can be shown later; "" when the price needed none
	// (NeedsRates) or the checkout predates it. The history keeps every
	// snapshot a checkout names.
	ExchangeRatesID string
	WalletID        string
	PaymentURI      string
}

// SeenTransfer is a transfer into the deposit as payd last saw it.
type SeenTransfer struct {
	TxHash        string
	Index         int
	From          string
	Amount        money.CoinAmount
	Confirmations int
	// Reported is the highest confirmation count already written to the
	// payment's history, so a reorg never makes one appear twice.
	Reported int
	// Counted reports whether the transfer reached the confirmations
	// required and was added to what the payment received. A transfer is
	// counted at most once.
	Counted bool
	// Late reports whether it was first seen after the checkout stopped
	// taking payments.
	Late bool
	// Gone reports that the network stopped reporting the transfer before
	// it was counted: replaced (RBF) or double-spent while it waited, or
	// orphaned by a reorg and never mined again. It pays nothing and waits
	// for nothing; reported again, it is back.
	Gone   bool
	SeenAt time.Time
}

// Key identifies the transfer.
func (t SeenTransfer) Key() TransferKey { return TransferKey{t.TxHash, t.Index} }

// CheckoutStore keeps checkouts.
type CheckoutStore interface {
	// CreateCheckout stores a new checkout; conflict when a checkout of the
	// same network already has its deposit (address, or Solana reference).
	CreateCheckout(ctx context.Context, c *Checkout) error
	// CheckoutByID returns the checkout with the id, whatever its business
	// (checkouts are public by id); not_found otherwise. Inside a
	// transaction on PostgreSQL the row stays locked until commit.
	CheckoutByID(ctx context.Context, id string) (*Checkout, error)
	// UpdateCheckout writes every mutable field of c and sets c.Version to
	// the next version; conflict when the stored version is not c.Version
	// (another writer came first), not_found for an unknown id.
	UpdateCheckout(ctx context.Context, c *Checkout) error
	// WatchedCheckouts returns up to limit crypto checkouts on network n
	// whose WatchUntil is after now, in (WatchUntil, ID) order, starting
	// after the cursor after: the zero cursor for every watched checkout,
	// WatchCursor{Until: LiveWatchUntil} for those still taking funds only,
	// and the last one's WatchCursorOf for the next page.
	WatchedCheckouts(ctx context.Context, n money.Network, now time.Time, after WatchCursor, limit int) ([]*Checkout, error)
	// DueCheckouts returns up to limit checkouts still open, processing or
	// underpaid whose quote ended at or before now, so the expiry loop can
	// end them, leaving out those on the held networks whose quote ended
	// after heldSince.
	DueCheckouts(ctx context.Context, now time.Time, limit int, held []money.Network, heldSince time.Time) ([]*Checkout, error)
	// CheckoutByCardSession returns the checkout whose current card route
	// is the provider's session; not_found otherwise (a session of an
	// earlier route, or of another payd). Inside a transaction on
	// PostgreSQL the row stays locked until commit.
	CheckoutByCardSession(ctx context.Context, provider, session string) (*Checkout, error)
	// PolledCardCheckouts returns up to limit card checkouts still open or
	// processing whose current route the provider may still move
	// (awaiting_payment, challenge, processing), in id order after the id
	// after ("" for the first page). A checkout that ended is not polled:
	// a delivery after that is seen by the watcher as late funds.
	PolledCardCheckouts(ctx context.Context, after string, limit int) ([]*Checkout, error)
	// DuePayments returns up to limit pending payments whose expires_at is
	// at or before now.
	DuePayments(ctx context.Context, now time.Time, limit int) ([]*Payment, error)
}

// WatchCursor is a place in the order watched checkouts are read in:
// (WatchUntil, ID). The live ones, all at LiveWatchUntil, come last.
type WatchCursor struct {
	Until time.Time
	ID    string
}

// WatchCursorOf is the cursor just at c: the next page starts after it.
func WatchCursorOf(c *Checkout) WatchCursor { return WatchCursor{Until: c.WatchUntil, ID: c.ID} }

// LeaseStore hands out named leases, so that of several replicas one at a
// time does a job that needs only one doer, such as watching a network.
type LeaseStore interface {
	// AcquireLease gives the lease name to holder until the time until,
	// when nobody holds it at now or holder already does. It reports
	// whether holder has the lease.
	AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error)
	// ReleaseLease gives the lease up if holder has it, so that another
	// replica (or this one restarted) takes it at once rather than when
	// it lapses.
	ReleaseLease(ctx context.Context, name, holder string) error
}
