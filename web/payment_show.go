package web

import "net/http"

// showPayment serves GET /p/{code}: the page of a payment made with the
// API, with its current checkout when ?checkout= names none.
func (h *Handler) showPayment(w http.ResponseWriter, r *http.Request) {
	t, err := h.loadPayment(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.show(w, r, t)
}

// loadPayment reads the payment's public view and says in a sentence why
// it can no longer be paid, when it cannot.
func (h *Handler) loadPayment(r *http.Request) (*target, error) {
	p, err := h.api.publicPayment(r, r.PathValue("code"))
	if err != nil {
		return nil, err
	}
	m := language(r)
	t := &target{page: basePage(m, "/p/"+p.Code, p.Description, "", p.Amount, p.Currency, p.offer),
		view: "payment.html", of: pageOf{code: p.Code}}
	t.PaymentID = p.ID
	if p.CheckoutID != nil {
		t.currentCheckout = *p.CheckoutID
	}
	switch p.Status {
	case "pending":
		if !t.Accepting {
			t.Notice = m.T("choose.none")
		}
	case "succeeded":
		t.Notice = m.T("payment.succeeded")
	case "expired":
		t.Notice = m.T("payment.expired")
	case "failed":
		t.Notice = m.T("payment.failed")
		if p.CanceledAt != nil {
			t.Notice = m.T("payment.canceled")
		}
	default: // underpaid, needs_review: funds arrived
		t.Notice = m.T("payment.funds_received")
	}
	if t.Notice != "" {
		t.Accepting = false
	}
	return t, nil
}
