package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// checkoutMutable are the columns UpdateCheckout writes, in checkoutArgs'
// order. Identity (id, business, payment), created_at and version are
// fixed once the row is made.
var checkoutMutable = []string{"link_id", "status", "rail", "amount", "currency", "breakdown", "quote",
	"network", "address", "reference", "required", "remainder", "prior_received", "canceled_by", "replaced_by",
	"failure_code", "review_reason", "success_url", "expires_at", "sent_at", "email", "reporting", "fee_rate_bps",
	"transfers", "claim_tx_hash", "watch_until", "updated_at", "card", "card_provider", "card_session", "card_status",
	"exchange_rates_id"}

// The checkout statements, built once from checkoutMutable so that the
// insert, the update and scanCheckout can never disagree on the order.
var (
	checkoutColumns = "id, business_id, payment_id, created_at, version, " + strings.Join(checkoutMutable, ", ")
	// ON CONFLICT DO NOTHING: a taken deposit is reported from the row
	// count, so PostgreSQL meets no unique violation, which would abort
	// the caller's transaction.
	insertCheckout = `INSERT INTO checkouts (` + checkoutColumns + `) VALUES (` +
		placeholders(1, 5+len(checkoutMutable)) + `) ON CONFLICT DO NOTHING`
	updateCheckout = `UPDATE checkouts SET ` + assignments(checkoutMutable, 3) +
		`, version = version + 1 WHERE id = $1 AND version = $2`
)

// placeholders returns "$from, …" for n parameters.
func placeholders(from, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(from+i)
	}
	return strings.Join(ps, ", ")
}

// assignments returns "col = $from, …" for the columns.
func assignments(cols []string, from int) string {
	as := make([]string, len(cols))
	for i, c := range cols {
		as[i] = c + " = $" + strconv.Itoa(from+i)
	}
	return strings.Join(as, ", ")
}

// checkoutArgs returns the values of checkoutMutable for c.
func checkoutArgs(c *payd.Checkout) ([]any, error) {
	j, err := encodeCheckoutJSON(c)
	if err != nil {
		return nil, err
	}
	var network, address, cardProvider, cardSession, cardStatus, ratesID any
	var reference string
	if c.Card != nil {
		cardProvider, cardSession, cardStatus = c.Card.Provider, null(c.Card.Session), string(c.Card.Status)
	}
	if c.Crypto != nil {
		network, address, reference = string(c.Crypto.Network), c.Crypto.Deposit.Address, c.Crypto.Deposit.Reference
		ratesID = null(c.Crypto.ExchangeRatesID)
	}
	return []any{null(c.LinkID), string(c.Status), string(c.Rail), c.Amount, string(c.Currency), j.breakdown,
		j.quote, network, address, reference, c.Required, c.Remainder, c.PriorReceived, null(c.CanceledBy),
		null(c.ReplacedBy), null(c.FailureCode), null(c.ReviewReason), null(c.SuccessURL), micros(c.ExpiresAt),
		nullMicros(c.SentAt), null(c.Email), j.reporting, c.FeeRateBps, j.transfers, null(c.ClaimTxHash),
		micros(c.WatchUntil), micros(c.UpdatedAt), j.card, cardProvider, cardSession, cardStatus, ratesID}, nil
}

// checkoutJSON holds the JSON text columns of a checkout.
type checkoutJSON struct {
	breakdown, reporting, transfers string
	quote, card                     sql.NullString
}

// encodeCheckoutJSON encodes c's JSON columns through their stored forms.
func encodeCheckoutJSON(c *payd.Checkout) (j checkoutJSON, err error) {
	if j.breakdown, err = jsonString(storedBreakdown(c.Breakdown)); err != nil {
		return j, err
	}
	if j.reporting, err = jsonString(storedReporting(c.Reporting)); err != nil {
		return j, err
	}
	ts := make([]storedTransfer, len(c.Transfers))
	for i, t := range c.Transfers {
		ts[i] = storeTransfer(t)
	}
	if j.transfers, err = jsonString(ts); err != nil {
		return j, err
	}
	if c.Crypto != nil {
		if j.quote.String, err = jsonString(storeQuote(c.Crypto)); err != nil {
			return j, err
		}
		j.quote.Valid = true
	}
	if c.Card != nil {
		j.card.String, err = jsonString(storeCard(c.Card))
		j.card.Valid = err == nil
	}
	return j, err
}

// jsonString encodes v as JSON text.
func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// scanCheckout reads one row of checkoutColumns.
func scanCheckout(row rowScanner) (*payd.Checkout, error) {
	var c payd.Checkout
	var j checkoutJSON
	var network, address sql.NullString
	var reference, ratesID string
	var created, expires, watch, updated int64
	var sent sql.NullInt64
	err := row.Scan(&c.ID, &c.BusinessID, &c.PaymentID, &created, &c.Version, nullText{&c.LinkID}, &c.Status,
		&c.Rail, &c.Amount, &c.Currency, &j.breakdown, &j.quote, &network, &address, &reference, &c.Required,
		&c.Remainder, &c.PriorReceived, nullText{&c.CanceledBy}, nullText{&c.ReplacedBy}, nullText{&c.FailureCode},
		nullText{&c.ReviewReason}, nullText{&c.SuccessURL}, &expires, &sent, nullText{&c.Email}, &j.reporting,
		&c.FeeRateBps, &j.transfers, nullText{&c.ClaimTxHash}, &watch, &updated, &j.card, new(sql.NullString),
		new(sql.NullString), new(sql.NullString), nullText{&ratesID})
	if err != nil {
		return nil, err
	}
	c.CreatedAt, c.ExpiresAt, c.SentAt = fromMicros(created), fromMicros(expires), fromNullMicros(sent)
	c.WatchUntil, c.UpdatedAt = fromMicros(watch), fromMicros(updated)
	if err := decodeCheckoutJSON(&c, j); err != nil {
		return nil, fmt.Errorf("checkout %s: %w", c.ID, err)
	}
	if c.Crypto != nil {
		c.Crypto.Network = money.Network(network.String)
		c.Crypto.Deposit = payd.Deposit{Address: address.String, Reference: reference}
		c.Crypto.ExchangeRatesID = ratesID
	}
	return &c, nil
}

// decodeCheckoutJSON reads the JSON columns back into c.
func decodeCheckoutJSON(c *payd.Checkout, j checkoutJSON) error {
	var b storedBreakdown
	var r storedReporting
	var ts []storedTransfer
	for _, col := range []struct {
		text string
		v    any
	}{{j.breakdown, &b}, {j.reporting, &r}, {j.transfers, &ts}} {
		if err := json.Unmarshal([]byte(col.text), col.v); err != nil {
			return err
		}
	}
	c.Breakdown, c.Reporting = payd.Breakdown(b), payd.Reporting(r)
	for _, t := range ts {
		st, err := t.transfer()
		if err != nil {
			return err
		}
		c.Transfers = append(c.Transfers, st)
	}
	if j.card.Valid {
		var k storedCard
		if err := json.Unmarshal([]byte(j.card.String), &k); err != nil {
			return err
		}
		card, err := k.card()
		if err != nil {
			return err
		}
		c.Card = card
	}
	if !j.quote.Valid {
		return nil
	}
	var q storedQuote
	if err := json.Unmarshal([]byte(j.quote.String), &q); err != nil {
		return err
	}
	var err error
	c.Crypto, err = q.quote()
	return err
}

// nullText scans a nullable TEXT column into a string, NULL as "", the
// way null stores "".
type nullText struct{ s *string }

// Scan implements sql.Scanner.
func (n nullText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.s = ""
	case string:
		*n.s = v
	case []byte:
		*n.s = string(v)
	default:
		return fmt.Errorf("store: cannot read %T as text", src)
	}
	return nil
}

// storedBreakdown is how payd.Breakdown is kept in checkouts.breakdown:
// explicit names, so that renaming a Go field can never change stored data.
type storedBreakdown struct {
	Price         int64  `json:"price"`
	ProcessingFee *int64 `json:"processing_fee"`
	NetworkFee    *int64 `json:"network_fee"`
	Total         int64  `json:"total"`
}

// storedReporting is how payd.Reporting is kept in checkouts.reporting.
type storedReporting struct {
	AmountUSD         int64  `json:"amount_usd"`
	FeeUSD            *int64 `json:"fee_usd"`
	TransactionFeeUSD int64  `json:"transaction_fee_usd"`
	CustomerFeeUSD    int64  `json:"customer_fee_usd"`
	NetUSD            int64  `json:"net_usd"`
}

// storedCoin is a money.CoinAmount: base units as a decimal integer
// string, exact for any wei amount. Units is omitted for nil Units, which
// CoinAmount reads as zero, so that a value reads back exactly as stored.
type storedCoin struct {
	Asset money.Asset `json:"asset"`
	Units *string     `json:"units,omitempty"`
}

// storeCoin returns the stored form of a.
func storeCoin(a money.CoinAmount) storedCoin {
	s := storedCoin{Asset: a.Asset}
	if a.Units != nil {
		u := a.Units.String()
		s.Units = &u
	}
	return s
}

// coin reads a stored amount back.
func (s storedCoin) coin() (money.CoinAmount, error) {
	a := money.CoinAmount{Asset: s.Asset}
	if s.Units == nil {
		return a, nil
	}
	u, ok := new(big.Int).SetString(*s.Units, 10)
	if !ok {
		return a, fmt.Errorf("stored coin amount %q is not an integer", *s.Units)
	}
	a.Units = u
	return a, nil
}

// storedQuote is how payd.CryptoQuote is kept in checkouts.quote. The
// network and the deposit live in their own columns.
type storedQuote struct {
	Asset        money.Asset `json:"asset"`
	Amount       storedCoin  `json:"amount"`
	PriorAmount  storedCoin  `json:"prior_amount"`
	AddressIndex uint32      `json:"address_index"`
	Rate         int64       `json:"rate"`
	CoinPriceUSD int64       `json:"coin_price_usd"`
	WalletID     string      `json:"wallet_id"`
	PaymentURI   string      `json:"payment_uri"`
}

// storeQuote returns the stored form of q.
func storeQuote(q *payd.CryptoQuote) storedQuote {
	return storedQuote{Asset: q.Asset, Amount: storeCoin(q.Amount), PriorAmount: storeCoin(q.PriorAmount),
		AddressIndex: q.AddressIndex, Rate: q.Rate, CoinPriceUSD: q.CoinPriceUSD, WalletID: q.WalletID,
		PaymentURI: q.PaymentURI}
}

// quote reads a stored quote back, without its network and deposit.
func (s storedQuote) quote() (*payd.CryptoQuote, error) {
	amount, err := s.Amount.coin()
	if err != nil {
		return nil, err
	}
	prior, err := s.PriorAmount.coin()
	if err != nil {
		return nil, err
	}
	return &payd.CryptoQuote{Asset: s.Asset, Amount: amount, PriorAmount: prior, AddressIndex: s.AddressIndex,
		Rate: s.Rate, CoinPriceUSD: s.CoinPriceUSD, WalletID: s.WalletID, PaymentURI: s.PaymentURI}, nil
}

// storedTransfer is how a payd.SeenTransfer is kept in checkouts.transfers;
// seen_at is Unix microseconds like every stored time.
type storedTransfer struct {
	TxHash        string     `json:"tx_hash"`
	Index         int        `json:"index"`
	From          string     `json:"from"`
	Amount        storedCoin `json:"amount"`
	Confirmations int        `json:"confirmations"`
	Reported      int        `json:"reported"`
	Counted       bool       `json:"counted"`
	Late          bool       `json:"late"`
	Gone          bool       `json:"gone,omitempty"`
	SeenAt        int64      `json:"seen_at"`
}

// storeTransfer returns the stored form of t.
func storeTransfer(t payd.SeenTransfer) storedTransfer {
	return storedTransfer{TxHash: t.TxHash, Index: t.Index, From: t.From, Amount: storeCoin(t.Amount),
		Confirmations: t.Confirmations, Reported: t.Reported, Counted: t.Counted, Late: t.Late, Gone: t.Gone,
		SeenAt: micros(t.SeenAt)}
}

// transfer reads a stored transfer back.
func (s storedTransfer) transfer() (payd.SeenTransfer, error) {
	amount, err := s.Amount.coin()
	return payd.SeenTransfer{TxHash: s.TxHash, Index: s.Index, From: s.From, Amount: amount,
		Confirmations: s.Confirmations, Reported: s.Reported, Counted: s.Counted, Late: s.Late,
		Gone: s.Gone, SeenAt: fromMicros(s.SeenAt)}, err
}

// storedCard is how payd.Card is kept in checkouts.card; provider, session
// and status are also copied into their own columns for lookups.
type storedCard struct {
	Provider       string          `json:"provider"`
	Route          int             `json:"route"`
	Session        string          `json:"session"`
	RedirectURL    string          `json:"redirect_url"`
	Status         payd.CardStatus `json:"status"`
	Country        string          `json:"country,omitempty"`
	Brand          string          `json:"brand,omitempty"`
	Last4          string          `json:"last4,omitempty"`
	CardCountry    string          `json:"card_country,omitempty"`
	Reference      string          `json:"reference,omitempty"`
	DeclineCode    string          `json:"decline_code,omitempty"`
	DeclineMessage string          `json:"decline_message,omitempty"`
	TxHash         string          `json:"tx_hash,omitempty"`
	Gross          storedCoin      `json:"gross"`
}

// storeCard returns the stored form of k.
func storeCard(k *payd.Card) storedCard {
	return storedCard{Provider: k.Provider, Route: k.Route, Session: k.Session, RedirectURL: k.RedirectURL,
		Status: k.Status, Country: k.Country, Brand: k.Brand, Last4: k.Last4, CardCountry: k.CardCountry,
		Reference: k.Reference, DeclineCode: k.DeclineCode, DeclineMessage: k.DeclineMessage, TxHash: k.TxHash,
		Gross: storeCoin(k.Gross)}
}

// card reads a stored card back.
func (s storedCard) card() (*payd.Card, error) {
	gross, err := s.Gross.coin()
	return &payd.Card{Provider: s.Provider, Route: s.Route, Session: s.Session, RedirectURL: s.RedirectURL,
		Status: s.Status, Country: s.Country, Brand: s.Brand, Last4: s.Last4, CardCountry: s.CardCountry,
		Reference: s.Reference, DeclineCode: s.DeclineCode, DeclineMessage: s.DeclineMessage, TxHash: s.TxHash,
		Gross: gross}, err
}
