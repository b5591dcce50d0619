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
	return queryAll(ctx, q.ex, func(row rowScanner) (payd.Pause, error) {
		var p payd.Pause
		var at int64
		err := row.Scan(&p.Name, &p.Reason, &at)
		p.PausedAt = fromMicros(at)
		return p, err
	}, `SELECT name, reason, paused_at FROM pauses ORDER BY name`)
}
