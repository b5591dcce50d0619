package payd

import (
	"context"
	"time"
)

// Queries is everything the store can read and write. Outside Store.Tx each
// call stands alone; inside, all calls commit together or not at all.
type Queries interface {
	BusinessStore
	KeyStore
	PauseStore
	RateStore
	IdempotencyStore
	RateCounterStore
	SettingStore
	CustomerStore
	LinkStore
	PaymentStore
	CheckoutSettingsStore
	CheckoutLogoStore
	WalletStore
	CheckoutStore
	LeaseStore
	ListStore
	SearchStore
	WebhookStore
	EventStore
	DeliveryStore
	ChainStore
	ChallengeTokenStore
	EmailStore
	AccountStore
	RecoveryStore
	TeamStore
	PasskeyStore
	WebAuthnChallengeStore
	TwoFactorChallengeStore
	CardSandboxStore
}

// Store is payd's database.
type Store interface {
	Queries
	// Tx runs fn in one write transaction and commits if fn returns nil.
	// Busy and serialization failures are retried; fn may run more than once.
	// fn must use the ctx it is given: store calls made with it (including a
	// nested Tx) join the transaction, where the outer ctx could wait forever
	// for SQLite's single writer, which is busy running fn.
	Tx(ctx context.Context, fn func(ctx context.Context, q Queries) error) error
	// Dialect names the database: "sqlite" or "postgres".
	Dialect() string
	// Close releases the database.
	Close() error
}

// PoolStats are one database pool's figures for the operator's metrics
// (store.DB.PoolStats, ops).
type PoolStats struct {
	InUse, Idle int
	// WaitCount and WaitDuration are how often, and how long in all,
	// requests waited for a connection.
	WaitCount    int64
	WaitDuration time.Duration
}
