package web

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The card path of the hosted pages (docs/card.md, "The hosted page"): the
// choice offers "Pay by card" beside the coins; the form opens a card
// checkout and sends the customer through GET /pay/card/{checkout} to the
// provider's hosted card page; the provider sends them back to the page
// (?checkout=), which asks the API to refresh the route from the provider
// each time it renders (and so each time the script polls) and shows
// where it stands, with "Try again" after a decline.

// cardChoice is paying by card as the choice shows it.
type cardChoice struct {
	Total     string // "25.75 USD"
	Fee       string // the processing fee in it, when passed on
	Available bool
	Why       string // why not, when not available
}

// cardChoiceOf reads the offer's card item: nil when the business takes no
// card (or payd has no card provider).
func cardChoiceOf(m messages, o offer) *cardChoice {
	accepts := false
	for _, r := range o.AcceptedRails {
		accepts = accepts || r == "card"
	}
	if !accepts || len(o.Card) == 0 || !o.AcceptingPayments {
		return nil
	}
	k := o.Card[0]
	c := &cardChoice{Total: priceText(k.Total.Amount, k.Total.Currency), Available: k.Available}
	if f := k.Breakdown.ProcessingFee; f != nil {
		c.Fee = priceText(*f, k.Breakdown.Currency)
	}
	if !k.Available {
		c.Why = m.T("card.out_of_range", priceText(k.Min.Amount, k.Min.Currency), priceText(k.Max.Amount, k.Max.Currency))
	}
	return c
}

// cardView is what the page shows of a card checkout's current route.
type cardView struct {
	Status      string
	Route       int
	RoutesLeft  int
	GoURL       string // payd's own /pay/card/… page, while waiting for the customer
	Brand       string
	Last4       string
	Declined    string // the provider's words, or ours
	CanRetry    bool
	StartOver   bool // the checkout is over without payment: a new one is offered
	ChargedText string
}

// cardState names a card checkout's state for the page, and says it.
// Charged and delivered routes are followed on the network like a crypto
// transfer (detected, confirming, succeeded).
func cardState(m messages, c *checkout, v *checkoutView) (string, string) {
	k := c.Card
	switch {
	case c.ReviewReason != nil:
		return "review", m.T("status.review")
	case c.Status == "completed":
		return "succeeded", m.T("status.succeeded")
	case c.Status == "failed":
		return "card_failed", m.T("card.failed")
	case c.Status == "expired":
		return "expired", m.T("card.expired")
	case c.Status == "canceled":
		return "canceled", m.T("card.canceled")
	case c.Status == "underpaid":
		return "card_underpaid", m.T("card.underpaid")
	case c.Status == "open" && (k.Status == "delivered" || k.Status == "processing"):
		// Charged, but the delivery was dropped by its network before it
		// confirmed: the checkout waits for it again.
		return "card_processing", m.T("card.processing")
	case c.Status == "processing" && v.Current > 0:
		return "confirming", m.T("card.confirming", v.Current, v.Required)
	case c.Status == "processing" && (k.Status == "delivered" || v.TxHash != ""):
		return "delivered", m.T("card.delivered")
	case c.Status == "processing" || k.Status == "processing":
		return "card_processing", m.T("card.processing")
	case k.Status == "challenge":
		return "card_challenge", m.T("card.challenge")
	case k.Status == "declined":
		return "card_declined", m.T("card.declined")
	}
	return "card_awaiting", m.T("card.awaiting")
}

// viewCardCheckout turns a card checkout into what the page shows at now.
func viewCardCheckout(m messages, c *checkout, now time.Time) *checkoutView {
	k := c.Card
	v := &checkoutView{ID: c.ID, Asset: k.Asset, AssetName: m.T("asset." + k.Asset), Network: k.Network,
		NetworkName: m.T("network." + k.Network), Amount: k.Amount, Current: c.Confirmations.Current,
		Required: c.Confirmations.Required, Currency: c.Currency, ExpiresAt: c.ExpiresAt.UTC().Format(time.RFC3339),
		EndsAt: m.timeHTML("card.ends_at", c.ExpiresAt, "15:04"), Now: now.UTC().Format(time.RFC3339),
		Option: "card", Email: c.Email}
	v.timeLeft(c, now)
	if k.ExplorerURL != nil {
		v.ExplorerURL = template.URL(*k.ExplorerURL) //nolint:gosec // the API's explorer address
	}
	if k.TxHash != nil {
		v.TxHash = *k.TxHash
	}
	viewCard(m, c, v)
	return v
}

// viewCard fills the card part of a checkout's view.
func viewCard(m messages, c *checkout, v *checkoutView) {
	k := c.Card
	cv := &cardView{Status: k.Status, Route: k.Route, RoutesLeft: k.RoutesLeft}
	if k.RedirectURL != nil {
		cv.GoURL = *k.RedirectURL
	}
	if k.Brand != nil {
		cv.Brand = cardBrand(*k.Brand)
	}
	if k.Last4 != nil {
		cv.Last4 = *k.Last4
	}
	v.Card = cv
	v.State, v.StatusText = cardState(m, c, v)
	if v.State == "card_declined" || v.State == "card_failed" {
		cv.Declined = m.T("card.declined_default")
		if k.DeclineMessage != nil && strings.TrimSpace(*k.DeclineMessage) != "" {
			cv.Declined = *k.DeclineMessage
		}
	}
	cv.CanRetry = v.State == "card_declined" && k.RoutesLeft > 0
	cv.StartOver = v.State == "card_failed" || v.State == "expired" || v.State == "canceled"
	if cv.Last4 != "" {
		cv.ChargedText = m.T("card.charged_to", orWord(cv.Brand, m.T("card.card")), cv.Last4)
	}
	v.Live = v.State == "card_awaiting" || v.State == "card_challenge" || v.State == "card_processing" ||
		v.State == "delivered" || v.State == "confirming"
	v.TakesPayments = false
	if v.State == "succeeded" {
		v.PaidAt = m.timeHTML("receipt.paid_at", c.UpdatedAt, m.T("time.date_layout"))
	}
	v.Total = priceText(c.Breakdown.Total, c.Currency)
	v.Signature = v.State + "|" + c.Status + "|" + k.Status + "|" + strconv.Itoa(k.Route) + "|" + itoa(v.Current) +
		"|" + v.ExpiresAt
}

// cardBrand is a card network's name as printed on cards.
func cardBrand(b string) string {
	switch strings.ToLower(b) {
	case "visa":
		return "Visa"
	case "mastercard":
		return "Mastercard"
	case "amex", "american_express":
		return "American Express"
	case "discover":
		return "Discover"
	}
	return b
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// refreshCard asks the API to poll the provider for a card checkout's
// current route (POST /checkouts/{id}/card/refresh) before the page shows
// it, so the state the customer sees is the provider's, even before its
// webhook arrives. A refusal leaves c as it was read.
func (h *Handler) refreshCard(r *http.Request, c *checkout) *checkout {
	if c.Card == nil || c.Status != "open" && c.Status != "processing" {
		return c
	}
	if c.Card.Status == "declined" || c.Card.Status == "delivered" {
		return c
	}
	var fresh checkout
	err := h.api.call(r, "POST", "/checkouts/"+url.PathEscape(c.ID)+"/card/refresh", cardRoute{c.Card.Route}, nil, &fresh)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status >= 500 {
			h.log.Warn("card refresh", slog.String("checkout", c.ID), slog.Any("err", err))
		}
		return c
	}
	return &fresh
}

// openCard opens a card checkout from the page's form (rail=card) and
// sends the customer on to its redirect_url, payd's page that opens the
// provider's session; a refusal is shown on the page as a sentence.
func (h *Handler) openCard(w http.ResponseWriter, r *http.Request, t *target) {
	t.CardEmail = strings.TrimSpace(r.PostForm.Get("email"))
	body := openRequest{Rail: "card", Email: t.CardEmail}
	t.forPayment(r, &body)
	if t.CardEmail == "" {
		t.CardError = t.M.T("error.email_required")
		h.render(w, http.StatusBadRequest, t.view, &t.page)
		return
	}
	c, err := h.api.openCheckout(r, body, formKey(r))
	if err != nil {
		h.refuseCard(w, t, err)
		return
	}
	h.toCardPage(w, r, t, c)
}

// retryCard starts the next route of a declined card checkout of this
// page (POST /checkouts/{id}/card/retry) and sends the customer on to it.
func (h *Handler) retryCard(w http.ResponseWriter, r *http.Request, t *target, id string) {
	old, err := h.api.checkout(r, id, t.of)
	if err != nil {
		h.refuse(w, t, err)
		return
	}
	route, _ := strconv.Atoi(r.PostForm.Get("route"))
	var c checkout
	err = h.api.call(r, "POST", "/checkouts/"+url.PathEscape(old.ID)+"/card/retry", cardRoute{route},
		http.Header{"Idempotency-Key": {formKey(r)}}, &c)
	if err != nil {
		h.attach(&t.page, old, t.of.link)
		h.refuse(w, t, err)
		return
	}
	h.toCardPage(w, r, t, &c)
}

// toCardPage answers 303 to the checkout's redirect_url, naming the page
// the customer came from, so that /pay/card can lead back to it; without
// one (the route is not waiting) to the page showing the checkout.
func (h *Handler) toCardPage(w http.ResponseWriter, r *http.Request, t *target, c *checkout) {
	to := t.Path + "?checkout=" + url.QueryEscape(c.ID)
	if c.Card != nil && c.Card.RedirectURL != nil {
		if u, err := url.Parse(*c.Card.RedirectURL); err == nil {
			q := u.Query()
			q.Set("from", t.Path)
			q.Set("via", "form")
			u.RawQuery = q.Encode()
			to = u.String()
		}
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// refuseCard renders the page with the API's refusal of a card checkout
// beside the card form.
func (h *Handler) refuseCard(w http.ResponseWriter, t *target, err error) {
	status, sentence := h.refusal(t, err)
	t.CardError = sentence
	h.render(w, status, t.view, &t.page)
}

// pagePath is a page of ours: /l/{code} or /p/{code}.
var pagePath = regexp.MustCompile(`^/([lp])/([A-Za-z0-9_-]{1,64})$`)

// pageFrom reads the from= of /pay/card: a checkout page of ours, by path
// only (never another origin), which the caller still checks with the API
// to be the checkout's own.
func pageFrom(from string) (pageOf, string, bool) {
	mm := pagePath.FindStringSubmatch(from)
	if mm == nil {
		return pageOf{}, "", false
	}
	return pageOf{link: mm[1] == "l", code: mm[2]}, mm[0], true
}

// goCard serves GET /pay/card/{checkout}?route=N, the redirect_url of a
// card checkout: it opens (or reuses) the route's provider session
// (POST /checkouts/{id}/card/session) and answers 303 to the provider's
// hosted card page. A refusal (the page was out of date, the route is no
// longer waiting, the quote ended, …) is a page saying so, with a link
// back to the checkout's page when the request names it (from=, checked
// with the API to be the checkout's own).
func (h *Handler) goCard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("checkout")
	route, err := strconv.Atoi(r.URL.Query().Get("route"))
	if err != nil || route < 1 {
		route = 0
	}
	var c checkout
	err = h.api.call(r, "POST", "/checkouts/"+url.PathEscape(id)+"/card/session", cardRoute{route}, nil, &c)
	if err == nil && c.Card != nil && c.Card.ProviderURL != nil && httpURL(*c.Card.ProviderURL) {
		if r.URL.Query().Get("via") == "form" {
			// The redirects that follow a form's submission stay under the
			// form page's form-action 'self': a page of ours forwards.
			m := language(r)
			h.render(w, http.StatusOK, "cardgo.html", &page{M: m, Title: m.T("card.go_title"), Forward: *c.Card.ProviderURL})
			return
		}
		http.Redirect(w, r, *c.Card.ProviderURL, http.StatusSeeOther)
		return
	}
	m := language(r)
	p := &page{M: m, Title: m.T("card.go_title")}
	status := http.StatusInternalServerError
	code := ""
	var ae *apiError
	if errors.As(err, &ae) {
		status, code = ae.Status, ae.Code
	}
	if err == nil {
		h.log.Error("card session without provider_url", slog.String("checkout", id))
	} else if status >= 500 && code != "temporarily_unavailable" {
		h.log.Error("card session", slog.String("checkout", id), slog.Any("err", err))
	}
	if code == "not_found" || code == "invalid_request" || code == "" && isNotFound(err) {
		status = http.StatusNotFound
	}
	p.Error = m.errorText(code, "")
	if of, path, ok := pageFrom(r.URL.Query().Get("from")); ok {
		if _, err := h.api.checkout(r, id, of); err == nil {
			p.Back = path + "?checkout=" + url.QueryEscape(id)
		}
	}
	h.render(w, status, "error.html", p)
}

// httpURL reports whether s is an http(s) address, the only kind the
// customer is sent to.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
