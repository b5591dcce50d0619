package api

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"payd"
)

// Customers (spec 2.3, docs/customers-and-links.md).

// customerListName binds cursors to GET /customers.
const customerListName = "customers"

// customerListParams are the query parameters GET /customers takes.
var customerListParams = []string{"q", "email", "blocked", "created_after", "created_before", "limit", "cursor"}

// customer is a customer on the wire.
type customer struct {
	ID        string        `json:"id"`
	Kind      string        `json:"kind"`
	Name      string        `json:"name"`
	Email     string        `json:"email"`
	Blocked   bool          `json:"blocked"`
	Note      string        `json:"note"`
	Stats     customerStats `json:"stats"`
	CreatedAt Time          `json:"created_at"`
	UpdatedAt Time          `json:"updated_at"`
}

// customerStats are a customer's running totals, in US cents.
type customerStats struct {
	PaymentsCount   int64     `json:"payments_count"`
	IncompleteCount int64     `json:"incomplete_count"`
	Volume          usdAmount `json:"volume"`
	Average         usdAmount `json:"average"`
	LastPaymentAt   *Time     `json:"last_payment_at"`
	PreferredRail   *string   `json:"preferred_rail"`
}

// usdAmount is an amount in US cents: {amount, currency: "USD"}.
type usdAmount struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

func usdCents(n int64) usdAmount { return usdAmount{Amount: n, Currency: "USD"} }

// toCustomer renders a customer; payments with include=customer and search
// use it too.
func toCustomer(c *payd.Customer) customer {
	st := c.Stats
	var rail *string
	if r := st.PreferredRail(); r != "" {
		s := string(r)
		rail = &s
	}
	return customer{
		ID: c.ID, Kind: "customer", Name: c.Name, Email: c.Email, Blocked: c.Blocked, Note: c.Note,
		Stats: customerStats{
			PaymentsCount: st.Payments, IncompleteCount: st.Incomplete(),
			Volume: usdCents(st.VolumeUSD), Average: usdCents(st.AverageUSD()),
			LastPaymentAt: timePtr(st.LastPaymentAt), PreferredRail: rail,
		},
		CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt),
	}
}

// createCustomerRequest is the body of POST /customers.
type createCustomerRequest struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Note  string `json:"note"`
}

// updateCustomerRequest is the body of PATCH /customers/{id}; absent
// fields stay as they are.
type updateCustomerRequest struct {
	Name    *string `json:"name"`
	Email   *string `json:"email"`
	Note    *string `json:"note"`
	Blocked *bool   `json:"blocked"`
}

// createCustomer serves POST /customers.
func (s *Server) createCustomer(w http.ResponseWriter, r *http.Request) error {
	var req createCustomerRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := payd.NewCustomer(callOf(r.Context()).biz.ID, req.Name, req.Email, req.Note, s.clock.Now())
	if err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.CreateCustomer(ctx, c); err != nil {
			return nil, err
		}
		return toCustomer(c), s.customerChanged(ctx, q, payd.EventCustomerCreated, c, actorOf(ctx, ""))
	})
}

// getCustomer serves GET /customers/{id}.
func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request) error {
	c, err := s.store.CustomerByID(r.Context(), callOf(r.Context()).biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{toCustomer(c)})
	return nil
}

// updateCustomer serves PATCH /customers/{id}. Blocking or unblocking
// decides who can pay, so on a live business a test key cannot do it
// (spec 5.3); it can still edit the rest.
func (s *Server) updateCustomer(w http.ResponseWriter, r *http.Request) error {
	var req updateCustomerRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	call := callOf(r.Context())
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		c, err := q.CustomerByID(ctx, call.biz.ID, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		if req.Blocked != nil && *req.Blocked != c.Blocked {
			if err := call.biz.RefuseTestKey(call.key); err != nil {
				return nil, err
			}
		}
		u := payd.CustomerUpdate{Name: req.Name, Email: req.Email, Note: req.Note, Blocked: req.Blocked}
		if err := c.Apply(u, s.clock.Now()); err != nil {
			return nil, err
		}
		if err := q.UpdateCustomer(ctx, c); err != nil {
			return nil, err
		}
		return toCustomer(c), s.customerChanged(ctx, q, payd.EventCustomerUpdated, c, actorOf(ctx, ""))
	})
}

// listCustomers serves GET /customers, newest first.
func (s *Server) listCustomers(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	f, err := parseCustomerFilter(v)
	if err != nil {
		return err
	}
	pg, err := parsePage(r.Context(), v, s.cursors, customerListName)
	if err != nil {
		return err
	}
	if f.AfterCreated, f.AfterID, err = createdPosition(pg.After, payd.PrefixCustomer); err != nil {
		return err
	}
	f.Limit = pg.Limit + 1
	cs, err := s.store.ListCustomers(r.Context(), callOf(r.Context()).biz.ID, f)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(cs))}
	if len(cs) > pg.Limit {
		cs = cs[:pg.Limit]
		last := cs[len(cs)-1]
		out.setNext(pg, last.CreatedAt.UnixMicro(), last.ID)
	}
	for _, c := range cs {
		out.Data = append(out.Data, toCustomer(c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseCustomerFilter reads the filters of GET /customers. Unknown,
// repeated and empty parameters are refused, naming the parameter.
func parseCustomerFilter(v url.Values) (payd.CustomerFilter, error) {
	var f payd.CustomerFilter
	if err := refuseUnknownParams(v, customerListParams); err != nil {
		return f, err
	}
	steps := []func() error{
		func() (err error) { f.Query, err = textParam(v, "q", maxQueryLen); return err },
		func() (err error) { f.Email, err = textParam(v, "email", 254); return err },
		func() (err error) { f.Blocked, err = boolParam(v, "blocked"); return err },
		func() (err error) { f.CreatedAfter, err = timeParam(v, "created_after"); return err },
		func() (err error) { f.CreatedBefore, err = timeParam(v, "created_before"); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return payd.CustomerFilter{}, err
		}
	}
	return f, nil
}

// refuseUnknownParams refuses a query parameter not in known, in name
// order so that the same request always gets the same error: a misspelt
// filter must not silently list everything.
func refuseUnknownParams(v url.Values, known []string) error {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case name == "":
			// A bare "=x" or "&&" has no name to point at.
			return payd.FieldError("query", "the query string has a parameter without a name")
		case !slices.Contains(known, name):
			return payd.FieldError(name, "unknown query parameter %q", name)
		}
	}
	return nil
}

// boolParam reads a parameter that is exactly true or false.
func boolParam(v url.Values, name string) (*bool, error) {
	s, err := optText(v, name, maxFilterLen)
	if s == nil || err != nil {
		return nil, err
	}
	switch *s {
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	}
	return nil, payd.FieldError(name, "%s must be true or false", name)
}

// objectList is the list envelope (spec 2.1) of customers and links.
type objectList struct {
	Data       []any   `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// setNext marks the list as having more after the item at (created, id).
func (l *objectList) setNext(pg page, createdMicros int64, id string) {
	next := pg.nextCursor([]string{strconv.FormatInt(createdMicros, 10), id})
	l.HasMore, l.NextCursor = true, &next
}

// createdPosition reads back a newest-first cursor position: created_at
// in Unix microseconds and an id with prefix. A signed cursor that does not
// fit is still only the cursor's fault.
func createdPosition(after []string, prefix string) (created time.Time, id string, err error) {
	if after == nil {
		return time.Time{}, "", nil
	}
	bad := cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	if len(after) != 2 || !payd.HasPrefix(after[1], prefix) {
		return time.Time{}, "", bad
	}
	n, err := strconv.ParseInt(after[0], 10, 64)
	if err != nil {
		return time.Time{}, "", bad
	}
	return time.UnixMicro(n).UTC(), after[1], nil
}
