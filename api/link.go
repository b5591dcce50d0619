package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"payd"
	"payd/money"
)

// Payment links (spec 2.4, docs/customers-and-links.md).

// linkListName binds cursors to GET /links.
const linkListName = "links"

// linkListParams are the query parameters GET /links takes.
var linkListParams = []string{"q", "status", "currency", "created_after", "created_before", "limit", "cursor"}

// link is a payment link on the wire.
type link struct {
	ID            string    `json:"id"`
	Kind          string    `json:"kind"`
	Code          string    `json:"code"`
	URL           string    `json:"url"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Amount        int64     `json:"amount"`
	Currency      string    `json:"currency"`
	SuccessURL    *string   `json:"success_url"`
	Status        string    `json:"status"`
	ArchivedAt    *Time     `json:"archived_at"`
	DisabledAt    *Time     `json:"disabled_at"`
	PaymentsCount int64     `json:"payments_count"`
	Volume        usdAmount `json:"volume"`
	CreatedAt     Time      `json:"created_at"`
	UpdatedAt     Time      `json:"updated_at"`
}

// toLink renders a link; search uses it too.
func (s *Server) toLink(l *payd.Link) link {
	var success *string
	if l.SuccessURL != "" {
		u := l.SuccessURL
		success = &u
	}
	return link{
		ID: l.ID, Kind: "link", Code: l.Code, URL: s.linkURL(l.Code), Name: l.Name, Description: l.Description,
		Amount: l.Amount, Currency: string(l.Currency), SuccessURL: success, Status: string(l.Status),
		ArchivedAt: timePtr(l.ArchivedAt), DisabledAt: timePtr(l.DisabledAt),
		PaymentsCount: l.Stats.Payments, Volume: usdCents(l.Stats.VolumeUSD),
		CreatedAt: Time(l.CreatedAt), UpdatedAt: Time(l.UpdatedAt),
	}
}

// deletedObject answers a DELETE, as Stripe does: the id and that it is gone.
type deletedObject struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Deleted bool   `json:"deleted"`
}

// createLinkRequest is the body of POST /links.
type createLinkRequest struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Amount      *int64  `json:"amount"`
	Currency    string  `json:"currency"`
	SuccessURL  *string `json:"success_url"`
}

// updateLinkRequest is the body of PATCH /links/{id}; absent fields stay
// as they are, and success_url null (or "") removes it.
type updateLinkRequest struct {
	Name        *string        `json:"name"`
	Description *string        `json:"description"`
	Amount      *int64         `json:"amount"`
	Currency    *string        `json:"currency"`
	SuccessURL  optionalString `json:"success_url"`
}

// optionalString is a member that may be absent, null or a string; a
// *string cannot tell absent from null.
type optionalString struct {
	set   bool
	value string // "" for null
}

// UnmarshalJSON takes a string or null.
func (o *optionalString) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		o.value = ""
		return nil
	}
	if err := json.Unmarshal(b, &o.value); err != nil {
		return &payd.Error{Code: payd.ErrInvalidRequest, Message: "the value must be a string or null"}
	}
	return nil
}

// ptr returns the member as a LinkUpdate field: nil when absent.
func (o optionalString) ptr() *string {
	if !o.set {
		return nil
	}
	return &o.value
}

// parseCurrency reads a currency member; nil stays nil.
func parseCurrency(s *string) (*money.Currency, error) {
	if s == nil {
		return nil, nil
	}
	c, ok := money.ParseCurrency(*s)
	if !ok {
		return nil, payd.FieldError("currency", "currency %q is not one of USD, EUR, GBP, CAD, AUD", *s)
	}
	return &c, nil
}

// linkRules are the rules a link's fields are checked under; rates are
// read only when a price is set or changes, and are required (ratesFor)
// unless its currency, c, converts at a fixed rate. A change of amount
// alone (c nil) needs them: the link's currency is not known before the
// link is read.
func (s *Server) linkRules(ctx context.Context, priced bool, c *money.Currency) (payd.LinkRules, error) {
	rules := payd.LinkRules{AllowHTTP: s.opts.Dev}
	if !priced {
		return rules, nil
	}
	var cur money.Currency // "" needs rates
	if c != nil {
		cur = *c
	}
	x, err := s.ratesFor(ctx, cur, "")
	rules.Rates = x
	return rules, err
}

// createLink serves POST /links.
func (s *Server) createLink(w http.ResponseWriter, r *http.Request) error {
	var req createLinkRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	u := payd.LinkUpdate{Name: &req.Name, Description: &req.Description, Amount: req.Amount, SuccessURL: req.SuccessURL}
	var err error
	if req.Currency != "" {
		if u.Currency, err = parseCurrency(&req.Currency); err != nil {
			return err
		}
	}
	rules, err := s.linkRules(r.Context(), u.Currency != nil, u.Currency)
	if err != nil {
		return err
	}
	l, err := payd.NewLink(callOf(r.Context()).biz.ID, u, rules, s.clock.Now())
	if err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.CreateLink(ctx, l); err != nil {
			return nil, err
		}
		return s.toLink(l), s.linkChanged(ctx, q, payd.EventLinkCreated, l, actorOf(ctx, ""))
	})
}

// getLink serves GET /links/{id}.
func (s *Server) getLink(w http.ResponseWriter, r *http.Request) error {
	l, err := s.store.LinkByID(r.Context(), callOf(r.Context()).biz.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{s.toLink(l)})
	return nil
}

// updateLink serves PATCH /links/{id}.
func (s *Server) updateLink(w http.ResponseWriter, r *http.Request) error {
	var req updateLinkRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	cur, err := parseCurrency(req.Currency)
	if err != nil {
		return err
	}
	u := payd.LinkUpdate{Name: req.Name, Description: req.Description, Amount: req.Amount, Currency: cur,
		SuccessURL: req.SuccessURL.ptr()}
	rules, err := s.linkRules(r.Context(), u.Amount != nil || u.Currency != nil, u.Currency)
	if err != nil {
		return err
	}
	return s.changeLink(w, r, payd.EventLinkUpdated, func(l *payd.Link) error { return l.Update(u, rules, s.clock.Now()) })
}

// archiveLink serves POST /links/{id}/archive.
func (s *Server) archiveLink(w http.ResponseWriter, r *http.Request) error {
	return s.changeLink(w, r, payd.EventLinkArchived, func(l *payd.Link) error { return l.Archive(s.clock.Now()) })
}

// restoreLink serves POST /links/{id}/restore.
func (s *Server) restoreLink(w http.ResponseWriter, r *http.Request) error {
	return s.changeLink(w, r, payd.EventLinkRestored, func(l *payd.Link) error { return l.Restore(s.clock.Now()) })
}

// changeLink reads the link, applies change and stores the result with
// its event of type typ in one transaction, answering the link.
func (s *Server) changeLink(w http.ResponseWriter, r *http.Request, typ string, change func(*payd.Link) error) error {
	biz := callOf(r.Context()).biz
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		l, err := q.LinkByID(ctx, biz.ID, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		if err := change(l); err != nil {
			return nil, err
		}
		if err := q.UpdateLink(ctx, l); err != nil {
			return nil, err
		}
		return s.toLink(l), s.linkChanged(ctx, q, typ, l, actorOf(ctx, ""))
	})
}

// deleteLink serves DELETE /links/{id}: only a link nobody has paid
// through can go (link_has_payments otherwise); a second DELETE is 404.
func (s *Server) deleteLink(w http.ResponseWriter, r *http.Request) error {
	biz := callOf(r.Context()).biz
	return s.writeTx(w, r, http.StatusOK, func(ctx context.Context, q payd.Queries) (any, error) {
		l, err := q.LinkByID(ctx, biz.ID, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		if err := l.CheckDelete(); err != nil {
			return nil, err
		}
		if err := q.DeleteLink(ctx, biz.ID, l.ID); err != nil {
			return nil, err
		}
		if err := s.linkChanged(ctx, q, payd.EventLinkDeleted, l, actorOf(ctx, "")); err != nil {
			return nil, err
		}
		return deletedObject{ID: l.ID, Kind: "link", Deleted: true}, nil
	})
}

// listLinks serves GET /links, newest first.
func (s *Server) listLinks(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	f, err := parseLinkFilter(v)
	if err != nil {
		return err
	}
	pg, err := parsePage(r.Context(), v, s.cursors, linkListName)
	if err != nil {
		return err
	}
	if f.AfterCreated, f.AfterID, err = createdPosition(pg.After, payd.PrefixLink); err != nil {
		return err
	}
	f.Limit = pg.Limit + 1
	ls, err := s.store.ListLinks(r.Context(), callOf(r.Context()).biz.ID, f)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(ls))}
	if len(ls) > pg.Limit {
		ls = ls[:pg.Limit]
		last := ls[len(ls)-1]
		out.setNext(pg, last.CreatedAt.UnixMicro(), last.ID)
	}
	for _, l := range ls {
		out.Data = append(out.Data, s.toLink(l))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseLinkFilter reads the filters of GET /links.
func parseLinkFilter(v url.Values) (payd.LinkFilter, error) {
	var f payd.LinkFilter
	if err := refuseUnknownParams(v, linkListParams); err != nil {
		return f, err
	}
	var status *payd.LinkStatus
	var cur *money.Currency
	steps := []func() error{
		func() (err error) { f.Query, err = textParam(v, "q", maxQueryLen); return err },
		func() (err error) {
			status, err = enumParam(v, "status", []payd.LinkStatus{payd.LinkActive, payd.LinkArchived, payd.LinkDisabled})
			return err
		},
		func() (err error) { cur, err = enumParam(v, "currency", money.Currencies); return err },
		func() (err error) { f.CreatedAfter, err = timeParam(v, "created_after"); return err },
		func() (err error) { f.CreatedBefore, err = timeParam(v, "created_before"); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return payd.LinkFilter{}, err
		}
	}
	if status != nil {
		f.Status = *status
	}
	if cur != nil {
		f.Currency = *cur
	}
	return f, nil
}
