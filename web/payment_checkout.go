package web

import "net/http"

// openPaymentCheckout serves POST /p/{code}: the customer chose a coin on
// a payment's page; the payment's open checkout, if any, is replaced.
func (h *Handler) openPaymentCheckout(w http.ResponseWriter, r *http.Request) {
	t, err := h.loadPayment(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.open(w, r, t)
}
