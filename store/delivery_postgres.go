package store

import (
	"context"
	"time"

	"payd"
)

// PostgreSQL takes a batch of deliveries as one array per column and
// unnests them in the statement: one statement, one round trip and (outside
// a transaction) one commit for any number of rows, with one statement
// text, so pgx prepares it once. The VALUES lists SQLite uses cost a
// statement per chunk of 100, 10 or 1 rows: up to 13 for a batch of 256,
// each its own commit when a batch of results is saved.

// pgCreateDeliveries is CreateDeliveries on PostgreSQL.
func (q *queries) pgCreateDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) error {
	var c deliveryArrays
	for _, d := range ds {
		if err := c.add(d); err != nil {
			return err
		}
	}
	_, err := q.ex.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::integer[], $13::text[], $14::text[], $15::text[],
			$16::boolean[], $17::bigint[], $18::bigint[])`,
		c.id, c.business, c.webhook, c.event, c.eventType, c.subjectKind, c.subjectID, c.status, c.attempts, c.next,
		c.lease, c.version, c.payload, c.headers, c.error, c.test, c.created, c.updated)
	return err
}

// pgSaveDeliveries is SaveDeliveries on PostgreSQL: each row fenced by
// its own version.
func (q *queries) pgSaveDeliveries(ctx context.Context, ds []*payd.WebhookDelivery) ([]string, error) {
	var c deliveryArrays
	for _, d := range ds {
		if err := c.add(d); err != nil {
			return nil, err
		}
	}
	saved, err := queryAll(ctx, q.ex, scanID, `UPDATE webhook_deliveries AS d SET status = v.status, attempts = v.attempts,
			next_attempt_at = v.next_attempt_at, lease_until = v.lease_until, version = d.version + 1,
			request_headers = v.request_headers, error = v.error, updated_at = v.updated_at
		FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[],
			$8::text[], $9::bigint[]) AS v (id, version, status, attempts, next_attempt_at, lease_until,
			request_headers, error, updated_at)
		WHERE d.id = v.id AND d.version = v.version
		RETURNING d.id`, c.id, c.version, c.status, c.attempts, c.next, c.lease, c.headers, c.error, c.updated)
	if err != nil {
		return nil, err
	}
	return settle(ds, saved), nil
}

// scanID reads a row of one id.
func scanID(row rowScanner) (string, error) {
	var id string
	err := row.Scan(&id)
	return id, err
}

// deliveryArrays are the columns of deliveries, one array each, in the
// order deliveryArgs gives them.
type deliveryArrays struct {
	id, business, webhook, event, eventType, subjectKind, subjectID, status, attempts []string
	next, lease                                                                       []*int64
	version                                                                           []int64
	payload                                                                           []string
	headers                                                                           []*string
	error                                                                             []string
	test                                                                              []bool
	created, updated                                                                  []int64
}

// add appends d's columns.
func (c *deliveryArrays) add(d *payd.WebhookDelivery) error {
	attempts, headers, err := encodeDeliveryJSON(d)
	if err != nil {
		return err
	}
	var h *string
	if s, ok := headers.(string); ok {
		h = &s
	}
	c.id, c.business, c.webhook = append(c.id, d.ID), append(c.business, d.BusinessID), append(c.webhook, d.WebhookID)
	c.event, c.eventType = append(c.event, d.EventID), append(c.eventType, d.EventType)
	c.subjectKind, c.subjectID = append(c.subjectKind, d.SubjectKind), append(c.subjectID, d.SubjectID)
	c.status, c.attempts = append(c.status, string(d.Status)), append(c.attempts, attempts)
	c.next, c.lease = append(c.next, ptrMicros(d.NextAttemptAt)), append(c.lease, ptrMicros(d.LeaseUntil))
	c.version, c.payload = append(c.version, int64(d.Version)), append(c.payload, string(d.Payload))
	c.headers, c.error, c.test = append(c.headers, h), append(c.error, d.Error), append(c.test, d.Test)
	c.created, c.updated = append(c.created, micros(d.CreatedAt)), append(c.updated, micros(d.UpdatedAt))
	return nil
}

// ptrMicros is nullMicros for an array element.
func ptrMicros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := micros(*t)
	return &v
}
