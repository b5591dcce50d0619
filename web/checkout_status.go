package web

import (
	"net/http"
	"strings"
)

// checkoutStatus serves GET /l/{code}/status and /p/{code}/status: the live
// part of the page for ?checkout=, which the page's script polls and swaps
// in when it changed. It reads only the checkout (public by its id), so a
// poll costs one small read.
func (h *Handler) checkoutStatus(w http.ResponseWriter, r *http.Request) {
	c, err := h.api.checkout(r, r.URL.Query().Get("checkout"))
	if err != nil {
		status := http.StatusInternalServerError
		if isNotFound(err) {
			status = http.StatusNotFound
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	m := language(r)
	p := &page{M: m, Path: strings.TrimSuffix(r.URL.Path, "/status"), Accepting: true, IdemKey: newIdemKey()}
	isLink := strings.HasPrefix(p.Path, "/l/")
	if !isLink && c.PaymentID != nil {
		p.PaymentID = *c.PaymentID
	}
	h.attach(p, c, isLink)
	if p.Checkout == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.write(w, http.StatusOK, "link.html", "live", p)
}
