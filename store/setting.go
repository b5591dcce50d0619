package store

import "context"

// EnsureSetting stores value under name unless a value is already there,
// and returns the value in force. It is one atomic upsert: the no-op
// update makes RETURNING yield the existing row, so concurrent callers on
// any number of replicas all get the first value stored.
func (q *queries) EnsureSetting(ctx context.Context, name, value string) (_ string, err error) {
	defer fail(&err, "setting", "store.EnsureSetting(%s)", name)
	var inForce string
	err = q.ex.QueryRowContext(ctx, `
		INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = settings.value
		RETURNING value`, name, value).Scan(&inForce)
	return inForce, err
}
