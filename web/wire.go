package web

import "time"

// The shapes below are what the pages read of the public API's answers
// (spec 2.5–2.7). They hold only the fields a page shows.

// business is what a customer sees of the business.
type business struct {
	Name         string  `json:"name"`
	Website      *string `json:"website"`
	SupportEmail *string `json:"support_email"`
	// AccentColor is the business's accent ("#rrggbb"), nil for payd's.
	AccentColor *string `json:"accent_color"`
	// LogoURL is the business's logo, served by payd; nil when none.
	LogoURL *string `json:"logo_url"`
}

// breakdown is how a total is made up (spec 2.7).
type breakdown struct {
	Currency      string `json:"currency"`
	Price         int64  `json:"price"`
	ProcessingFee *int64 `json:"processing_fee"`
	NetworkFee    *int64 `json:"network_fee"`
	Total         int64  `json:"total"`
}

// cryptoOption is one coin on one network the customer may pay with.
type cryptoOption struct {
	Asset     string    `json:"asset"`
	Network   string    `json:"network"`
	Amount    string    `json:"amount"`
	Breakdown breakdown `json:"breakdown"`
}

// offer is what a link's or a payment's page offers.
type offer struct {
	Business          business       `json:"business"`
	AcceptingPayments bool           `json:"accepting_payments"`
	CollectEmail      bool           `json:"collect_email"`
	Crypto            []cryptoOption `json:"crypto"`
	// AcceptedRails and Card: whether, and at what total, the customer
	// may pay by card (spec 2.6).
	AcceptedRails []string     `json:"accepted_rails"`
	Card          []cardOption `json:"card"`
	QuoteMinutes  int          `json:"quote_minutes"`
}

// cardOption is paying by card (spec 2.6 card): the total, and whether it
// lies within the card limits min and max.
type cardOption struct {
	Available bool        `json:"available"`
	Min       minorAmount `json:"min"`
	Max       minorAmount `json:"max"`
	Total     minorAmount `json:"total"`
	Breakdown breakdown   `json:"breakdown"`
}

// minorAmount is an amount in minor units of a currency.
type minorAmount struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// publicLink is GET /public/links/{code} (spec 2.6).
type publicLink struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	offer
}

// publicPayment is GET /public/payments/{code}.
type publicPayment struct {
	ID          string     `json:"id"`
	Code        string     `json:"code"`
	Status      string     `json:"status"`
	Amount      int64      `json:"amount"`
	Currency    string     `json:"currency"`
	Description string     `json:"description"`
	SuccessURL  *string    `json:"success_url"`
	ExpiresAt   *time.Time `json:"expires_at"`
	CanceledAt  *time.Time `json:"canceled_at"`
	CheckoutID  *string    `json:"checkout_id"`
	offer
}

// checkout is GET /checkouts/{id} (spec 2.5).
type checkout struct {
	ID            string    `json:"id"`
	Status        string    `json:"status"`
	LinkID        *string   `json:"link_id"`
	PaymentID     *string   `json:"payment_id"`
	Amount        int64     `json:"amount"`
	Currency      string    `json:"currency"`
	Breakdown     breakdown `json:"breakdown"`
	Crypto        *quote    `json:"crypto"`
	Rail          string    `json:"rail"`
	Card          *cardTry  `json:"card"`
	FailureCode   *string   `json:"failure_code"`
	Confirmations struct {
		Current  int `json:"current"`
		Required int `json:"required"`
	} `json:"confirmations"`
	Remainder    bool      `json:"remainder"`
	CanceledBy   *string   `json:"canceled_by"`
	ReplacedBy   *string   `json:"replaced_by"`
	ReviewReason *string   `json:"review_reason"`
	SuccessURL   *string   `json:"success_url"`
	ExpiresAt    time.Time `json:"expires_at"`
	Email        string    `json:"email"`
	// UpdatedAt is, on a completed checkout, when it was paid.
	UpdatedAt time.Time `json:"updated_at"`
}

// quote is a checkout's coin, amount and deposit.
type quote struct {
	Asset               string  `json:"asset"`
	Network             string  `json:"network"`
	Amount              string  `json:"amount"`
	Address             string  `json:"address"`
	Reference           *string `json:"reference"`
	PaymentURI          string  `json:"payment_uri"`
	ReceivedAmount      string  `json:"received_amount"`
	RemainingAmount     *string `json:"remaining_amount"`
	RemainingPaymentURI *string `json:"remaining_payment_uri"`
	OverpaidAmount      *string `json:"overpaid_amount"`
	TxHash              *string `json:"tx_hash"`
	ExplorerURL         *string `json:"explorer_url"`
}

// cardTry is a card checkout's current attempt (route; docs/card.md).
type cardTry struct {
	Status         string  `json:"status"`
	Route          int     `json:"route"`
	Asset          string  `json:"asset"`
	Network        string  `json:"network"`
	Amount         string  `json:"amount"`
	TxHash         *string `json:"tx_hash"`
	ExplorerURL    *string `json:"explorer_url"`
	RoutesLeft     int     `json:"routes_left"`
	RedirectURL    *string `json:"redirect_url"`
	ProviderURL    *string `json:"provider_url"`
	Brand          *string `json:"brand"`
	Last4          *string `json:"last4"`
	DeclineCode    *string `json:"decline_code"`
	DeclineMessage *string `json:"decline_message"`
}

// cardRoute is the body of the card routes of a checkout: the route the
// page shows.
type cardRoute struct {
	Route int `json:"route"`
}

// openRequest is the body of POST /checkouts.
type openRequest struct {
	LinkCode  string `json:"link_code,omitempty"`
	PaymentID string `json:"payment_id,omitempty"`
	Rail      string `json:"rail"`
	Asset     string `json:"asset,omitempty"`
	Network   string `json:"network,omitempty"`
	Email     string `json:"email,omitempty"`
}
