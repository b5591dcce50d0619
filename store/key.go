package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"payd"
)

// CreateAPIKey stores a new key; conflict if its id or hash is taken. A key
// of an unknown business fails the foreign key as an internal error: the
// caller holds the business it creates keys for.
func (q *queries) CreateAPIKey(ctx context.Context, k *payd.APIKey) (err error) {
	defer fail(&err, "API key", "store.CreateAPIKey(%s)", k.ID)
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO api_keys (id, business_id, kind, mode, permissions, hash, hint, name, created_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.BusinessID, string(k.Kind), string(k.Mode), k.Permissions.String(), k.Hash, k.Hint, k.Name,
		micros(k.CreatedAt), nullMicros(k.RevokedAt))
	return err
}

// APIKeyByHash returns the key with that hash, revoked or not; not_found
// otherwise.
func (q *queries) APIKeyByHash(ctx context.Context, hash string) (_ *payd.APIKey, err error) {
	defer fail(&err, "API key", "store.APIKeyByHash(%.12s…)", hash)
	var k payd.APIKey
	var perms string
	var created int64
	var revoked sql.NullInt64
	err = q.ex.QueryRowContext(ctx, `
		SELECT id, business_id, kind, mode, permissions, hash, hint, name, created_at, revoked_at
		FROM api_keys WHERE hash = $1`, hash).
		Scan(&k.ID, &k.BusinessID, &k.Kind, &k.Mode, &perms, &k.Hash, &k.Hint, &k.Name, &created, &revoked)
	if err != nil {
		return nil, err
	}
	if perms != "" {
		if k.Permissions, err = payd.ParsePermissions(perms); err != nil {
			// %v, not %w: a corrupt row is internal, not the client's invalid_request.
			return nil, fmt.Errorf("stored permissions %q: %v", perms, err)
		}
	}
	k.CreatedAt, k.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return &k, nil
}

// RevokeAPIKey marks a key revoked at now; not_found if the business has
// no such key. Revoking twice keeps the first time.
func (q *queries) RevokeAPIKey(ctx context.Context, businessID, id string, now time.Time) (err error) {
	defer fail(&err, "API key", "store.RevokeAPIKey(%s, %s)", businessID, id)
	return affected(q.ex.ExecContext(ctx, `
		UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3)
		WHERE business_id = $1 AND id = $2`,
		businessID, id, micros(now)))
}
