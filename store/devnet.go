package store

import "context"

// AppendDevnetOp appends one operation to the devnet's log and returns once
// it is durable. The log has one writer, the devnet's own mutex; a second
// writer racing it gets conflict instead of reordering the log.
func (q *queries) AppendDevnetOp(ctx context.Context, op []byte) (err error) {
	defer fail(&err, "devnet op", "store.AppendDevnetOp()")
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO devnet_ops (seq, op, created_at)
		SELECT COALESCE(MAX(seq), 0) + 1, $1, $2 FROM devnet_ops`,
		string(op), micros(q.now()))
	return err
}

// DevnetOps returns every operation of the devnet's log, oldest first.
func (q *queries) DevnetOps(ctx context.Context) (_ [][]byte, err error) {
	defer fail(&err, "devnet op", "store.DevnetOps()")
	return queryAll(ctx, q.ex, func(row rowScanner) ([]byte, error) {
		var op string
		err := row.Scan(&op)
		return []byte(op), err
	}, `SELECT op FROM devnet_ops ORDER BY seq`)
}

// AppendDevnetOp appends one operation to the devnet's log (chain/devnet's
// Log) and returns once it is committed: on SQLite through the writer,
// with synchronous=FULL.
func (db *DB) AppendDevnetOp(ctx context.Context, op []byte) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.AppendDevnetOp(ctx, op) })
}

// DevnetOps returns every operation of the devnet's log, oldest first.
func (db *DB) DevnetOps(ctx context.Context) ([][]byte, error) {
	return db.reader(ctx).DevnetOps(ctx)
}
