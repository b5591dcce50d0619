package store

import (
	"context"
	"time"

	"payd"
)

// Two-step sign-ins in progress (migration 22, docs/two-step.md).

// CreateTwoFactorChallenge stores a new challenge.
func (q *queries) CreateTwoFactorChallenge(ctx context.Context, c *payd.TwoFactorChallenge) (err error) {
	defer fail(&err, "two-step challenge", "store.CreateTwoFactorChallenge(%s)", c.ID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO two_factor_challenges (id, token_hash, user_id, password_hash,
			created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, c.TokenHash, c.UserID, c.PasswordHash, micros(c.CreatedAt), micros(c.ExpiresAt))
	return err
}

// TwoFactorChallenge returns the challenge; not_found otherwise.
func (q *queries) TwoFactorChallenge(ctx context.Context, id string) (_ *payd.TwoFactorChallenge, err error) {
	defer fail(&err, "two-step challenge", "store.TwoFactorChallenge(%s)", id)
	var c payd.TwoFactorChallenge
	var created, expires int64
	if err := q.ex.QueryRowContext(ctx, `SELECT id, token_hash, user_id, password_hash, created_at, expires_at
		FROM two_factor_challenges WHERE id = $1`, id).Scan(&c.ID, &c.TokenHash, &c.UserID, &c.PasswordHash, &created, &expires); err != nil {
		return nil, err
	}
	c.CreatedAt, c.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &c, nil
}

// TakeTwoFactorChallenge deletes the challenge; not_found when another
// take came first. One statement, so of two racing takes one wins.
func (q *queries) TakeTwoFactorChallenge(ctx context.Context, id string) (err error) {
	defer fail(&err, "two-step challenge", "store.TakeTwoFactorChallenge(%s)", id)
	return affected(q.ex.ExecContext(ctx, `DELETE FROM two_factor_challenges WHERE id = $1`, id))
}

// DeleteExpiredTwoFactorChallenges removes the challenges expired at or before now.
func (q *queries) DeleteExpiredTwoFactorChallenges(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "two-step challenge", "store.DeleteExpiredTwoFactorChallenges()")
	return count(q.ex.ExecContext(ctx, `DELETE FROM two_factor_challenges WHERE expires_at <= $1`, micros(now)))
}

// CreateTwoFactorChallenge: see payd.TwoFactorChallengeStore.
func (db *DB) CreateTwoFactorChallenge(ctx context.Context, c *payd.TwoFactorChallenge) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateTwoFactorChallenge(ctx, c) })
}

// TwoFactorChallenge: see payd.TwoFactorChallengeStore.
func (db *DB) TwoFactorChallenge(ctx context.Context, id string) (*payd.TwoFactorChallenge, error) {
	return db.reader(ctx).TwoFactorChallenge(ctx, id)
}

// TakeTwoFactorChallenge: see payd.TwoFactorChallengeStore.
func (db *DB) TakeTwoFactorChallenge(ctx context.Context, id string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.TakeTwoFactorChallenge(ctx, id) })
}

// DeleteExpiredTwoFactorChallenges: see payd.TwoFactorChallengeStore.
func (db *DB) DeleteExpiredTwoFactorChallenges(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredTwoFactorChallenges(ctx, now)
		return err
	})
	return n, err
}
