package api

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"payd"
	"payd/clock"
)

// The server is the payd.EventRecorder of every change: it owns the wire
// shapes an event's data carries.
var _ payd.EventRecorder = (*Server)(nil)

// PaymentEvents returns, unstored, the events of a change from old to p
// (old nil for a new payment), with p as GET /payments/{id} shows it;
// payd.SavePayment stores them.
func (s *Server) PaymentEvents(old, p *payd.Payment, actor payd.Actor) ([]*payd.Event, error) {
	return s.newEvents(p.BusinessID, "payment", p.ID, payd.PaymentEventTypes(old, p), s.toPayment(p), actor)
}

// CheckoutChanged records the event of a checkout that was in status old
// ("" for a new one) and is now c, in q's transaction.
func (s *Server) CheckoutChanged(ctx context.Context, q payd.Queries, old payd.CheckoutStatus, c *payd.Checkout, actor payd.Actor) error {
	events, err := s.CheckoutEvents(old, c, actor)
	if err != nil {
		return err
	}
	return appendEvents(ctx, q, events)
}

// CheckoutEvents returns, unstored, the events CheckoutChanged records.
func (s *Server) CheckoutEvents(old payd.CheckoutStatus, c *payd.Checkout, actor payd.Actor) ([]*payd.Event, error) {
	t := payd.CheckoutEventType(old, c)
	if t == "" {
		return nil, nil
	}
	return s.newEvents(c.BusinessID, "checkout", c.ID, []string{t}, s.toCheckout(c), actor)
}

// customerChanged records customer.created or customer.updated.
func (s *Server) customerChanged(ctx context.Context, q payd.Queries, typ string, c *payd.Customer, actor payd.Actor) error {
	return s.record(ctx, q, c.BusinessID, "customer", c.ID, []string{typ}, toCustomer(c), actor)
}

// linkChanged records one link event.
func (s *Server) linkChanged(ctx context.Context, q payd.Queries, typ string, l *payd.Link, actor payd.Actor) error {
	return s.record(ctx, q, l.BusinessID, "link", l.ID, []string{typ}, s.toLink(l), actor)
}

// record stores one event per type about a subject (see newEvents).
func (s *Server) record(ctx context.Context, q payd.Queries, bizID, kind, id string, types []string, subject any, actor payd.Actor) error {
	events, err := s.newEvents(bizID, kind, id, types, subject, actor)
	if err != nil {
		return err
	}
	return appendEvents(ctx, q, events)
}

// newEvents makes one event per type about a subject, rendered once.
// Events of one change are a microsecond apart so that their order is kept.
func (s *Server) newEvents(bizID, kind, id string, types []string, subject any, actor payd.Actor) ([]*payd.Event, error) {
	if len(types) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(subject)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	events := make([]*payd.Event, len(types))
	for i, t := range types {
		events[i] = &payd.Event{ID: payd.NewID(payd.PrefixEvent), BusinessID: bizID, Type: t, SubjectKind: kind,
			SubjectID: id, Data: data, Actor: actor, CreatedAt: now.Add(time.Duration(i) * time.Microsecond)}
	}
	return events, nil
}

// appendEvents stores the events of several changes of one transaction in
// one statement: a statement is a good part of an insert's cost on
// SQLite's single writer.
func appendEvents(ctx context.Context, q payd.Queries, groups ...[]*payd.Event) error {
	events := slices.Concat(groups...)
	if len(events) == 0 {
		return nil
	}
	return q.AppendEvents(ctx, events)
}

// actorOf is who makes a request: the signed-in person, the API key that
// signed it, or on the public checkout routes the customer, named by the
// email they gave.
func actorOf(ctx context.Context, email string) payd.Actor {
	c := callOf(ctx)
	if c != nil && c.user != nil {
		return payd.Actor{Kind: payd.ActorUser, ID: c.user.ID, Name: c.user.Email}
	}
	if c != nil && c.key != nil {
		return payd.Actor{Kind: payd.ActorAPIKey, ID: c.key.ID, Name: c.key.Name}
	}
	return payd.Actor{Kind: payd.ActorCustomer, Name: email}
}

// Announcer records the events of changes made outside any request, by the
// operator's commands (payd link disable), with their subjects rendered as
// the API shows them.
type Announcer struct{ s *Server }

// NewAnnouncer returns an Announcer rendering urls under publicURL, the
// public URL the servers use, and stamping events with clk. Its Server
// holds only those two, all that rendering a subject and its events reads;
// it serves no request.
func NewAnnouncer(publicURL string, clk clock.Clock) *Announcer {
	return &Announcer{s: &Server{clock: clk, opts: Options{PublicURL: strings.TrimRight(publicURL, "/")}}}
}

// LinkDisabled records link.disabled of l, by the system, in q's
// transaction.
func (a *Announcer) LinkDisabled(ctx context.Context, q payd.Queries, l *payd.Link) error {
	return a.s.linkChanged(ctx, q, payd.EventLinkDisabled, l, payd.SystemActor)
}
