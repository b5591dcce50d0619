package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// target is what a page sells, a link or a payment, with what the shared
// show and open steps need to know of it.
type target struct {
	page
	view string // template: link.html or payment.html
	// currentCheckout is the checkout the page shows without ?checkout=.
	currentCheckout string
	// of names the page to the API, which answers only its checkouts.
	of pageOf
}

// basePage fills what the link and payment pages share from the offer.
func basePage(m messages, path, item, detail string, amount int64, currency string, o offer) page {
	p := page{M: m, Path: path, Business: o.Business, Item: item, Detail: detail,
		Price: priceText(amount, currency), Collect: o.CollectEmail, Options: options(m, o, ""),
		IdemKey: newIdemKey(), CardKey: newIdemKey(), Card: cardChoiceOf(m, o)}
	p.Accepting = o.AcceptingPayments && (len(o.Crypto) > 0 || p.Card != nil)
	p.Title = m.T("page.title", o.Business.Name)
	if item == "" { // a payment without description: name whom it pays
		p.Item, p.Untitled = m.T("page.untitled", o.Business.Name), true
	}
	if len(o.Crypto) > 0 {
		if b := o.Crypto[0].Breakdown; b.ProcessingFee != nil {
			p.Fee = priceText(*b.ProcessingFee, b.Currency)
		}
	}
	return p
}

// show renders a page with the checkout named in the URL, or the page's
// current one; a checkout of another link or payment is not shown. A
// replaced checkout sends the customer on to its replacement.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, t *target) {
	id := r.URL.Query().Get("checkout")
	if id == "" && !r.URL.Query().Has("new") { // ?new: start over, after a checkout ended unpaid
		id = t.currentCheckout
	}
	if id != "" {
		c, err := h.api.checkout(r, id, t.of)
		if err == nil {
			c = h.refreshCard(r, c)
		}
		switch {
		case err == nil && c.ReplacedBy != nil:
			http.Redirect(w, r, t.Path+"?checkout="+url.QueryEscape(*c.ReplacedBy), http.StatusSeeOther)
			return
		case err == nil:
			h.attach(&t.page, c, t.of.link)
		case err != nil && !isNotFound(err):
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, http.StatusOK, t.view, &t.page)
}

// attach puts a checkout on the page and sets what a new quote or another
// coin sends.
func (h *Handler) attach(p *page, c *checkout, isLink bool) {
	p.Checkout = viewCheckout(p.M, c, h.clock.Now())
	if p.Checkout == nil {
		return
	}
	p.Options = markChosen(p.Options, p.Checkout.Option)
	// A link's payment lives as long as its open checkout: another coin
	// replaces the checkout of the same payment, while a new quote after
	// the end opens a new payment of the link.
	if isLink && c.PaymentID != nil && (p.Checkout.State == "open" || p.Checkout.State == "card_declined") {
		p.PaymentID = *c.PaymentID
	}
}

func markChosen(opts []option, chosen string) []option {
	for i := range opts {
		opts[i].Checked = opts[i].Value == chosen
	}
	return opts
}

// open opens a checkout from the page's form and sends the customer to the
// page showing it; a refusal is shown on the page as a sentence.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, t *target) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.render(w, http.StatusBadRequest, t.view, &t.page)
		return
	}
	if id := r.PostForm.Get("remainder"); id != "" {
		h.openRemainder(w, r, t, id)
		return
	}
	if id := r.PostForm.Get("retry"); id != "" {
		h.retryCard(w, r, t, id)
		return
	}
	if r.PostForm.Get("rail") == "card" {
		h.openCard(w, r, t)
		return
	}
	choice := r.PostForm.Get("option")
	asset, network, ok := strings.Cut(choice, "/")
	t.Email = strings.TrimSpace(r.PostForm.Get("email"))
	t.Options = markChosen(t.Options, choice)
	if !ok || asset == "" || network == "" {
		t.Error = t.M.T("error.choose_coin")
		h.render(w, http.StatusBadRequest, t.view, &t.page)
		return
	}
	body := openRequest{Rail: "crypto", Asset: asset, Network: network, Email: t.Email}
	t.forPayment(r, &body)
	c, err := h.api.openCheckout(r, body, formKey(r))
	if err != nil {
		h.refuse(w, t, err)
		return
	}
	http.Redirect(w, r, t.Path+"?checkout="+url.QueryEscape(c.ID), http.StatusSeeOther)
}

// forPayment names in body what the checkout is for: the page's payment
// (a payment's page, or a link's open checkout the form replaces), or a
// new payment of the link.
func (t *target) forPayment(r *http.Request, body *openRequest) {
	switch {
	case t.PaymentID != "":
		body.PaymentID = t.PaymentID
	case r.PostForm.Get("payment_id") != "":
		body.PaymentID = r.PostForm.Get("payment_id")
	default:
		body.LinkCode = t.of.code
	}
}

// openRemainder opens, from the page's form, a new quote for what an
// underpaid payment still lacks once the quote of checkout id has ended,
// and sends the customer to it. The checkout must be one of this page's;
// a refusal is shown beside it as a sentence.
func (h *Handler) openRemainder(w http.ResponseWriter, r *http.Request, t *target, id string) {
	old, err := h.api.checkout(r, id, t.of)
	if err != nil {
		h.refuse(w, t, err)
		return
	}
	c, err := h.api.openRemainder(r, old.ID, formKey(r))
	if err != nil {
		h.attach(&t.page, old, t.of.link)
		h.refuse(w, t, err)
		return
	}
	http.Redirect(w, r, t.Path+"?checkout="+url.QueryEscape(c.ID), http.StatusSeeOther)
}

// formKey is the idempotency key the form carries, or a fresh one when it
// carries none that fits.
func formKey(r *http.Request) string {
	key := r.PostForm.Get("idempotency_key")
	if len(key) < 8 || len(key) > 64 {
		key = newIdemKey()
	}
	return key
}

// refuse renders the page with the API's refusal as a sentence, under the
// API's status; a server error is logged.
func (h *Handler) refuse(w http.ResponseWriter, t *target, err error) {
	status, sentence := h.refusal(t, err)
	t.Error = sentence
	h.render(w, status, t.view, &t.page)
}

// refusal is the API's status and sentence for a refusal of the page's
// form; a server error is logged.
func (h *Handler) refusal(t *target, err error) (int, string) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status >= 500 && ae.Code != "temporarily_unavailable" {
		h.log.Error("open checkout", slog.String("path", t.Path), slog.Any("err", err))
	}
	status := http.StatusInternalServerError
	code, field := "", ""
	if ae != nil {
		status, code, field = ae.Status, ae.Code, ae.Field
	}
	return status, t.M.errorText(code, field)
}

// fail renders an error of the API that leaves nothing to show: not found
// is the 404 page, anything else a sentence with the API's status.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	m := language(r)
	if isNotFound(err) {
		h.render(w, http.StatusNotFound, "notfound.html", &page{M: m, Title: m.T("notfound.title")})
		return
	}
	status := http.StatusInternalServerError
	code := ""
	var ae *apiError
	if errors.As(err, &ae) {
		status, code = ae.Status, ae.Code
	}
	if status >= 500 {
		h.log.Error("page", slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	h.render(w, status, "error.html", &page{M: m, Title: m.T("error.title"), Error: m.errorText(code, "")})
}

// isNotFound reports an API answer that the thing asked for does not
// exist (or, for a link, is archived: spec 4.5 hides those as not found).
func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
