package api

import (
	"payd"
	"payd/money"
)

// checkout is the wire form of payd.Checkout (spec 2.5).
type checkout struct {
	ID            string              `json:"id"`
	Kind          string              `json:"kind"`
	Status        payd.CheckoutStatus `json:"status"`
	Rail          payd.Rail           `json:"rail"`
	LinkID        *string             `json:"link_id"`
	PaymentID     *string             `json:"payment_id"`
	Amount        int64               `json:"amount"`
	Currency      money.Currency      `json:"currency"`
	Breakdown     breakdown           `json:"breakdown"`
	Crypto        *cryptoQuote        `json:"crypto"`
	Card          *cardAttempt        `json:"card"`
	Confirmations confirmations       `json:"confirmations"`
	Remainder     bool                `json:"remainder"`
	CanceledBy    *string             `json:"canceled_by"`
	ReplacedBy    *string             `json:"replaced_by"`
	FailureCode   *string             `json:"failure_code"`
	ReviewReason  *string             `json:"review_reason"`
	SuccessURL    *string             `json:"success_url"`
	ExpiresAt     Time                `json:"expires_at"`
	SentAt        *Time               `json:"sent_at"`
	Email         string              `json:"email"`
	Reporting     reporting           `json:"reporting"`
	FeeRateBps    int                 `json:"fee_rate_bps"`
	ClaimTxHash   *string             `json:"claim_tx_hash"`
	CreatedAt     Time                `json:"created_at"`
	UpdatedAt     Time                `json:"updated_at"`
}

// confirmations is how far the awaited transfer has got.
type confirmations struct {
	Current  int `json:"current"`
	Required int `json:"required"`
}

// cryptoQuote is a checkout's coin, amount and deposit (spec 2.5 crypto).
type cryptoQuote struct {
	Asset      money.Asset   `json:"asset"`
	Network    money.Network `json:"network"`
	Amount     string        `json:"amount"`
	Address    string        `json:"address"`
	Reference  *string       `json:"reference"`
	PaymentURI string        `json:"payment_uri"`
	Rate       minorAmount   `json:"rate"`
	// ExchangeRatesID names the snapshot the quote was made from (GET
	// /exchange-rates/{id} shows its sources); absent when none was needed.
	ExchangeRatesID     string         `json:"exchange_rates_id,omitempty"`
	ReceivedAmount      string         `json:"received_amount"`
	RemainingAmount     *string        `json:"remaining_amount"`
	RemainingPaymentURI *string        `json:"remaining_payment_uri"`
	OverpaidAmount      *string        `json:"overpaid_amount"`
	DetectedNetwork     *money.Network `json:"detected_network"`
	TxHash              *string        `json:"tx_hash"`
	ExplorerURL         *string        `json:"explorer_url"`
}

// toCheckout converts a checkout for the wire.
func (s *Server) toCheckout(c *payd.Checkout) checkout {
	cur, req := c.Confirmations()
	out := checkout{
		ID: c.ID, Kind: "checkout", Status: c.Status, Rail: c.Rail, LinkID: nilIfEmpty(c.LinkID),
		PaymentID: nilIfEmpty(c.PaymentID), Amount: c.Amount, Currency: c.Currency,
		Breakdown: breakdown{Currency: c.Currency, Price: c.Breakdown.Price, ProcessingFee: c.Breakdown.ProcessingFee,
			NetworkFee: c.Breakdown.NetworkFee, Total: c.Breakdown.Total},
		Confirmations: confirmations{cur, req}, Remainder: c.Remainder, CanceledBy: nilIfEmpty(c.CanceledBy),
		ReplacedBy: nilIfEmpty(c.ReplacedBy), FailureCode: nilIfEmpty(c.FailureCode),
		ReviewReason: nilIfEmpty(c.ReviewReason), SuccessURL: nilIfEmpty(c.SuccessURL), ExpiresAt: Time(c.ExpiresAt),
		SentAt: timePtr(c.SentAt), Email: c.Email, FeeRateBps: c.FeeRateBps, ClaimTxHash: nilIfEmpty(c.ClaimTxHash),
		Reporting: reporting{Currency: "USD", Amount: c.Reporting.AmountUSD, Fee: c.Reporting.FeeUSD,
			TransactionFee: c.Reporting.TransactionFeeUSD, CustomerFee: c.Reporting.CustomerFeeUSD, Net: c.Reporting.NetUSD},
		CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt),
	}
	switch {
	case c.Card != nil:
		out.Card = s.toCardAttempt(c)
	case c.Crypto != nil:
		out.Crypto = s.toCryptoQuote(c)
	}
	return out
}

// toCryptoQuote shows the quote with what has arrived so far: the rest
// still due (and a URI that asks for just that) while the checkout takes
// funds, and what came beyond the quote.
func (s *Server) toCryptoQuote(c *payd.Checkout) *cryptoQuote {
	q := c.Crypto
	sent := c.Sent()
	out := &cryptoQuote{Asset: q.Asset, Network: q.Network, Amount: q.Amount.String(), Address: q.Deposit.Address,
		Reference: nilIfEmpty(q.Deposit.Reference), PaymentURI: q.PaymentURI, Rate: minorAmount{q.Rate, c.Currency},
		ExchangeRatesID: q.ExchangeRatesID,
		ReceivedAmount:  sent.String()}
	switch rest := q.Amount.Sub(sent); {
	case rest.Sign() < 0:
		over := sent.Sub(q.Amount).String()
		out.OverpaidAmount = &over
	case rest.Sign() > 0 && !sent.IsZero():
		r := rest.String()
		out.RemainingAmount = &r
		if n := s.opts.Networks[q.Network]; n != nil && c.Active() {
			uri := n.PaymentURI(payd.PaymentRequest{Deposit: q.Deposit, Amount: rest})
			out.RemainingPaymentURI = &uri
		}
	}
	if last, ok := c.LastSent(); ok {
		out.DetectedNetwork, out.TxHash = &q.Network, &last.TxHash
		if n := s.opts.Networks[q.Network]; n != nil {
			u := n.ExplorerURL(last.TxHash)
			out.ExplorerURL = &u
		}
	}
	return out
}
