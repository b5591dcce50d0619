package stripe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// session is the part of Stripe's CryptoOnrampSession object payd reads
// (docs.stripe.com/api/crypto/onramp_sessions/object). Stripe adds fields
// over time, so unknown ones are ignored.
type session struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	RedirectURL *string `json:"redirect_url"`
	Status      string  `json:"status"`
	Details     struct {
		DestinationCurrency *string `json:"destination_currency"`
		DestinationNetwork  *string `json:"destination_network"`
		DestinationAmount   *string `json:"destination_amount"`
		TransactionID       *string `json:"transaction_id"`
		LockWalletAddress   bool    `json:"lock_wallet_address"`
		WalletAddress       *string `json:"wallet_address"`
		// WalletAddresses holds one address per network, and
		// destination_tags, which is not an address: hence any.
		WalletAddresses map[string]any `json:"wallet_addresses"`
	} `json:"transaction_details"`
}

// objectSession is the object field of an onramp session.
const objectSession = "crypto.onramp_session"

// decodeSession reads an onramp session as Stripe answers it.
func decodeSession(raw []byte) (*session, error) {
	var s session
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("stripe: the onramp session is not JSON: %w", err)
	}
	if s.Object != objectSession || s.ID == "" {
		return nil, fmt.Errorf("stripe: expected a %s with an id, got object %q", objectSession, s.Object)
	}
	return &s, nil
}

// The session statuses Stripe documents
// (docs.stripe.com/crypto/onramp/embedded, "States").
const (
	statusInitialized     = "initialized"
	statusRejected        = "rejected"
	statusRequiresPayment = "requires_payment"
	statusProcessing      = "fulfillment_processing"
	statusComplete        = "fulfillment_complete"
)

// rejectedMessage is what a declined route tells the customer: Stripe
// says no more than that it rejected the customer.
const rejectedMessage = "Stripe could not accept this purchase (its identity, sanctions or fraud checks did not pass)."

// report maps the session to payd's report, false for a status Stripe does
// not document (payd then changes nothing rather than guess).
func (s *session) report() (payd.CardReport, bool) {
	r := payd.CardReport{Session: s.ID, Reference: s.ID}
	switch s.Status {
	case statusInitialized, statusRequiresPayment:
		// requires_payment also covers a failed card attempt on Stripe's
		// page: the customer may try another card there.
		r.Status = payd.CardAwaiting
	case statusProcessing:
		r.Status = payd.CardProcessing
	case statusComplete:
		r.Status = payd.CardDelivered
		if t := s.Details.TransactionID; t != nil {
			r.TxHash = *t
		}
	case statusRejected:
		r.Status, r.DeclineCode, r.DeclineMessage = payd.CardDeclined, payd.CardDeclinedGeneric, rejectedMessage
	default:
		return payd.CardReport{}, false
	}
	return r, true
}

// Start mints the route's onramp session with the coin, network, amount
// and deposit address locked, and returns its id and redirect_url (the
// Stripe-hosted onramp). upstream_unavailable when Stripe cannot be
// reached or answers 429 or 5xx; temporarily_unavailable with Stripe's
// error code when it refuses (a customer region it does not serve, a
// misconfigured account).
func (p *Provider) Start(ctx context.Context, req payd.CardSessionRequest) (payd.CardSession, error) {
	c, ok := coins[req.Deliver.Asset][req.Network]
	if !ok {
		return payd.CardSession{}, payd.Errorf(payd.ErrAssetUnavailable, "Stripe does not deliver %s on %s", req.Deliver.Asset, req.Network)
	}
	form := createForm(req, c)
	body := form.Encode()
	raw, err := p.call(ctx, http.MethodPost, "/v1/crypto/onramp_sessions", body, idempotencyKey(req, body))
	if err != nil {
		return payd.CardSession{}, err
	}
	s, err := decodeSession(raw)
	if err != nil {
		return payd.CardSession{}, payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe answered an onramp session payd cannot read")
	}
	if s.RedirectURL == nil || !hostedURL(*s.RedirectURL) {
		return payd.CardSession{}, payd.Errorf(payd.ErrUpstreamUnavailable,
			"Stripe opened onramp session %s without a hosted page to send the customer to", s.ID)
	}
	if !s.lockedTo(c.network, req.Address) {
		return payd.CardSession{}, payd.Errorf(payd.ErrUpstreamUnavailable,
			"Stripe opened onramp session %s without locking it to the checkout's deposit address", s.ID)
	}
	return payd.CardSession{ID: s.ID, RedirectURL: *s.RedirectURL}, nil
}

// lockedTo reports whether the minted session delivers only to address on
// network, as asked: a session whose customer could pick another wallet
// would let the coin go where payd never sees it, so it is not used.
func (s *session) lockedTo(network, address string) bool {
	d := s.Details
	if !d.LockWalletAddress {
		return false
	}
	if a, ok := d.WalletAddresses[network].(string); ok {
		return a == address
	}
	return d.WalletAddress != nil && *d.WalletAddress == address
}

// createForm is the form of POST /v1/crypto/onramp_sessions
// (docs.stripe.com/api/crypto/onramp_sessions/create): exactly the net coin
// payd must receive, to the checkout's deposit, with the currency, network
// and address locked so the customer cannot pick others on Stripe's page.
func createForm(req payd.CardSessionRequest, c coin) url.Values {
	f := url.Values{}
	f.Set("destination_currency", c.currency)
	f.Set("destination_network", c.network)
	f.Set("destination_currencies[]", c.currency)
	f.Set("destination_networks[]", c.network)
	f.Set("destination_amount", req.Deliver.String())
	f.Set("wallet_addresses["+c.network+"]", req.Address)
	f.Set("lock_wallet_address", "true")
	// Stripe's onramp takes usd and eur only; for another price currency
	// the customer picks on Stripe's page.
	if req.Currency == money.USD || req.Currency == money.EUR {
		f.Set("source_currency", strings.ToLower(string(req.Currency)))
	}
	if ip, ok := publicIP(req.CustomerIP); ok {
		f.Set("customer_ip_address", ip)
	}
	if req.Email != "" {
		f.Set("customer_information[email]", req.Email)
	}
	return f
}

// publicIP is the customer's address when it is one Stripe can place:
// a loopback or private address (a development setup, a proxy payd does
// not trust) would only make Stripe refuse the customer.
func publicIP(s string) (string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", false
	}
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return "", false
	}
	return a.String(), true
}

// idempotencyKey makes a retried create (after a timeout, say) return the
// session Stripe already minted instead of a second one. It names the
// checkout and route and hashes the form, so a request with other
// parameters (another customer address) is a new request to Stripe rather
// than an idempotency error.
func idempotencyKey(req payd.CardSessionRequest, body string) string {
	sum := sha256.Sum256([]byte(body))
	return "payd-" + req.CheckoutID + "-" + strconv.Itoa(req.Route) + "-" + hex.EncodeToString(sum[:8])
}

// hostedURL reports whether u is an absolute https URL, the only kind payd
// sends a customer to.
func hostedURL(u string) bool {
	x, err := url.Parse(u)
	return err == nil && x.Scheme == "https" && x.Host != ""
}

// Status retrieves the session (GET /v1/crypto/onramp_sessions/{id}) and
// reports how it stands. upstream_unavailable as for Start.
func (p *Provider) Status(ctx context.Context, id string) (payd.CardReport, error) {
	if id == "" || strings.ContainsAny(id, "/?#%") {
		return payd.CardReport{}, payd.Errorf(payd.ErrInvalidRequest, "%q is not a Stripe onramp session id", id)
	}
	raw, err := p.call(ctx, http.MethodGet, "/v1/crypto/onramp_sessions/"+url.PathEscape(id), "", "")
	if err != nil {
		return payd.CardReport{}, err
	}
	s, err := decodeSession(raw)
	if err != nil {
		return payd.CardReport{}, payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe answered an onramp session payd cannot read")
	}
	r, ok := s.report()
	if !ok {
		return payd.CardReport{}, payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe reported onramp session %s in status %q, which payd does not know", s.ID, s.Status)
	}
	return r, nil
}

// maxAnswer bounds what payd reads of one Stripe answer.
const maxAnswer = 1 << 20

// call makes one request to Stripe and returns a 2xx answer's body, or the
// error payd reports for any other outcome.
func (p *Provider) call(ctx context.Context, method, path, form, idem string) ([]byte, error) {
	var body io.Reader
	if form != "" {
		body = strings.NewReader(form)
	}
	hr, err := http.NewRequestWithContext(ctx, method, p.base+path, body)
	if err != nil {
		return nil, err
	}
	hr.SetBasicAuth(p.key, "")
	if form != "" {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if idem != "" {
		hr.Header.Set("Idempotency-Key", idem)
	}
	res, err := p.http.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe cannot be reached now; try again shortly")
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe's answer was cut off; try again shortly")
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return raw, nil
	}
	return nil, answerError(res.StatusCode, res.Header.Get("Request-Id"), raw)
}

// apiError is Stripe's error envelope (docs.stripe.com/api/errors).
type apiError struct {
	Error struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
}

// decodeError reads Stripe's error envelope; a body that is not one gives
// the zero value.
func decodeError(raw []byte) apiError {
	var e apiError
	if err := json.Unmarshal(raw, &e); err != nil {
		return apiError{}
	}
	return e
}

// codeDisabled is the error Stripe answers while it has turned the onramp
// off for an incident: temporary, like a 5xx.
const codeDisabled = "crypto_onramp_disabled"

// answerError is the payd error for a Stripe answer that is not 2xx: 429,
// 5xx and the onramp's incident switch are upstream_unavailable; any other
// refusal is temporarily_unavailable naming Stripe's code and request id
// (for the operator's search in Stripe's logs) but not Stripe's free text,
// which may quote account details a customer must not see.
func answerError(status int, requestID string, raw []byte) error {
	e := decodeError(raw).Error
	if status == http.StatusTooManyRequests || status >= 500 || e.Code == codeDisabled {
		return payd.Errorf(payd.ErrUpstreamUnavailable, "Stripe's onramp is not available now (HTTP %d); try again shortly", status)
	}
	what := e.Code
	if what == "" {
		what = e.Type
	}
	if what == "" {
		what = "no error code"
	}
	msg := fmt.Sprintf("Stripe refused the card payment session (HTTP %d, %s", status, what)
	if e.Param != "" {
		msg += ", parameter " + e.Param
	}
	if requestID != "" {
		msg += ", request " + requestID
	}
	return &payd.Error{Code: payd.ErrTemporarilyUnavailable, Message: msg + ")"}
}
