package web

import (
	"html/template"
	"time"

	"payd/money"
)

// page is what every checkout page template reads.
type page struct {
	M         messages
	Title     string
	Business  business
	Item      string // what is paid for
	Untitled  bool   // Item names the business: the payment has no description
	Detail    string // its description
	Price     string // "12.50 USD"
	Fee       string // processing fee passed on, if any
	Path      string // /l/{code} or /p/{code}
	Options   []option
	Accepting bool
	Notice    string // why nothing can be paid, as a sentence
	Error     string // why the last attempt failed, as a sentence
	Email     string
	Collect   bool
	PaymentID string // sent to replace the current checkout
	IdemKey   string
	CardKey   string // the card form's idempotency key
	Checkout  *checkoutView
	Static    func(string) string
	// Card is paying by card, when offered; CardEmail and CardError are
	// the card form's email and why it was refused.
	Card      *cardChoice
	CardEmail string
	CardError string
	// Back is the page an error page leads back to.
	Back string
	// Forward is where a page that only forwards the customer sends them
	// (a meta refresh, and a link for whoever it does not move).
	Forward string
}

// option is one coin on one network in the choice.
type option struct {
	Value   string // ASSET/network
	Label   string
	Amount  string
	Checked bool
}

// checkoutView is a checkout as the page shows it.
type checkoutView struct {
	ID            string
	State         string // open, detected, confirming, succeeded, overpaid, underpaid, expired, canceled, review
	Live          bool   // still changing: the page keeps polling
	StatusText    string
	Asset         string
	AssetName     string
	Network       string
	NetworkName   string
	Amount        string
	Address       string
	PaymentURI    template.URL
	QR            template.URL
	Remaining     string
	RemainingURI  template.URL
	RemainingQR   template.URL
	Received      string
	Overpaid      string
	Current       int
	Required      int
	NetworkFee    string
	Currency      string
	ExpiresAt     string        // RFC 3339
	EndsAt        template.HTML // "This quote ends at 15:04 UTC.", local time added by script
	Now           string        // RFC 3339, the service clock
	SecondsLeft   int64
	Countdown     string
	SuccessURL    string
	ExplorerURL   template.URL
	Option        string // ASSET/network, for a fresh quote
	Signature     string
	TakesPayments bool   // the address still takes funds
	Email         string // sent again with a new quote
	Remainder     bool   // collects the unpaid rest of a payment; no other coin
	Partial       bool   // ended with part received: a new quote asks for the rest
	TxHash        string
	PaidAt        template.HTML // the receipt's date, UTC, local time added by script
	Reference     string        // Solana Pay reference: only the URI carries it to a wallet
	Card          *cardView     // a card checkout's route
	Total         string        // a card checkout's total, as charged
}

// priceText renders minor units of a currency as "12.50 USD".
func priceText(amount int64, currency string) string {
	return money.Currency(currency).Format(amount) + " " + currency
}

// options lists what the offer accepts, with the amount each costs.
func options(m messages, o offer, chosen string) []option {
	out := make([]option, 0, len(o.Crypto))
	for i, c := range o.Crypto {
		v := c.Asset + "/" + c.Network
		amount := m.T("choose.amount", c.Amount, c.Asset)
		if f := c.Breakdown.NetworkFee; f != nil {
			cur := c.Breakdown.Currency
			amount = m.T("choose.amount_fee", c.Amount, c.Asset, money.Currency(cur).Format(*f), cur)
		}
		out = append(out, option{Value: v, Amount: amount,
			Label:   m.T("choose.option", m.T("asset."+c.Asset), m.T("network."+c.Network)),
			Checked: v == chosen || chosen == "" && i == 0})
	}
	return out
}

// viewCheckout turns a checkout into what the page shows at now.
func viewCheckout(m messages, c *checkout, now time.Time) *checkoutView {
	if c.Card != nil {
		return viewCardCheckout(m, c, now)
	}
	q := c.Crypto
	if q == nil {
		return nil
	}
	v := &checkoutView{ID: c.ID, Asset: q.Asset, AssetName: m.T("asset." + q.Asset), Network: q.Network,
		NetworkName: m.T("network." + q.Network), Amount: q.Amount, Address: q.Address,
		PaymentURI: template.URL(q.PaymentURI), QR: qrDataURI(q.PaymentURI), Received: q.ReceivedAmount,
		Current: c.Confirmations.Current, Required: c.Confirmations.Required, Currency: c.Currency,
		ExpiresAt: c.ExpiresAt.UTC().Format(time.RFC3339), EndsAt: m.timeHTML("quote.ends_at", c.ExpiresAt, "15:04"),
		Now: now.UTC().Format(time.RFC3339), Option: q.Asset + "/" + q.Network}
	if c.Breakdown.NetworkFee != nil {
		v.NetworkFee = money.Currency(c.Currency).Format(*c.Breakdown.NetworkFee)
	}
	v.timeLeft(c, now)
	if q.ExplorerURL != nil {
		v.ExplorerURL = template.URL(*q.ExplorerURL)
	}
	if q.TxHash != nil {
		v.TxHash = *q.TxHash
	}
	if q.RemainingAmount != nil {
		v.Remaining = *q.RemainingAmount
	}
	if q.RemainingPaymentURI != nil {
		v.RemainingURI = template.URL(*q.RemainingPaymentURI)
		v.RemainingQR = qrDataURI(*q.RemainingPaymentURI)
	}
	if q.OverpaidAmount != nil {
		v.Overpaid = *q.OverpaidAmount
	}
	v.Email, v.Remainder = c.Email, c.Remainder
	v.State, v.StatusText = state(m, c, v)
	v.Partial = v.State == "expired" && v.gotFunds()
	if v.State == "succeeded" || v.State == "overpaid" {
		v.PaidAt = m.timeHTML("receipt.paid_at", c.UpdatedAt, m.T("time.date_layout"))
	}
	if q.Reference != nil {
		v.Reference = *q.Reference
	}
	// While underpaid, what is left to send is the rest: the amount, the
	// URI and its QR code all ask for just that.
	if v.State == "underpaid" && v.Remaining != "" {
		v.Amount = v.Remaining
		if v.RemainingURI != "" {
			v.PaymentURI, v.QR = v.RemainingURI, v.RemainingQR
		}
	}
	v.Live = v.State == "open" || v.State == "detected" || v.State == "confirming" || v.State == "underpaid"
	v.TakesPayments = v.State == "open" || v.State == "underpaid"
	v.Signature = v.State + "|" + c.Status + "|" + q.ReceivedAmount + "|" + v.Remaining + "|" +
		itoa(v.Current) + "|" + v.ExpiresAt
	return v
}

// timeLeft sets the time left of c's quote at now, and where the customer
// goes once it is paid.
func (v *checkoutView) timeLeft(c *checkout, now time.Time) {
	if left := c.ExpiresAt.Sub(now); left > 0 {
		v.SecondsLeft = int64(left / time.Second)
	}
	v.Countdown = countdown(v.SecondsLeft)
	if c.SuccessURL != nil {
		v.SuccessURL = *c.SuccessURL
	}
}

// state names what the customer must know about a checkout, and says it.
func state(m messages, c *checkout, v *checkoutView) (string, string) {
	switch {
	case c.ReviewReason != nil:
		return "review", m.T("status.review")
	case c.Status == "completed" && v.Overpaid != "":
		return "overpaid", m.T("status.overpaid", v.Overpaid, v.Asset)
	case c.Status == "completed":
		return "succeeded", m.T("status.succeeded")
	case c.Status == "processing" && v.Current == 0:
		return "detected", m.T("status.detected")
	case c.Status == "processing":
		return "confirming", m.T("status.confirming", v.Current, v.Required)
	case c.Status == "underpaid":
		return "underpaid", m.T("status.underpaid", v.Received, v.Asset, v.Remaining, v.Asset)
	case c.Status == "expired" && v.gotFunds() && v.Email != "":
		return "expired", m.T("status.expired_partial_email", v.Received, v.Asset, v.Email)
	case c.Status == "expired" && v.gotFunds():
		return "expired", m.T("status.expired_partial", v.Received, v.Asset)
	case c.Status == "expired":
		return "expired", m.T("status.expired")
	case c.Status == "canceled" || c.Status == "failed":
		return "canceled", m.T("status.canceled")
	}
	return "open", m.T("status.open")
}

// gotFunds reports whether some of the quote arrived: the page of a
// checkout that ended with part received says so, and offers a quote for
// the rest.
func (v *checkoutView) gotFunds() bool { return v.Received != "" && !zeroDecimal(v.Received) }

// zeroDecimal reports whether a decimal string is zero.
func zeroDecimal(s string) bool {
	for _, r := range s {
		if r != '0' && r != '.' {
			return false
		}
	}
	return true
}

// countdown renders seconds as m:ss.
func countdown(s int64) string {
	sec := s % 60
	pad := ""
	if sec < 10 {
		pad = "0"
	}
	return itoa(int(s/60)) + ":" + pad + itoa(int(sec))
}
