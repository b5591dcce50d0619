package store

import (
	"context"

	"payd"
)

// SetPause records a pause; pausing something already paused keeps the
// first time and takes the newer reason.
func (q *queries) SetPause(ctx context.Context, p payd.Pause) (err error) {
	defer fail(&err, "pause", "store.SetPause(%s)", p.Name)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO pauses (name, reason, paused_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET reason = excluded.reason`,
		p.Name, p.Reason, micros(p.PausedAt))
	return err
}

// DeletePause lifts a pause; lifting one that is not set is not an error.
func (q *queries) DeletePause(ctx context.Context, name string) (err error) {
	defer fail(&err, "pause", "store.DeletePause(%s)", name)
	_, err = q.ex.ExecContext(ctx, `DELETE FROM pauses WHERE name = $1`, name)
	return err
}

// Pauses lists what is paused now, by name.
func (q *queries) Pauses(ctx context.Context) (_ []payd.Pause, err error) {
	defer fail(&err, "pause", "store.Pauses()")
	rows, err := q.ex.QueryContext(ctx, `SELECT name, reason, paused_at FROM pauses ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []payd.Pause
	for rows.Next() {
		var p payd.Pause
		var at int64
		if err := rows.Scan(&p.Name, &p.Reason, &at); err != nil {
			return nil, err
		}
		p.PausedAt = fromMicros(at)
		out = append(out, p)
	}
	return out, rows.Err()
}
