package store

import (
	"context"
	"time"

	"payd"
)

// The methods below are payd.Queries on *DB, each a single statement (or
// one claim) standing alone. Reads go to the read pool; writes go through
// the SQLite writer, or straight to the PostgreSQL pool. Called with a
// context that carries a transaction (see Tx), both join it.

// CreateBusiness stores a new business; conflict if its id is taken.
func (db *DB) CreateBusiness(ctx context.Context, b *payd.Business) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateBusiness(ctx, b) })
}

// BusinessByID returns the business; not_found otherwise.
func (db *DB) BusinessByID(ctx context.Context, id string) (*payd.Business, error) {
	return db.reader(ctx).BusinessByID(ctx, id)
}

// BusinessByReferralCode: see payd.BusinessStore.
func (db *DB) BusinessByReferralCode(ctx context.Context, code string) (*payd.Business, error) {
	return db.reader(ctx).BusinessByReferralCode(ctx, code)
}

// SetReferrer: see payd.BusinessStore.
func (db *DB) SetReferrer(ctx context.Context, id, referrerID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SetReferrer(ctx, id, referrerID) })
}

// SetBusinessSuspended suspends (at non-nil) or reinstates (nil) a
// business; not_found otherwise.
func (db *DB) SetBusinessSuspended(ctx context.Context, id string, at *time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SetBusinessSuspended(ctx, id, at) })
}

// CreateAPIKey stores a new key; conflict if its id or hash is taken.
func (db *DB) CreateAPIKey(ctx context.Context, k *payd.APIKey) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateAPIKey(ctx, k) })
}

// APIKeyByHash returns the key with that hash, revoked or not; not_found otherwise.
func (db *DB) APIKeyByHash(ctx context.Context, hash string) (*payd.APIKey, error) {
	return db.reader(ctx).APIKeyByHash(ctx, hash)
}

// APIKeyByID: see payd.KeyStore.
func (db *DB) APIKeyByID(ctx context.Context, businessID, id string) (*payd.APIKey, error) {
	return db.reader(ctx).APIKeyByID(ctx, businessID, id)
}

// ListAPIKeys: see payd.KeyStore.
func (db *DB) ListAPIKeys(ctx context.Context, businessID string) ([]*payd.APIKey, error) {
	return db.reader(ctx).ListAPIKeys(ctx, businessID)
}

// UpdateAPIKey: see payd.KeyStore.
func (db *DB) UpdateAPIKey(ctx context.Context, k *payd.APIKey) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.UpdateAPIKey(ctx, k) })
}

// RevokeAPIKey: see payd.KeyStore.
func (db *DB) RevokeAPIKey(ctx context.Context, businessID, id string, at time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.RevokeAPIKey(ctx, businessID, id, at) })
}

// EndLiveAPIKey sets a live key's end; conflict when it has one.
func (db *DB) EndLiveAPIKey(ctx context.Context, businessID, id string, at time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.EndLiveAPIKey(ctx, businessID, id, at) })
}

// SetPause records a pause; pausing something already paused keeps the first time.
func (db *DB) SetPause(ctx context.Context, p payd.Pause) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SetPause(ctx, p) })
}

// DeletePause lifts a pause; lifting one that is not set is not an error.
func (db *DB) DeletePause(ctx context.Context, name string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.DeletePause(ctx, name) })
}

// Pauses lists what is paused now, by name.
func (db *DB) Pauses(ctx context.Context) ([]payd.Pause, error) {
	return db.reader(ctx).Pauses(ctx)
}

// CreateExchangeRates stores a snapshot.
func (db *DB) CreateExchangeRates(ctx context.Context, r *payd.ExchangeRates) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateExchangeRates(ctx, r) })
}

// LatestExchangeRates returns the newest snapshot; not_found if there is none.
func (db *DB) LatestExchangeRates(ctx context.Context) (*payd.ExchangeRates, error) {
	return db.reader(ctx).LatestExchangeRates(ctx)
}

// ExchangeRatesByID returns one snapshot of the history; not_found if there is none.
func (db *DB) ExchangeRatesByID(ctx context.Context, id string) (*payd.ExchangeRates, error) {
	return db.reader(ctx).ExchangeRatesByID(ctx, id)
}

// DeleteExchangeRatesBefore removes snapshots older than t, keeping the
// newest one and every one a checkout names.
func (db *DB) DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExchangeRatesBefore(ctx, t)
		return err
	})
	return n, err
}

// ClaimIdempotencyKey atomically claims rec's (Scope, Key); see payd.IdempotencyStore.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, rec *payd.IdempotencyRecord, now time.Time) (held *payd.IdempotencyRecord, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		held, err = q.ClaimIdempotencyKey(ctx, rec, now)
		return err
	})
	return held, err
}

// IdempotencyRecord returns the record holding (scope, key); not_found if none.
func (db *DB) IdempotencyRecord(ctx context.Context, scope, key string) (*payd.IdempotencyRecord, error) {
	return db.reader(ctx).IdempotencyRecord(ctx, scope, key)
}

// CompleteIdempotencyKey stores the 2xx response of the caller's claim; see
// payd.IdempotencyStore.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, claim *payd.IdempotencyRecord, status int, contentType string, body []byte) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error {
		return q.CompleteIdempotencyKey(ctx, claim, status, contentType, body)
	})
}

// ReleaseIdempotencyKey frees a running claim after an error response.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, claim *payd.IdempotencyRecord) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.ReleaseIdempotencyKey(ctx, claim) })
}

// DeleteExpiredIdempotencyKeys removes records whose expiry is at or before now.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredIdempotencyKeys(ctx, now)
		return err
	})
	return n, err
}

// CountRateHit adds one hit to (key, window) and returns the count after it.
func (db *DB) CountRateHit(ctx context.Context, key string, window, expiresAt time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.CountRateHit(ctx, key, window, expiresAt)
		return err
	})
	return n, err
}

// CountWindowHit adds one hit to the window of the given length starting at
// window and returns its count and the previous window's.
func (db *DB) CountWindowHit(ctx context.Context, key string, window time.Time, length time.Duration) (cur, prev int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		cur, prev, err = q.CountWindowHit(ctx, key, window, length)
		return err
	})
	return cur, prev, err
}

// DeleteExpiredRateCounters removes counters whose expiry is at or before now.
func (db *DB) DeleteExpiredRateCounters(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredRateCounters(ctx, now)
		return err
	})
	return n, err
}

// EnsureSetting stores value under name unless a value is already there,
// and returns the value in force.
func (db *DB) EnsureSetting(ctx context.Context, name, value string) (v string, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		v, err = q.EnsureSetting(ctx, name, value)
		return err
	})
	return v, err
}
