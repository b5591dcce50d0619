package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"payd"
)

// claimAttempts bounds how often a claim retries when the record that
// beat it vanishes (released or reaped) before it could be read.
const claimAttempts = 4

// ClaimIdempotencyKey atomically claims rec's (Scope, Key): (nil, nil) when
// the claim was taken, else the record holding the key. The claim is one
// upsert that takes over only an expired record or a running claim whose
// lock has lapsed; whoever's statement touched the row holds the key, on
// one process or many.
func (q *queries) ClaimIdempotencyKey(ctx context.Context, rec *payd.IdempotencyRecord, now time.Time) (_ *payd.IdempotencyRecord, err error) {
	defer fail(&err, "idempotency key", "store.ClaimIdempotencyKey(%s, %s)", rec.Scope, rec.Key)
	for range claimAttempts {
		claimed, err := q.claimIdempotencyKey(ctx, rec, now)
		if err != nil || claimed {
			return nil, err
		}
		held, err := q.idempotencyRecord(ctx, rec.Scope, rec.Key)
		if !errors.Is(err, sql.ErrNoRows) {
			return held, err
		}
	}
	return nil, errors.New("the key changed hands on every attempt")
}

// claimIdempotencyKey runs the claiming upsert and reports whether it took
// the key: the statement changes a row only when it inserts or takes over.
// Counting changed rows instead of RETURNING keeps the claim, the busiest
// statement of every idempotent POST, on the cheaper Exec path.
func (q *queries) claimIdempotencyKey(ctx context.Context, rec *payd.IdempotencyRecord, now time.Time) (bool, error) {
	n, err := count(q.ex.ExecContext(ctx, `
		INSERT INTO idempotency_keys
			(scope, key, method, path, body_hash, status, content_type, body, created_at, locked_until, expires_at)
		VALUES ($1, $2, $3, $4, $5, 0, '', NULL, $6, $7, $8)
		ON CONFLICT (scope, key) DO UPDATE SET
			method = excluded.method, path = excluded.path, body_hash = excluded.body_hash,
			status = 0, content_type = '', body = NULL, created_at = excluded.created_at,
			locked_until = excluded.locked_until, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= $9
			OR (idempotency_keys.status = 0 AND idempotency_keys.locked_until <= $9)`,
		rec.Scope, rec.Key, rec.Method, rec.Path, rec.BodyHash,
		micros(rec.CreatedAt), micros(rec.LockedUntil), micros(rec.ExpiresAt), micros(now)))
	return n == 1, err
}

// IdempotencyRecord returns the record holding a key; not_found if none.
func (q *queries) IdempotencyRecord(ctx context.Context, scope, key string) (_ *payd.IdempotencyRecord, err error) {
	defer fail(&err, "idempotency key", "store.IdempotencyRecord(%s, %s)", scope, key)
	return q.idempotencyRecord(ctx, scope, key)
}

// idempotencyRecord reads the record holding a key.
func (q *queries) idempotencyRecord(ctx context.Context, scope, key string) (*payd.IdempotencyRecord, error) {
	r := payd.IdempotencyRecord{Scope: scope, Key: key}
	var created, locked, expires int64
	err := q.ex.QueryRowContext(ctx, `
		SELECT method, path, body_hash, status, content_type, body, created_at, locked_until, expires_at
		FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key).
		Scan(&r.Method, &r.Path, &r.BodyHash, &r.Status, &r.ContentType, &r.Body, &created, &locked, &expires)
	if err != nil {
		return nil, err
	}
	r.CreatedAt, r.LockedUntil, r.ExpiresAt = fromMicros(created), fromMicros(locked), fromMicros(expires)
	return &r, nil
}

// CompleteIdempotencyKey stores the 2xx response of the caller's claim:
// it completes the caller's own running claim, or inserts the whole record
// when no live record holds the key; not_found when another request holds
// or has completed it (see payd.IdempotencyStore).
func (q *queries) CompleteIdempotencyKey(ctx context.Context, claim *payd.IdempotencyRecord, status int, contentType string, body []byte) (err error) {
	defer fail(&err, "running idempotency claim", "store.CompleteIdempotencyKey(%s, %s)", claim.Scope, claim.Key)
	return affected(q.ex.ExecContext(ctx, `
		INSERT INTO idempotency_keys
			(scope, key, method, path, body_hash, status, content_type, body, created_at, locked_until, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (scope, key) DO UPDATE SET
			method = excluded.method, path = excluded.path, body_hash = excluded.body_hash,
			status = excluded.status, content_type = excluded.content_type, body = excluded.body,
			created_at = excluded.created_at, locked_until = excluded.locked_until, expires_at = excluded.expires_at
		WHERE (idempotency_keys.status = 0 AND idempotency_keys.created_at = excluded.created_at)
			OR (idempotency_keys.status = 0 AND idempotency_keys.locked_until <= excluded.created_at)
			OR idempotency_keys.expires_at <= excluded.created_at`,
		claim.Scope, claim.Key, claim.Method, claim.Path, claim.BodyHash, status, contentType, body,
		micros(claim.CreatedAt), micros(claim.LockedUntil), micros(claim.ExpiresAt)))
}

// ReleaseIdempotencyKey frees a running claim after an error response. A
// stored response is never released, and releasing a free key is not an
// error.
func (q *queries) ReleaseIdempotencyKey(ctx context.Context, claim *payd.IdempotencyRecord) (err error) {
	defer fail(&err, "idempotency key", "store.ReleaseIdempotencyKey(%s, %s)", claim.Scope, claim.Key)
	_, err = q.ex.ExecContext(ctx, `
		DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status = 0 AND created_at = $3`,
		claim.Scope, claim.Key, micros(claim.CreatedAt))
	return err
}

// DeleteExpiredIdempotencyKeys removes records whose expiry is at or before now.
func (q *queries) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "idempotency key", "store.DeleteExpiredIdempotencyKeys(%s)", now.Format(time.RFC3339))
	return count(q.ex.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, micros(now)))
}
