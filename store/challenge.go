package store

import (
	"context"
	"time"

	"payd"
)

// CreateChallengeToken stores an issued dev bot-check token by its hash.
func (q *queries) CreateChallengeToken(ctx context.Context, t *payd.ChallengeToken) (err error) {
	defer fail(&err, "challenge token", "store.CreateChallengeToken()")
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO challenge_tokens (hash, form, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		t.Hash, string(t.Form), micros(t.CreatedAt), micros(t.ExpiresAt))
	return err
}

// TakeChallengeToken deletes the token with this hash and returns it. The
// DELETE … RETURNING is one statement, so of two concurrent takes only one
// sees the row; whether the token may pass (form, expiry) is the caller's
// to decide with ChallengeToken.Check.
func (q *queries) TakeChallengeToken(ctx context.Context, hash string) (_ *payd.ChallengeToken, err error) {
	defer fail(&err, "challenge token", "store.TakeChallengeToken()")
	var t payd.ChallengeToken
	var form string
	var created, expires int64
	err = q.ex.QueryRowContext(ctx, `
		DELETE FROM challenge_tokens WHERE hash = $1
		RETURNING hash, form, created_at, expires_at`, hash).Scan(&t.Hash, &form, &created, &expires)
	if err != nil {
		return nil, err
	}
	t.Form, t.CreatedAt, t.ExpiresAt = payd.ChallengeForm(form), fromMicros(created), fromMicros(expires)
	return &t, nil
}

// DeleteExpiredChallengeTokens removes the tokens expired at or before now.
func (q *queries) DeleteExpiredChallengeTokens(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "challenge token", "store.DeleteExpiredChallengeTokens()")
	return count(q.ex.ExecContext(ctx, `DELETE FROM challenge_tokens WHERE expires_at <= $1`, micros(now)))
}

// CreateChallengeToken stores an issued dev bot-check token by its hash.
func (db *DB) CreateChallengeToken(ctx context.Context, t *payd.ChallengeToken) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateChallengeToken(ctx, t) })
}

// TakeChallengeToken removes the token with this hash and returns it; of
// two concurrent takes, on any replicas, one wins and the other gets
// not_found.
func (db *DB) TakeChallengeToken(ctx context.Context, hash string) (t *payd.ChallengeToken, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		t, err = q.TakeChallengeToken(ctx, hash)
		return err
	})
	return t, err
}

// DeleteExpiredChallengeTokens removes the tokens expired at or before now.
func (db *DB) DeleteExpiredChallengeTokens(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredChallengeTokens(ctx, now)
		return err
	})
	return n, err
}
