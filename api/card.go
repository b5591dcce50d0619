package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// The card rail's routes (docs/card.md): POST /checkouts with rail card,
// the routes a card checkout's page uses, and the providers' webhooks.

// createCardCheckout serves POST /checkouts with rail card: it checks the
// rail, the coin the provider delivers and the email, then in one
// transaction makes the link's payment (or takes the payment, replacing
// its checkout), hands out a fresh deposit for the delivery and stores the
// checkout with its first route. The provider's session is opened when the
// customer goes to pay (POST /checkouts/{id}/card/session), never inside a
// transaction.
func (s *Server) createCardCheckout(w http.ResponseWriter, r *http.Request, ch checkoutChoice) error {
	ctx := r.Context()
	prov := s.opts.Card
	tg := &checkoutTarget{}
	bizID, err := s.resolveTarget(ctx, ch, tg)
	if err != nil {
		return err
	}
	if tg.biz, err = s.store.BusinessByID(ctx, bizID); err != nil {
		return err
	}
	if err := publicTarget(ctx, tg.biz); err != nil {
		return err
	}
	if tg.cs, err = s.checkoutSettings(ctx, s.store, bizID); err != nil {
		return err
	}
	cs := s.avail().Restrict(tg.cs)
	if prov == nil || !cs.AcceptsRail(payd.RailCard) {
		return payd.Errorf(payd.ErrRailUnavailable, "this business does not take card payments")
	}
	if err := s.pauses.check(ctx, payd.PauseCard); err != nil {
		return err
	}
	if (prov.NeedsEmail() || cs.CollectEmail) && ch.email == "" {
		return &payd.Error{Code: payd.ErrEmailRequired, Field: "email", Message: "an email is needed to pay by card"}
	}
	if tg.wallet, err = s.store.WalletByBusiness(ctx, bizID); err != nil && !payd.IsNotFound(err) {
		return err
	}
	if err := s.cardCoin(cs, tg.wallet, &ch); err != nil {
		return err
	}
	if err := s.pauses.check(ctx, "network:"+string(ch.network)); err != nil {
		return err
	}
	x, err := s.ratesFor(ctx, tg.currency(), ch.asset)
	if err != nil {
		return err
	}
	country := ch.country
	if country == "" && tg.payment != nil {
		country = tg.payment.Country
	}
	in := payd.CardOpenParams{Asset: ch.asset, Network: ch.network, Rates: x, QuoteMinutes: tg.cs.QuoteMinutes,
		WalletID: tg.wallet.ID, Required: s.required(ch.network), Email: ch.email, Country: country,
		Provider: prov.Name(), Limits: prov.Limits(tg.currency(), country)}
	s.deposits.prepare(ch.network, tg.wallet.Keys[ch.network])
	return s.opened(s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		c, err := s.openCheckout(ctx, q, tg, ch, func(p *payd.Payment) (*payd.Checkout, error) {
			dep := payd.OpenParams{Network: ch.network}
			if err := s.deposit(ctx, q, tg.wallet, &dep); err != nil {
				return nil, err
			}
			in.Deposit, in.AddressIndex = dep.Deposit, dep.AddressIndex
			terms, quote, gross, err := payd.CardQuote(p, in)
			if err != nil {
				return nil, err
			}
			return payd.OpenCardCheckout(p, in, terms, quote, gross, s.clock.Now()), nil
		})
		if err != nil {
			return nil, err
		}
		return s.toCheckout(c), nil
	}), payd.RailCard, ch.network)
}

// cardCoin settles which coin the provider delivers: the one the request
// names, which the business must accept, this payd take, the provider
// deliver and the wallet receive (asset_unavailable, not_accepting); or,
// when none is named, the first such coin of the business's accepted ones,
// stablecoins first.
func (s *Server) cardCoin(cs *payd.CheckoutSettings, wallet *payd.Wallet, ch *checkoutChoice) error {
	prov := s.opts.Card
	if ch.asset != "" {
		if !money.Supports(ch.asset, ch.network) || !cs.Accepts(ch.asset, ch.network) ||
			!prov.Delivers(ch.asset, ch.network) {
			return payd.Errorf(payd.ErrAssetUnavailable, "card payments cannot be delivered in %s on %s here", ch.asset, ch.network)
		}
		return wallet.CheckReceives(ch.asset, ch.network)
	}
	offers := cs.Offers()
	for _, stable := range []bool{true, false} {
		for _, o := range offers {
			if o.Asset.Stable() == stable && prov.Delivers(o.Asset, o.Network) && wallet.CheckReceives(o.Asset, o.Network) == nil {
				ch.asset, ch.network = o.Asset, o.Network
				return nil
			}
		}
	}
	if wallet == nil {
		return wallet.CheckReceives("", "")
	}
	return payd.Errorf(payd.ErrAssetUnavailable, "no coin this business accepts can be delivered by the card provider")
}

// cardRouteRequest names the route a card page shows.
type cardRouteRequest struct {
	Route *int `json:"route"`
}

// decodeRoute reads a card action's body: the route, required, from 1.
func decodeRoute(r *http.Request) (int, error) {
	var req cardRouteRequest
	if err := decode(r, &req); err != nil {
		return 0, err
	}
	if req.Route == nil || *req.Route < 1 {
		return 0, payd.FieldError("route", "route is required: the number of the card attempt the page shows")
	}
	return *req.Route, nil
}

// cardSession serves POST /checkouts/{id}/card/session: the customer goes
// to pay on the route's provider page. The provider's session is opened
// (outside any transaction) unless the route has one, and the checkout is
// answered with card.provider_url. wrong_rail, stale_route,
// checkout_not_awaiting (charged, declined, or not open), checkout_failed,
// checkout_expired, payment_paid.
func (s *Server) cardSession(w http.ResponseWriter, r *http.Request) error {
	route, err := decodeRoute(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := s.pauses.check(ctx, payd.PauseCard); err != nil {
		return err
	}
	c, p, err := s.cardCheckout(ctx, s.store, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := c.CheckCardAction(p, route); err != nil {
		return err
	}
	if err := c.CheckAwaiting(); err != nil {
		return err
	}
	if c.Card.Session == "" {
		if err := s.startCardSession(ctx, c, p, route, s.clientIP(r)); err != nil {
			return err
		}
		// c was read again: the route may have moved on meanwhile.
		if err := c.CheckCardAction(p, route); err != nil {
			return err
		}
		if err := c.CheckAwaiting(); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, single{s.toCheckout(c)})
	return nil
}

// startCardSession opens the provider's session for the route and stores
// it; when another request stored one first, c is read again and keeps
// that one.
func (s *Server) startCardSession(ctx context.Context, c *payd.Checkout, p *payd.Payment, route int, ip string) error {
	prov := s.opts.Card
	if prov == nil || prov.Name() != c.Card.Provider {
		return payd.Errorf(payd.ErrTemporarilyUnavailable, "the card provider of this checkout is not configured now")
	}
	back, err := s.checkoutPageURL(ctx, c, p)
	if err != nil {
		return err
	}
	sess, err := prov.Start(ctx, payd.CardSessionRequest{CheckoutID: c.ID, Route: route, Amount: c.Breakdown.Total,
		Currency: c.Currency, Deliver: c.Crypto.Amount, Network: c.Crypto.Network, Address: c.Crypto.Deposit.Address,
		Reference: c.Crypto.Deposit.Reference, Email: c.Email, Country: c.Card.Country, ReturnURL: back, CustomerIP: ip,
		ExpiresAt: c.ExpiresAt})
	if err != nil {
		return err
	}
	return s.store.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		fresh, err := q.CheckoutByID(ctx, c.ID)
		if err != nil {
			return err
		}
		*c = *fresh
		if !c.AttachSession(route, sess, s.clock.Now()) {
			return nil
		}
		return q.UpdateCheckout(ctx, c)
	})
}

// checkoutPageURL is the hosted page a checkout belongs to, naming the
// checkout: where the provider sends the customer back.
func (s *Server) checkoutPageURL(ctx context.Context, c *payd.Checkout, p *payd.Payment) (string, error) {
	if c.LinkID == "" {
		return s.paymentURL(p.Code) + "?checkout=" + c.ID, nil
	}
	l, err := s.store.LinkByID(ctx, c.BusinessID, c.LinkID)
	if err != nil {
		return "", err
	}
	return s.linkURL(l.Code) + "?checkout=" + c.ID, nil
}

// cardRetry serves POST /checkouts/{id}/card/retry: after a decline the
// customer tries again on a new route (spec 7.4: route_in_progress,
// checkout_not_retryable, no_route, stale_route, wrong_rail,
// checkout_failed, checkout_expired, payment_paid).
func (s *Server) cardRetry(w http.ResponseWriter, r *http.Request) error {
	route, err := decodeRoute(r)
	if err != nil {
		return err
	}
	if err := s.pauses.check(r.Context(), payd.PauseCard); err != nil {
		return err
	}
	return s.changeCheckout(w, r, func(c *payd.Checkout, p *payd.Payment, now time.Time) error {
		if err := c.CheckRetry(p, route); err != nil {
			return err
		}
		c.NextRoute(p, now)
		return nil
	})
}

// cardRefresh serves POST /checkouts/{id}/card/refresh: the page, back
// from the provider or waiting on it, asks for news. The provider is
// polled for the current route now and what it says is applied as the
// poller would (payd.SaveCardReport); the checkout is answered as it then
// stands. wrong_rail, stale_route.
func (s *Server) cardRefresh(w http.ResponseWriter, r *http.Request) error {
	route, err := decodeRoute(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	c, _, err := s.cardCheckout(ctx, s.store, r.PathValue("id"))
	if err != nil {
		return err
	}
	if c.Card.Route != route {
		return payd.Errorf(payd.ErrStaleRoute, "this card payment page is out of date; reload the checkout")
	}
	prov := s.opts.Card
	if c.Card.Session != "" && !c.Card.Status.Final() && prov != nil && prov.Name() == c.Card.Provider {
		if err := s.PollCard(ctx, c.Card.Session); err != nil {
			return err
		}
		if c, err = s.store.CheckoutByID(ctx, c.ID); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, single{s.toCheckout(c)})
	return nil
}

// cardCheckout reads a card checkout and its payment (wrong_rail for a
// crypto one).
func (s *Server) cardCheckout(ctx context.Context, q payd.Queries, id string) (*payd.Checkout, *payd.Payment, error) {
	c, err := q.CheckoutByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if c.Rail != payd.RailCard || c.Card == nil {
		return nil, nil, payd.Errorf(payd.ErrWrongRail, "this is a crypto checkout; card actions do not apply")
	}
	p, err := q.PaymentByID(ctx, c.BusinessID, c.PaymentID)
	return c, p, err
}

// PollCard asks the provider how a session stands and applies the answer
// (payd.PollCardSession), for the page's refresh and the sandbox's notice.
func (s *Server) PollCard(ctx context.Context, session string) error {
	if s.opts.Card == nil {
		return nil
	}
	return payd.PollCardSession(ctx, s.store, s.opts.Card, s, session, s.clock.Now)
}

// cardWebhook serves POST /card-providers/{provider}/webhook: the
// configured provider's signed status changes. A bad signature answers 400
// invalid_signature and changes nothing; a well-signed webhook is applied
// (a replay, an older status or a session payd does not follow changes
// nothing) and answered 200 {"received": true}, which is what providers
// take as delivered.
func (s *Server) cardWebhook(w http.ResponseWriter, r *http.Request) error {
	prov := s.opts.Card
	if prov == nil || prov.Name() != r.PathValue("provider") {
		return payd.Errorf(payd.ErrNotFound, "no card provider of this name is configured")
	}
	reps, err := prov.Webhook(r.Header, callOf(r.Context()).body)
	if err != nil {
		return err
	}
	if err := payd.ApplyCardReports(r.Context(), s.store, s, prov.Name(), reps, s.clock.Now); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"received": true})
	return nil
}

// cardAttempt is the wire form of a card checkout's attempts (spec 2.5
// card: fields left to us; docs/card.md).
type cardAttempt struct {
	Status            payd.CardStatus `json:"status"`
	Provider          string          `json:"provider"`
	Route             int             `json:"route"`
	RoutesLeft        int             `json:"routes_left"`
	RedirectURL       *string         `json:"redirect_url"`
	ProviderURL       *string         `json:"provider_url"`
	Asset             money.Asset     `json:"asset"`
	Network           money.Network   `json:"network"`
	Amount            string          `json:"amount"`
	GrossAmount       string          `json:"gross_amount"`
	Address           string          `json:"address"`
	Brand             *string         `json:"brand"`
	Last4             *string         `json:"last4"`
	Country           *string         `json:"country"`
	ProviderReference *string         `json:"provider_reference"`
	DeclineCode       *string         `json:"decline_code"`
	DeclineMessage    *string         `json:"decline_message"`
	TxHash            *string         `json:"tx_hash"`
	ExplorerURL       *string         `json:"explorer_url"`
}

// toCardAttempt shows a card checkout's current route. redirect_url, the
// page of payd's own that sends the customer to the provider, is set while
// the route waits for the customer (awaiting_payment, or its challenge
// step); provider_url once its session is open.
func (s *Server) toCardAttempt(c *payd.Checkout) *cardAttempt {
	k, q := c.Card, c.Crypto
	out := &cardAttempt{Status: k.Status, Provider: k.Provider, Route: k.Route, RoutesLeft: k.RoutesLeft(),
		Asset: q.Asset, Network: q.Network, Amount: q.Amount.String(), GrossAmount: k.Gross.String(),
		Address: q.Deposit.Address, Brand: nilIfEmpty(k.Brand), Last4: nilIfEmpty(k.Last4),
		Country: nilIfEmpty(k.CardCountry), ProviderReference: nilIfEmpty(k.Reference),
		DeclineCode: nilIfEmpty(k.DeclineCode), DeclineMessage: nilIfEmpty(k.DeclineMessage)}
	if c.Status == payd.CheckoutOpen && k.Status.MayStillSucceed() {
		u := s.opts.PublicURL + "/pay/card/" + c.ID + "?route=" + strconv.Itoa(k.Route)
		out.RedirectURL = &u
		out.ProviderURL = nilIfEmpty(k.RedirectURL)
	}
	tx := k.TxHash
	if last, ok := c.LastSent(); ok {
		tx = last.TxHash
	}
	if tx != "" {
		out.TxHash = &tx
		if n := s.opts.Networks[q.Network]; n != nil {
			u := n.ExplorerURL(tx)
			out.ExplorerURL = &u
		}
	}
	return out
}

// toMethodCard shows what a card payment's provider reported.
func toMethodCard(k *payd.MethodCard) *methodCard {
	if k == nil {
		return nil
	}
	return &methodCard{Provider: k.Provider, Status: k.Status, Brand: nilIfEmpty(k.Brand), Last4: nilIfEmpty(k.Last4),
		Country: nilIfEmpty(k.Country), ProviderReference: nilIfEmpty(k.Reference)}
}

// methodCard is the wire form of payd.MethodCard (method.card).
type methodCard struct {
	Provider          string          `json:"provider"`
	Status            payd.CardStatus `json:"status"`
	Brand             *string         `json:"brand"`
	Last4             *string         `json:"last4"`
	Country           *string         `json:"country"`
	ProviderReference *string         `json:"provider_reference"`
}

// parseCountry reads an optional two-letter region code.
func parseCountry(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if len(s) != 2 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return "", payd.FieldError("country", "country must be a two-letter code in capitals, such as DE")
	}
	return s, nil
}
