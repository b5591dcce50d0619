package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"payd"
)

// eventColumns are the columns every event read selects, in scanEvent's order.
const eventColumns = `id, business_id, type, subject_kind, subject_id, data, actor_kind, actor_id, actor_name, created_at`

// AppendEvents stores events in one statement.
func (q *queries) AppendEvents(ctx context.Context, events []*payd.Event) (err error) {
	if len(events) == 0 {
		return nil
	}
	defer fail(&err, "event", "store.AppendEvents(%s)", events[0].ID)
	var sb strings.Builder
	sb.WriteString(`INSERT INTO events (` + eventColumns + `) VALUES `)
	args := make([]any, 0, 10*len(events))
	for i, e := range events {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(")
		for j := range 10 {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("$" + strconv.Itoa(len(args)+j+1))
		}
		sb.WriteString(")")
		args = append(args, e.ID, e.BusinessID, e.Type, e.SubjectKind, e.SubjectID, string(e.Data), e.Actor.Kind,
			null(e.Actor.ID), null(e.Actor.Name), micros(e.CreatedAt))
	}
	_, err = q.ex.ExecContext(ctx, sb.String(), args...)
	return err
}

// EventByID returns the business's event; not_found otherwise.
func (q *queries) EventByID(ctx context.Context, businessID, id string) (_ *payd.Event, err error) {
	defer fail(&err, "event", "store.EventByID(%s)", id)
	return scanEvent(q.ex.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE business_id = $1 AND id = $2`,
		businessID, id))
}

// EventsOf returns a subject's events, oldest first.
func (q *queries) EventsOf(ctx context.Context, businessID, subjectID string) (_ []*payd.Event, err error) {
	defer fail(&err, "event", "store.EventsOf(%s)", subjectID)
	return queryAll(ctx, q.ex, scanEvent, `SELECT `+eventColumns+` FROM events
		WHERE business_id = $1 AND subject_id = $2 ORDER BY created_at, id`, businessID, subjectID)
}

// scanEvent reads one row of eventColumns.
func scanEvent(row rowScanner) (*payd.Event, error) {
	var e payd.Event
	var data string
	var actorID, actorName sql.NullString
	var created int64
	if err := row.Scan(&e.ID, &e.BusinessID, &e.Type, &e.SubjectKind, &e.SubjectID, &data, &e.Actor.Kind,
		&actorID, &actorName, &created); err != nil {
		return nil, err
	}
	e.Data, e.Actor.ID, e.Actor.Name, e.CreatedAt = []byte(data), actorID.String, actorName.String, fromMicros(created)
	return &e, nil
}

// AppendEvents stores events, in ctx's transaction when it carries one.
func (db *DB) AppendEvents(ctx context.Context, events []*payd.Event) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.AppendEvents(ctx, events) })
}

// EventByID returns the business's event; not_found otherwise.
func (db *DB) EventByID(ctx context.Context, businessID, id string) (*payd.Event, error) {
	return db.reader(ctx).EventByID(ctx, businessID, id)
}

// EventsOf returns a subject's events, oldest first.
func (db *DB) EventsOf(ctx context.Context, businessID, subjectID string) ([]*payd.Event, error) {
	return db.reader(ctx).EventsOf(ctx, businessID, subjectID)
}
