package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"payd"
)

// Webhook endpoints (docs/webhooks.md). An endpoint's event types live
// twice, written together by CreateWebhookEndpoint and
// UpdateWebhookEndpoint only: as a JSON array on its row, so every read is
// one row, and as webhook_subscriptions rows, which EndpointsFor finds by
// index. The secrets are stored as they are: payd signs with them, so it
// must be able to read them back.

// webhookColumns are read by every endpoint query, in scanWebhookEndpoint's order.
const webhookColumns = `id, business_id, url, description, enabled, event_types, secret, previous_secret,
	previous_secret_expires_at, created_at, updated_at`

// scanWebhookEndpoint reads one row of webhookColumns.
func scanWebhookEndpoint(row rowScanner) (*payd.WebhookEndpoint, error) {
	var e payd.WebhookEndpoint
	var types string
	var previous sql.NullString
	var expires sql.NullInt64
	var created, updated int64
	err := row.Scan(&e.ID, &e.BusinessID, &e.URL, &e.Description, &e.Enabled, &types, &e.Secret, &previous,
		&expires, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(types), &e.EventTypes); err != nil {
		return nil, err
	}
	e.PreviousSecret, e.PreviousSecretExpiresAt = previous.String, fromNullMicros(expires)
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}

// eventTypesJSON is how an endpoint's event types are stored on its row.
func eventTypesJSON(types []string) string {
	if types == nil {
		types = []string{}
	}
	b, _ := json.Marshal(types) // strings always marshal
	return string(b)
}

// CreateWebhookEndpoint stores a new endpoint and its subscriptions;
// conflict if its id is taken.
func (q *queries) CreateWebhookEndpoint(ctx context.Context, e *payd.WebhookEndpoint) (err error) {
	defer fail(&err, "webhook endpoint", "store.CreateWebhookEndpoint(%s)", e.ID)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO webhook_endpoints (id, business_id, url, description, enabled, event_types, secret,
			previous_secret, previous_secret_expires_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, e.BusinessID, e.URL, e.Description, e.Enabled, eventTypesJSON(e.EventTypes), e.Secret,
		nullString(e.PreviousSecret), nullMicros(e.PreviousSecretExpiresAt), micros(e.CreatedAt), micros(e.UpdatedAt))
	if err != nil {
		return err
	}
	return q.insertSubscriptions(ctx, e)
}

// insertSubscriptions adds one webhook_subscriptions row per event type,
// one statement each: an endpoint has a few, and one statement text keeps
// the prepared-statement cache small.
func (q *queries) insertSubscriptions(ctx context.Context, e *payd.WebhookEndpoint) error {
	for _, t := range e.EventTypes {
		_, err := q.ex.ExecContext(ctx, `
			INSERT INTO webhook_subscriptions (endpoint_id, business_id, event_type) VALUES ($1, $2, $3)`,
			e.ID, e.BusinessID, t)
		if err != nil {
			return err
		}
	}
	return nil
}

// WebhookEndpointByID returns the business's endpoint; not_found otherwise.
func (q *queries) WebhookEndpointByID(ctx context.Context, businessID, id string) (_ *payd.WebhookEndpoint, err error) {
	defer fail(&err, "webhook endpoint", "store.WebhookEndpointByID(%s)", id)
	return scanWebhookEndpoint(q.ex.QueryRowContext(ctx, `SELECT `+webhookColumns+`
		FROM webhook_endpoints WHERE business_id = $1 AND id = $2`+q.lockRow(), businessID, id))
}

// ListWebhookEndpoints returns up to f.Limit of the business's endpoints
// after f's position, newest first.
func (q *queries) ListWebhookEndpoints(ctx context.Context, businessID string, f payd.WebhookEndpointFilter) (_ []*payd.WebhookEndpoint, err error) {
	defer fail(&err, "webhook endpoint", "store.ListWebhookEndpoints(%s)", businessID)
	w := newConds(businessID)
	w.created(nil, nil, f.AfterCreated, f.AfterID)
	return queryAll(ctx, q.ex, scanWebhookEndpoint, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE `+w.sql()+` ORDER BY created_at DESC, id DESC LIMIT `+w.arg(f.Limit), w.args...)
}

// UpdateWebhookEndpoint writes every mutable field and replaces the
// endpoint's subscriptions; not_found otherwise.
func (q *queries) UpdateWebhookEndpoint(ctx context.Context, e *payd.WebhookEndpoint) (err error) {
	defer fail(&err, "webhook endpoint", "store.UpdateWebhookEndpoint(%s)", e.ID)
	err = affected(q.ex.ExecContext(ctx, `
		UPDATE webhook_endpoints SET url = $3, description = $4, enabled = $5, event_types = $6, secret = $7,
			previous_secret = $8, previous_secret_expires_at = $9, updated_at = $10
		WHERE business_id = $1 AND id = $2`,
		e.BusinessID, e.ID, e.URL, e.Description, e.Enabled, eventTypesJSON(e.EventTypes), e.Secret,
		nullString(e.PreviousSecret), nullMicros(e.PreviousSecretExpiresAt), micros(e.UpdatedAt)))
	if err != nil {
		return err
	}
	if _, err := q.ex.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE endpoint_id = $1`, e.ID); err != nil {
		return err
	}
	return q.insertSubscriptions(ctx, e)
}

// DeleteWebhookEndpoint removes the business's endpoint in one statement;
// its subscriptions go with it (ON DELETE CASCADE), and so must anything
// later tables queue for it (deliveries and their retries). not_found
// when there is no such endpoint, as on a second delete.
func (q *queries) DeleteWebhookEndpoint(ctx context.Context, businessID, id string) (err error) {
	defer fail(&err, "webhook endpoint", "store.DeleteWebhookEndpoint(%s)", id)
	return affected(q.ex.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE business_id = $1 AND id = $2`,
		businessID, id))
}

// EndpointsFor returns the business's enabled endpoints subscribed to
// eventType by name or by "*", oldest first.
func (q *queries) EndpointsFor(ctx context.Context, businessID, eventType string) (_ []*payd.WebhookEndpoint, err error) {
	defer fail(&err, "webhook endpoint", "store.EndpointsFor(%s, %s)", businessID, eventType)
	return queryAll(ctx, q.ex, scanWebhookEndpoint, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE business_id = $1 AND enabled = $3 AND id IN (
			SELECT endpoint_id FROM webhook_subscriptions WHERE business_id = $1 AND event_type IN ($2, '*'))
		ORDER BY created_at, id`, businessID, eventType, true)
}

// EnabledEndpoints returns the businesses' enabled endpoints, oldest
// first, in one statement: a fan-out page reads the endpoints of all its
// events' businesses at once instead of one query per business and type.
func (q *queries) EnabledEndpoints(ctx context.Context, businessIDs []string) (_ []*payd.WebhookEndpoint, err error) {
	defer fail(&err, "webhook endpoint", "store.EnabledEndpoints")
	if len(businessIDs) == 0 {
		return nil, nil
	}
	args, in := []any{true}, ""
	if q.dialect == dialectPostgres { // one statement text for any count
		args, in = append(args, businessIDs), "= ANY($2::text[])"
	} else {
		for _, id := range businessIDs {
			args = append(args, id)
		}
		in = "IN (" + placeholders(2, len(businessIDs)) + ")"
	}
	return queryAll(ctx, q.ex, scanWebhookEndpoint, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE enabled = $1 AND business_id `+in+` ORDER BY created_at, id`, args...)
}

// CreateWebhookEndpoint stores a new endpoint and its subscriptions in one
// transaction (inline when ctx already carries one); conflict if its id is taken.
func (db *DB) CreateWebhookEndpoint(ctx context.Context, e *payd.WebhookEndpoint) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.CreateWebhookEndpoint(ctx, e) })
}

// WebhookEndpointByID returns the business's endpoint; not_found otherwise.
func (db *DB) WebhookEndpointByID(ctx context.Context, businessID, id string) (*payd.WebhookEndpoint, error) {
	return db.reader(ctx).WebhookEndpointByID(ctx, businessID, id)
}

// ListWebhookEndpoints returns a page of the business's endpoints, newest first.
func (db *DB) ListWebhookEndpoints(ctx context.Context, businessID string, f payd.WebhookEndpointFilter) ([]*payd.WebhookEndpoint, error) {
	return db.reader(ctx).ListWebhookEndpoints(ctx, businessID, f)
}

// UpdateWebhookEndpoint writes an endpoint and its subscriptions in one
// transaction (inline when ctx already carries one); not_found otherwise.
func (db *DB) UpdateWebhookEndpoint(ctx context.Context, e *payd.WebhookEndpoint) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.UpdateWebhookEndpoint(ctx, e) })
}

// DeleteWebhookEndpoint removes the business's endpoint; not_found otherwise.
func (db *DB) DeleteWebhookEndpoint(ctx context.Context, businessID, id string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.DeleteWebhookEndpoint(ctx, businessID, id) })
}

// EnabledEndpoints returns the businesses' enabled endpoints.
func (db *DB) EnabledEndpoints(ctx context.Context, businessIDs []string) ([]*payd.WebhookEndpoint, error) {
	return db.reader(ctx).EnabledEndpoints(ctx, businessIDs)
}

// EndpointsFor returns the business's enabled endpoints that receive eventType.
func (db *DB) EndpointsFor(ctx context.Context, businessID, eventType string) ([]*payd.WebhookEndpoint, error) {
	return db.reader(ctx).EndpointsFor(ctx, businessID, eventType)
}
