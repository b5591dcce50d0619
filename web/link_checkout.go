package web

import "net/http"

// openLinkCheckout serves POST /l/{code}: the customer chose a coin on a
// link's page. It opens a checkout of a new payment of the link, or
// replaces the open checkout of the payment the form names.
func (h *Handler) openLinkCheckout(w http.ResponseWriter, r *http.Request) {
	t, err := h.loadLink(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.open(w, r, t)
}
