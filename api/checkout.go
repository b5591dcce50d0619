package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// createCheckoutRequest is the body of POST /checkouts (CONTRACT.md): the
// hosted page names a link by code or a payment by id, and the coin.
type createCheckoutRequest struct {
	LinkCode  *string `json:"link_code"`
	PaymentID *string `json:"payment_id"`
	Rail      *string `json:"rail"`
	Asset     *string `json:"asset"`
	Network   *string `json:"network"`
	Email     *string `json:"email"`
	// Country is the customer's region, for the card limits.
	Country *string `json:"country"`
}

// checkoutChoice is a validated createCheckoutRequest.
type checkoutChoice struct {
	linkCode, paymentID, email, country string
	rail                                payd.Rail
	asset                               money.Asset
	network                             money.Network
}

// choice checks the request's shape: one of link_code and payment_id, a
// known rail, and for crypto a known coin and network.
func (req *createCheckoutRequest) choice() (checkoutChoice, error) {
	ch := checkoutChoice{linkCode: deref(req.LinkCode), paymentID: deref(req.PaymentID),
		email: strings.TrimSpace(deref(req.Email))}
	if (ch.linkCode == "") == (ch.paymentID == "") {
		return ch, payd.FieldError("link_code", "send either link_code or payment_id")
	}
	switch deref(req.Rail) {
	case string(payd.RailCrypto), string(payd.RailCard):
		ch.rail = payd.Rail(deref(req.Rail))
	case "":
		return ch, payd.FieldError("rail", "rail is required: crypto or card")
	default:
		return ch, payd.FieldError("rail", "rail must be crypto or card")
	}
	var err error
	if ch.country, err = parseCountry(deref(req.Country)); err != nil {
		return ch, err
	}
	if ch.rail == payd.RailCard && req.Asset == nil && req.Network == nil {
		// The coin delivered is the business's choice (cardCoin).
		return ch, checkEmail(ch.email)
	}
	var ok bool
	if ch.asset, ok = money.ParseAsset(deref(req.Asset)); !ok {
		return ch, payd.FieldError("asset", "asset must be one of USDC, USDT, BTC, ETH, SOL")
	}
	if ch.network, ok = money.ParseNetwork(deref(req.Network)); !ok {
		return ch, payd.FieldError("network", "network must be one of bitcoin, ethereum, polygon, solana, tron")
	}
	return ch, checkEmail(ch.email)
}

// checkEmail checks an email the customer gave, if any.
func checkEmail(email string) error {
	if email == "" {
		return nil
	}
	return payd.CheckCustomerEmail("email", email)
}

// checkoutTarget is what a checkout is opened for, resolved before the
// transaction: the business, its settings and wallet, and the link (for a
// link's new payment) or payment.
type checkoutTarget struct {
	biz     *payd.Business
	link    *payd.Link
	payment *payd.Payment
	wallet  *payd.Wallet
	cs      *payd.CheckoutSettings
}

// currency is what the checkout's price is in.
func (tg *checkoutTarget) currency() money.Currency {
	if tg.link != nil {
		return tg.link.Currency
	}
	return tg.payment.Currency
}

// createCheckout serves POST /checkouts (spec 2.5, 7.4): it checks the
// choice against the business, then in one transaction makes the link's
// payment (or takes the payment, replacing its open checkout), hands out
// a fresh deposit and stores the quote.
func (s *Server) createCheckout(w http.ResponseWriter, r *http.Request) error {
	var req createCheckoutRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	ch, err := req.choice()
	if err != nil {
		return err
	}
	if ch.rail == payd.RailCard {
		return s.createCardCheckout(w, r, ch)
	}
	ctx := r.Context()
	tg, err := s.checkoutTarget(ctx, ch)
	if err != nil {
		return err
	}
	open, err := s.openParams(ctx, tg, ch)
	if err != nil {
		return err
	}
	s.deposits.prepare(ch.network, tg.wallet.Keys[ch.network])
	return s.opened(s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		c, err := s.openCheckout(ctx, q, tg, ch, func(p *payd.Payment) (*payd.Checkout, error) {
			return s.quoteCheckout(ctx, q, tg, p, open)
		})
		if err != nil {
			return nil, err
		}
		return s.toCheckout(c), nil
	}), payd.RailCrypto, ch.network)
}

// checkoutTarget resolves the link or payment and checks the business can
// take this coin now.
func (s *Server) checkoutTarget(ctx context.Context, ch checkoutChoice) (*checkoutTarget, error) {
	tg := &checkoutTarget{}
	bizID, err := s.resolveTarget(ctx, ch, tg)
	if err != nil {
		return nil, err
	}
	if tg.biz, err = s.store.BusinessByID(ctx, bizID); err != nil {
		return nil, err
	}
	if err := publicTarget(ctx, tg.biz); err != nil {
		return nil, err
	}
	if tg.cs, err = s.checkoutSettings(ctx, s.store, bizID); err != nil {
		return nil, err
	}
	if err := checkAccepted(s.avail(), tg.cs, ch); err != nil {
		return nil, err
	}
	if err := s.pauses.check(ctx, "network:"+string(ch.network)); err != nil {
		return nil, err
	}
	return tg, s.loadWallet(ctx, tg, ch)
}

// resolveTarget finds the link (link_not_found unless active,
// link_archived) or the payment (payment_not_found), and returns the
// business it belongs to.
func (s *Server) resolveTarget(ctx context.Context, ch checkoutChoice, tg *checkoutTarget) (string, error) {
	if ch.paymentID != "" {
		p, err := s.store.PublicPayment(ctx, ch.paymentID)
		if payd.IsNotFound(err) {
			return "", payd.Errorf(payd.ErrPaymentNotFound, "no payment has this id")
		} else if err != nil {
			return "", err
		}
		tg.payment = p
		return p.BusinessID, p.CheckOpenable(s.clock.Now())
	}
	l, err := s.store.LinkByCode(ctx, ch.linkCode)
	switch {
	case payd.IsNotFound(err) || err == nil && l.Status == payd.LinkDisabled:
		return "", payd.Errorf(payd.ErrLinkNotFound, "no active link has this code")
	case err != nil:
		return "", err
	case l.Status == payd.LinkArchived:
		return "", payd.Errorf(payd.ErrLinkArchived, "this link no longer takes payments")
	}
	tg.link = l
	return l.BusinessID, nil
}

// checkAccepted refuses a rail or coin the business's settings do not
// allow or this payd cannot take, and a missing email.
func checkAccepted(a payd.Availability, cs *payd.CheckoutSettings, ch checkoutChoice) error {
	if err := a.CheckCrypto(cs, ch.asset, ch.network); err != nil {
		return err
	}
	switch {
	case cs.CollectEmail && ch.email == "":
		return &payd.Error{Code: payd.ErrEmailRequired, Field: "email", Message: "this business asks for your email"}
	}
	return nil
}

// publicTarget checks the business a public route opens a checkout for, and
// the key a caller may send with it: a suspended business takes no payments
// (business_suspended). The route needs no key, but a caller that sends one
// acts with it: it must be one of biz's own (business_forbidden otherwise,
// so another business's key is never recorded as the actor of biz's
// events), and a test key acts on no live business (test_mode_unavailable,
// spec 5.3).
func publicTarget(ctx context.Context, biz *payd.Business) error {
	if biz.SuspendedAt != nil {
		return payd.Errorf(payd.ErrBusinessSuspended, "this business cannot take payments right now")
	}
	k := callOf(ctx).key
	if k != nil && k.BusinessID != biz.ID {
		return payd.Errorf(payd.ErrBusinessForbidden, "this key belongs to another business; send this business's own key, or none")
	}
	return biz.RefuseTestKey(k)
}

// loadWallet requires a wallet that receives the coin (not_accepting).
func (s *Server) loadWallet(ctx context.Context, tg *checkoutTarget, ch checkoutChoice) error {
	w, err := s.store.WalletByBusiness(ctx, tg.biz.ID)
	if err != nil && !payd.IsNotFound(err) {
		return err
	}
	if err := w.CheckReceives(ch.asset, ch.network); err != nil {
		return err
	}
	tg.wallet = w
	return nil
}

// openParams gathers what the quote needs from outside the database: the
// rates and the network's fee estimate.
func (s *Server) openParams(ctx context.Context, tg *checkoutTarget, ch checkoutChoice) (payd.OpenParams, error) {
	n := s.opts.Networks[ch.network]
	if n == nil {
		return payd.OpenParams{}, payd.Errorf(payd.ErrTemporarilyUnavailable, "%s cannot be used right now", ch.network)
	}
	x, err := s.ratesFor(ctx, tg.currency(), ch.asset)
	if err != nil {
		return payd.OpenParams{}, err
	}
	fee, err := n.FeeEstimateUSD(ctx, ch.asset)
	if err != nil {
		return payd.OpenParams{}, err
	}
	return payd.OpenParams{Asset: ch.asset, Network: ch.network, Rates: x, QuoteMinutes: tg.cs.QuoteMinutes,
		WalletID: tg.wallet.ID, NetworkFeeUSD: fee, Required: s.required(ch.network), Email: ch.email}, nil
}

// required is the network's confirmation count.
func (s *Server) required(n money.Network) int {
	if c := s.opts.Confirmations[n]; c > 0 {
		return c
	}
	return payd.DefaultConfirmations[n]
}

// openCheckout runs in the transaction: the payment (new for a link, read
// and locked otherwise), its customer, the replaced checkout, and the new
// checkout open makes on the payment (a crypto quote, or a card
// checkout), all stored together: the one way both rails open one.
func (s *Server) openCheckout(ctx context.Context, q payd.Queries, tg *checkoutTarget, ch checkoutChoice,
	open func(*payd.Payment) (*payd.Checkout, error)) (*payd.Checkout, error) {
	p, fresh, err := s.checkoutPayment(ctx, q, tg, ch)
	if err != nil {
		return nil, err
	}
	var old *payd.Payment
	if !fresh {
		was := *p
		old = &was
	}
	c, err := open(p)
	if err != nil {
		return nil, err
	}
	actor := actorOf(ctx, ch.email)
	if old != nil {
		if err := s.replaceCheckout(ctx, q, old.CheckoutID, c.ID, c.CreatedAt, actor); err != nil {
			return nil, err
		}
	}
	return c, payd.SaveOpenedCheckout(ctx, q, s, old, p, c, actor)
}

// quoteCheckout takes a deposit from the target's wallet and opens a
// checkout on p with it, for the caller to store (payd.SaveOpenedCheckout):
// the one way a first checkout and a remainder's are made.
func (s *Server) quoteCheckout(ctx context.Context, q payd.Queries, tg *checkoutTarget, p *payd.Payment, in payd.OpenParams) (*payd.Checkout, error) {
	if err := s.deposit(ctx, q, tg.wallet, &in); err != nil {
		return nil, err
	}
	c, err := payd.OpenCryptoCheckout(p, in, s.clock.Now())
	if err != nil {
		return nil, err
	}
	c.Crypto.PaymentURI = s.opts.Networks[in.Network].PaymentURI(payd.PaymentRequest{Deposit: c.Crypto.Deposit,
		Amount: c.Crypto.Amount, Label: tg.biz.Name})
	return c, nil
}

// deposit hands out the wallet's next receive index on the network and
// takes its deposit, derived ahead by this request or another (see
// depositsAhead) or now. Where the wallet's key may overlap another
// wallet's (payd.Wallet.Overlap: a key attached to two wallets before keys
// were compared by identity), a deposit another checkout already has is
// skipped for the next index: failing on it would fail every checkout of
// the business from then on. Elsewhere no checkout pays for that look-up.
func (s *Server) deposit(ctx context.Context, q payd.Queries, w *payd.Wallet, in *payd.OpenParams) error {
	for {
		idx, err := q.NextAddressIndex(ctx, w.ID, in.Network)
		if err != nil {
			return err
		}
		d, err := s.deposits.take(in.Network, w.Keys[in.Network], idx)
		if err != nil {
			return err
		}
		taken, err := depositTaken(ctx, q, w, in.Network, d)
		if err != nil {
			return err
		}
		if !taken {
			in.AddressIndex, in.Deposit = idx, d
			return nil
		}
		s.log.WarnContext(ctx, "api: a deposit address belongs to another checkout; skipping its index",
			"wallet", w.ID, "network", in.Network, "index", idx)
	}
}

// depositTaken reports whether another checkout has d, looking only where
// w's key may overlap another wallet's (payd.Wallet.Overlap).
func depositTaken(ctx context.Context, q payd.Queries, w *payd.Wallet, n money.Network, d payd.Deposit) (bool, error) {
	if !w.Overlap[n] {
		return false, nil
	}
	return q.DepositTaken(ctx, n, d)
}

// checkoutPayment returns the payment the checkout is for: a new one for
// a link (fresh is true), or the named payment read again under lock and
// checked once more.
func (s *Server) checkoutPayment(ctx context.Context, q payd.Queries, tg *checkoutTarget, ch checkoutChoice) (_ *payd.Payment, fresh bool, err error) {
	now := s.clock.Now()
	var cust *payd.Customer
	if ch.email != "" {
		if cust, err = s.resolveCustomer(ctx, q, tg.biz.ID, customerRef{email: ch.email}, now); err != nil {
			return nil, false, err
		}
	}
	if tg.link == nil {
		p, err := q.PaymentByID(ctx, tg.biz.ID, tg.payment.ID)
		if err != nil {
			return nil, false, err
		}
		return p, false, p.CheckOpenable(now)
	}
	l := tg.link
	x, err := s.ratesFor(ctx, l.Currency, "")
	if err != nil {
		return nil, false, err
	}
	in := payd.PaymentParams{Amount: l.Amount, Currency: l.Currency, Description: l.Name, LinkID: l.ID,
		SuccessURL: l.SuccessURL, FeePayer: tg.cs.FeePayer}
	if cust != nil {
		in.CustomerID = cust.ID
	}
	p, err := payd.NewPayment(tg.biz.ID, in, x, s.opts.Dev, now)
	return p, true, err
}

// replaceCheckout ends the payment's previous checkout, if any, in favour
// of next (checkout_not_supersedable when it cannot be).
func (s *Server) replaceCheckout(ctx context.Context, q payd.Queries, prev, next string, now time.Time, actor payd.Actor) error {
	if prev == "" {
		return nil
	}
	old, err := q.CheckoutByID(ctx, prev)
	if err != nil {
		return err
	}
	changed, err := old.Replace(next, now)
	if err != nil || !changed {
		return err
	}
	if err := q.UpdateCheckout(ctx, old); err != nil {
		return err
	}
	return s.CheckoutChanged(ctx, q, payd.CheckoutOpen, old, actor)
}

// getCheckout serves GET /checkouts/{id}: public, as the hosted page polls
// it. link_code or payment_code scope it to one page (checkoutOfPage).
func (s *Server) getCheckout(w http.ResponseWriter, r *http.Request) error {
	c, err := s.store.CheckoutByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.checkoutOfPage(r.Context(), r.URL.Query(), c); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{s.toCheckout(c)})
	return nil
}

// checkoutOfPage checks that c belongs to the page named by link_code (a
// checkout of that link) or payment_code (of that payment), and answers
// not_found otherwise, as for a checkout that does not exist. A hosted page
// asks this way, so that it never shows a checkout it does not sell: a
// checkout id is no secret from whoever opened it, and without the check
// anyone could show their own deposit address on another business's page.
// Without either parameter any checkout is answered.
func (s *Server) checkoutOfPage(ctx context.Context, v url.Values, c *payd.Checkout) error {
	link, err := optText(v, "link_code", maxFilterLen)
	if err != nil {
		return err
	}
	pay, err := optText(v, "payment_code", maxFilterLen)
	if err != nil {
		return err
	}
	var owns bool
	switch {
	case link != nil && pay != nil:
		return payd.FieldError("payment_code", "give link_code or payment_code, not both")
	case link != nil:
		l, err := s.store.LinkByCode(ctx, *link)
		if err != nil && !payd.IsNotFound(err) {
			return err
		}
		owns = err == nil && c.LinkID == l.ID
	case pay != nil:
		p, err := s.store.PaymentByCode(ctx, *pay)
		if err != nil && !payd.IsNotFound(err) {
			return err
		}
		owns = err == nil && c.PaymentID == p.ID
	default:
		return nil
	}
	if !owns {
		return payd.Errorf(payd.ErrNotFound, "checkout not found")
	}
	return nil
}
