package payd

import (
	"context"
	"time"
)

// IdempotencyRecord is one claimed Idempotency-Key (spec 4.8). While the
// first request runs, Status is 0; once it answers 2xx, the response is kept
// until ExpiresAt and replayed byte for byte.
type IdempotencyRecord struct {
	// Scope is the business id, or "public:<body hash>" for keyless requests,
	// whose key is stored together with the body (rule 7).
	Scope    string
	Key      string
	Method   string
	Path     string
	BodyHash string // hex SHA-256 of the request body
	// Status is the stored response status, or 0 while the first request runs.
	Status      int
	ContentType string
	Body        []byte
	CreatedAt   time.Time
	// LockedUntil bounds how long a running claim blocks retries: a claim
	// left by a process that died is taken over after it.
	LockedUntil time.Time
	ExpiresAt   time.Time
}

// IdempotencyStore keeps idempotency claims and stored responses.
type IdempotencyStore interface {
	// ClaimIdempotencyKey atomically claims rec's (Scope, Key). It returns
	// (nil, nil) when the claim was taken (the key was new, its record
	// expired, or a running claim's lock lapsed), and the record holding the
	// key otherwise. now decides expiry.
	ClaimIdempotencyKey(ctx context.Context, rec *IdempotencyRecord, now time.Time) (*IdempotencyRecord, error)
	// IdempotencyRecord returns the record holding (scope, key), expired or
	// not; not_found when there is none.
	IdempotencyRecord(ctx context.Context, scope, key string) (*IdempotencyRecord, error)
	// CompleteIdempotencyKey stores the 2xx response of the caller's claim in
	// one atomic upsert: it completes the caller's own running claim (matched
	// by Scope, Key and CreatedAt, so a request whose claim lapsed and was
	// taken over cannot complete the new one), or inserts the whole record
	// when no live record holds the key (a claim held only in memory, see
	// api/idempotency.go). It returns not_found when another request holds
	// or has completed the key; the caller must then not commit its change.
	CompleteIdempotencyKey(ctx context.Context, claim *IdempotencyRecord, status int, contentType string, body []byte) error
	// ReleaseIdempotencyKey frees the caller's own running claim after an
	// error response (rule 3); releasing a claim that is gone is not an error.
	ReleaseIdempotencyKey(ctx context.Context, claim *IdempotencyRecord) error
	// DeleteExpiredIdempotencyKeys removes records whose ExpiresAt is at or before now.
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int, error)
}

// RateCounterStore counts requests per key and window in the database, so
// that replicas on one PostgreSQL share one budget.
type RateCounterStore interface {
	// CountRateHit adds one hit to (key, window) and returns the count after it.
	// expiresAt is when the row may be deleted.
	CountRateHit(ctx context.Context, key string, window time.Time, expiresAt time.Time) (int, error)
	// CountWindowHit adds one hit to the window of the given length that
	// starts at window and returns the count after it and the count of the
	// window just before, for a sliding-window estimate; the row is kept
	// until the end of the next window.
	CountWindowHit(ctx context.Context, key string, window time.Time, length time.Duration) (current, previous int, err error)
	// DeleteExpiredRateCounters removes counters whose expiry is at or before now.
	DeleteExpiredRateCounters(ctx context.Context, now time.Time) (int, error)
}

// SettingStore keeps instance-wide settings, such as the secret that signs
// pagination cursors, that every replica must share.
type SettingStore interface {
	// EnsureSetting stores value under name unless a value is already there,
	// and returns the value in force.
	EnsureSetting(ctx context.Context, name, value string) (string, error)
}
