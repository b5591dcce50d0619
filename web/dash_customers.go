package web

import (
	"net/http"
	"net/url"
	"strings"
)

// The customers pages (/dashboard/{biz}/customers): the list with a
// search, one customer's stats, their details and note, and blocking.

// dashCustomer is a customer as GET /customers answers it.
type dashCustomer struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
	Blocked   bool   `json:"blocked"`
	Note      string `json:"note"`
	CreatedAt string `json:"created_at"`
	Stats     struct {
		PaymentsCount   int64        `json:"payments_count"`
		IncompleteCount int64        `json:"incomplete_count"`
		Volume          catalogMoney `json:"volume"`
		Average         catalogMoney `json:"average"`
		LastPaymentAt   *string      `json:"last_payment_at"`
		PreferredRail   *string      `json:"preferred_rail"`
	} `json:"stats"`
}

// Created is when the customer was added, in UTC.
func (c dashCustomer) Created() string { return utcText(c.CreatedAt) }

// LastPayment is when they last paid, or "".
func (c dashCustomer) LastPayment() string {
	if c.Stats.LastPaymentAt == nil {
		return ""
	}
	return utcText(*c.Stats.LastPaymentAt)
}

// Rail is the rail they pay with most, in words.
func (c dashCustomer) Rail() string {
	if c.Stats.PreferredRail == nil {
		return ""
	}
	switch *c.Stats.PreferredRail {
	case "crypto":
		return "Crypto"
	case "card":
		return "Card"
	}
	return *c.Stats.PreferredRail
}

// customersPage is the list of customers.
type customersPage struct {
	Q, Blocked string
	Customers  []dashCustomer
	Next       string
}

// showCustomers serves GET /dashboard/{biz}/customers: newest first, with
// a search by name or email and a filter on blocked.
func (h *Handler) showCustomers(d *dashReq) {
	qs := d.r.URL.Query()
	p := customersPage{Q: strings.TrimSpace(qs.Get("q")), Blocked: qs.Get("blocked")}
	v := url.Values{"limit": {"25"}}
	if p.Q != "" {
		v.Set("q", p.Q)
	}
	if p.Blocked == "true" || p.Blocked == "false" {
		v.Set("blocked", p.Blocked)
	} else {
		p.Blocked = ""
	}
	if c := qs.Get("cursor"); c != "" {
		v.Set("cursor", c)
	}
	var list dashList[dashCustomer]
	if err := d.call("GET", "/customers?"+v.Encode(), nil, whole{&list}); err != nil {
		d.fail(err)
		return
	}
	p.Customers = list.Data
	if next := list.next(); next != "" {
		v.Del("limit")
		v.Set("cursor", next)
		p.Next = d.bizPath("/customers?" + v.Encode())
	}
	d.page.Title, d.page.Section, d.page.Data = "Customers", "customers", p
	d.render(http.StatusOK, "dash/customers.html")
}

// customerPage is one customer.
type customerPage struct {
	Customer dashCustomer
	// Name, Email and Note are the form's values.
	Name, Email, Note string
}

// loadCustomer reads the customer of the path's {id}.
func (d *dashReq) loadCustomer() (*customerPage, bool) {
	var c dashCustomer
	if err := d.call("GET", "/customers/"+url.PathEscape(d.r.PathValue("id")), nil, &c); err != nil {
		d.fail(err)
		return nil, false
	}
	p := &customerPage{Customer: c, Name: c.Name, Email: c.Email, Note: c.Note}
	title := c.Name
	if title == "" {
		title = c.Email
	}
	if title == "" {
		title = "Customer " + c.ID
	}
	d.page.Title, d.page.Section, d.page.Data = title, "customers", p
	return p, true
}

// showCustomer serves GET /dashboard/{biz}/customers/{id}.
func (h *Handler) showCustomer(d *dashReq) {
	if _, ok := d.loadCustomer(); ok {
		d.render(http.StatusOK, "dash/customer.html")
	}
}

// saveCustomer serves POST /dashboard/{biz}/customers/{id}: PATCH
// /customers/{id} with the name, email and note.
func (h *Handler) saveCustomer(d *dashReq) {
	p, ok := d.loadCustomer()
	if !ok {
		return
	}
	p.Name, p.Email, p.Note = strings.TrimSpace(d.form.Get("name")), strings.TrimSpace(d.form.Get("email")), catalogLines(d.form.Get("note"))
	body := map[string]any{"name": p.Name, "email": p.Email, "note": p.Note}
	if err := d.call("PATCH", "/customers/"+url.PathEscape(p.Customer.ID), body, nil); err != nil {
		if d.refuse(err) {
			d.render(d.status(err), "dash/customer.html")
		}
		return
	}
	d.redirect(d.bizPath("/customers/"+p.Customer.ID), "customer_saved")
}

// blockCustomer serves POST /dashboard/{biz}/customers/{id}/block and
// /unblock.
func (h *Handler) blockCustomer(block bool) dashHandler {
	return func(d *dashReq) {
		p, ok := d.loadCustomer()
		if !ok {
			return
		}
		if err := d.call("PATCH", "/customers/"+url.PathEscape(p.Customer.ID), map[string]any{"blocked": block}, nil); err != nil {
			if d.refuse(err) {
				d.render(d.status(err), "dash/customer.html")
			}
			return
		}
		done := "customer_unblocked"
		if block {
			done = "customer_blocked"
		}
		d.redirect(d.bizPath("/customers/"+p.Customer.ID), done)
	}
}

// catalogLines undoes the CRLF line breaks browsers send a textarea with.
func catalogLines(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
