package store

import (
	"database/sql"
	"encoding/json"

	"payd"
)

// deliveryColumns are read by every delivery query, in scanDelivery's order.
const deliveryColumns = `id, business_id, webhook_id, event_id, event_type, subject_kind, subject_id, status,
	attempts, next_attempt_at, lease_until, version, payload, request_headers, error, test, created_at, updated_at`

// deliveryArgs are the values of deliveryColumns for d, in order.
func deliveryArgs(d *payd.WebhookDelivery) ([]any, error) {
	attempts, headers, err := encodeDeliveryJSON(d)
	if err != nil {
		return nil, err
	}
	return []any{d.ID, d.BusinessID, d.WebhookID, d.EventID, d.EventType, d.SubjectKind, d.SubjectID,
		string(d.Status), attempts, nullMicros(d.NextAttemptAt), nullMicros(d.LeaseUntil), d.Version,
		string(d.Payload), headers, d.Error, d.Test, micros(d.CreatedAt), micros(d.UpdatedAt)}, nil
}

// encodeDeliveryJSON renders the attempts and the request headers (NULL
// before the first attempt).
func encodeDeliveryJSON(d *payd.WebhookDelivery) (attempts string, headers any, err error) {
	list := d.Attempts
	if list == nil {
		list = []payd.DeliveryAttempt{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return "", nil, err
	}
	if d.RequestHeaders == nil {
		return string(b), nil, nil
	}
	h, err := json.Marshal(d.RequestHeaders)
	return string(b), string(h), err
}

// scanDelivery reads one row of deliveryColumns.
func scanDelivery(row rowScanner) (*payd.WebhookDelivery, error) {
	var d payd.WebhookDelivery
	var status, attempts, payload string
	var headers sql.NullString
	var next, lease sql.NullInt64
	var created, updated int64
	err := row.Scan(&d.ID, &d.BusinessID, &d.WebhookID, &d.EventID, &d.EventType, &d.SubjectKind, &d.SubjectID,
		&status, &attempts, &next, &lease, &d.Version, &payload, &headers, &d.Error, &d.Test, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(attempts), &d.Attempts); err != nil {
		return nil, err
	}
	if len(d.Attempts) == 0 {
		d.Attempts = nil
	}
	if headers.Valid {
		if err := json.Unmarshal([]byte(headers.String), &d.RequestHeaders); err != nil {
			return nil, err
		}
	}
	d.Status, d.Payload = payd.DeliveryStatus(status), []byte(payload)
	d.NextAttemptAt, d.LeaseUntil = fromNullMicros(next), fromNullMicros(lease)
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &d, nil
}
