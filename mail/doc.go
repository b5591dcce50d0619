// Package mail sends payd's emails from the outbox (DESIGN §7,
// docs/email.md). A change that needs an email (a sign-up, a reset)
// stores it with payd.NewEmail and CreateEmail in its own transaction, so
// a committed change always gets its email; the Outbox loop here claims
// due emails with a lease, as the webhook delivery loop claims deliveries,
// sends them through a Sender and records the outcome, retrying on the
// schedule of NextAttempt until MaxAttempts.
//
// SMTPSender is the real sender, configured from --smtp
// (smtp://USER:PASS@HOST:PORT or smtps://…, ParseSMTPURL) and --mail-from.
// Without a sender (--dev) the outbox keeps emails for GET /devnet/emails
// instead of sending them.
package mail
