package web

import (
	"errors"
	"net/http"
	"strings"
)

// checkoutStatus serves GET /l/{code}/status and /p/{code}/status: the live
// part of the page for ?checkout=, which the page's script polls and swaps
// in when it changed. It reads the checkout, scoped to the link or payment
// of the path (404 for another's), so a poll costs two small reads.
func (h *Handler) checkoutStatus(w http.ResponseWriter, r *http.Request) {
	of := pageOf{link: strings.HasPrefix(r.URL.Path, "/l/"), code: r.PathValue("code")}
	c, err := h.api.checkout(r, r.URL.Query().Get("checkout"), of)
	if err != nil {
		status := http.StatusInternalServerError
		var ae *apiError
		if isNotFound(err) || errors.As(err, &ae) && ae.Status == http.StatusBadRequest { // a code no page has
			status = http.StatusNotFound
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	c = h.refreshCard(r, c)
	m := language(r)
	p := &page{M: m, Path: strings.TrimSuffix(r.URL.Path, "/status"), Accepting: true, IdemKey: newIdemKey()}
	if !of.link && c.PaymentID != nil {
		p.PaymentID = *c.PaymentID
	}
	h.attach(p, c, of.link)
	if p.Checkout == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.write(w, http.StatusOK, "link.html", "live", p)
}
