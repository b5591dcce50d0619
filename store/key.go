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

const apiKeyColumns = `id, business_id, kind, mode, permissions, hash, hint, name, created_at, revoked_at`

func scanAPIKey(row rowScanner) (*payd.APIKey, error) {
	var k payd.APIKey
	var perms string
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.BusinessID, &k.Kind, &k.Mode, &perms, &k.Hash, &k.Hint, &k.Name, &created, &revoked); err != nil {
		return nil, err
	}
	if perms != "" {
		var err error
		if k.Permissions, err = payd.ParsePermissions(perms); err != nil {
			// %v, not %w: a corrupt row is internal, not the client's invalid_request.
			return nil, fmt.Errorf("stored permissions %q: %v", perms, err)
		}
	}
	k.CreatedAt, k.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return &k, nil
}

// APIKeyByHash returns the key with that hash, revoked or not; not_found
// otherwise.
func (q *queries) APIKeyByHash(ctx context.Context, hash string) (_ *payd.APIKey, err error) {
	defer fail(&err, "API key", "store.APIKeyByHash(%.12s…)", hash)
	return scanAPIKey(q.ex.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1`, hash))
}

// APIKeyByID returns the business's key, revoked or not; not_found
// otherwise.
func (q *queries) APIKeyByID(ctx context.Context, businessID, id string) (_ *payd.APIKey, err error) {
	defer fail(&err, "API key", "store.APIKeyByID(%s, %s)", businessID, id)
	return scanAPIKey(q.ex.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE business_id = $1 AND id = $2`, businessID, id))
}

// ListAPIKeys lists the business's keys, revoked ones too, newest first.
// A business has a handful of keys: the list is not paged.
func (q *queries) ListAPIKeys(ctx context.Context, businessID string) (_ []*payd.APIKey, err error) {
	defer fail(&err, "API key", "store.ListAPIKeys(%s)", businessID)
	return queryAll(ctx, q.ex, scanAPIKey, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE business_id = $1 ORDER BY created_at DESC, id DESC`, businessID)
}

// UpdateAPIKey writes a key's name and permissions; not_found if the
// business has no such key.
func (q *queries) UpdateAPIKey(ctx context.Context, k *payd.APIKey) (err error) {
	defer fail(&err, "API key", "store.UpdateAPIKey(%s)", k.ID)
	return affected(q.ex.ExecContext(ctx, `UPDATE api_keys SET name = $3, permissions = $4
		WHERE business_id = $1 AND id = $2`, k.BusinessID, k.ID, k.Name, k.Permissions.String()))
}

// RevokeAPIKey makes a key stop working at at, or keeps the earlier time
// it already stops at; not_found if the business has no such key.
func (q *queries) EndLiveAPIKey(ctx context.Context, businessID, id string, at time.Time) (err error) {
	defer fail(&err, "API key", "store.EndLiveAPIKey(%s, %s)", businessID, id)
	err = affected(q.ex.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3
		WHERE business_id = $1 AND id = $2 AND revoked_at IS NULL`, businessID, id, micros(at)))
	if err == sql.ErrNoRows {
		if _, err := q.APIKeyByID(ctx, businessID, id); err != nil {
			return err
		}
		return payd.Errorf(payd.ErrConflict, "API key %s already has an end", id)
	}
	return err
}

// RevokeAPIKey makes a key stop working at at, or keeps its earlier end.
func (q *queries) RevokeAPIKey(ctx context.Context, businessID, id string, at time.Time) (err error) {
	defer fail(&err, "API key", "store.RevokeAPIKey(%s, %s)", businessID, id)
	return affected(q.ex.ExecContext(ctx, `
		UPDATE api_keys SET revoked_at = CASE WHEN revoked_at IS NULL OR revoked_at > $3 THEN $3 ELSE revoked_at END
		WHERE business_id = $1 AND id = $2`,
		businessID, id, micros(at)))
}
