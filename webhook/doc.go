// Package webhook signs webhook events and sends them to the endpoints
// businesses register, following sections 6.2, 6.3 and 8.1 of the spec.
//
// Signing follows Standard Webhooks (the webhook-id, webhook-timestamp and
// webhook-signature headers), because receivers then verify payd's
// deliveries with an off-the-shelf library instead of code we would have to
// document and support. The signature covers the exact bytes that are sent,
// so callers sign the compact body once and send those same bytes.
//
// Sending is the one place payd connects to an address chosen by a
// customer of the service, so it is built to be safe against server-side
// request forgery: outside development every connection is checked at
// connect time against the table of forbidden address ranges that the
// endpoint's URL was checked against when it was saved
// (payd.ForbiddenAddress: loopback, private, link-local, carrier-grade
// NAT, multicast, cloud metadata, IPv6 forms that embed a forbidden IPv4
// address, and reserved ranges), the
// address checked is the address dialled (so DNS rebinding fails),
// redirects are never followed, the response read is capped and proxies
// come only from configuration, never from the environment.
//
// The retry schedule of 6.3 lives here too, as pure arithmetic on times,
// so the delivery loop (which owns the rows and the clock) stays small.
// docs/webhook-delivery.md records the decisions.
package webhook
