// Package payd is the domain of payd, a self-hosted payment acceptance
// service: the nouns a business works with (Business, APIKey, Payment,
// Checkout, Link, Customer, Wallet, WebhookEndpoint, Event), their rules as
// plain methods that take the time as an argument (p.Cancel(now),
// c.Expire(now)), the errors of the specification (Error and its codes),
// and the small interfaces the adapters implement: Store and Queries for
// the database (store.go), Network for a chain, and the rate sources.
//
// A state change has one owner: SavePayment writes a payment's row, its
// history entries, the stats it moves and its outbox events in the caller's
// transaction, and every caller (API handler, chain watcher, expiry) goes
// through it. The package imports only the standard library, money and
// clock; adapters (api, web, store, webhook, watch, rate, chain/…) import it
// and never each other, and cmd/payd wires them together (arch_test.go keeps
// these rules). docs/architecture.md has the map.
package payd
