-- The card rail (docs/card.md): a card checkout's attempts (routes) with
-- its provider. The checkout keeps its quote and deposit as a crypto one
-- does (the coin the provider delivers, which the watcher follows); the
-- provider's side is JSON text, with the columns lookups filter on copied
-- out: the provider and session a webhook names, and the status that says
-- whether the poller still asks the provider.

-- +goose Up
ALTER TABLE checkouts ADD COLUMN card TEXT;
ALTER TABLE checkouts ADD COLUMN card_provider TEXT;
ALTER TABLE checkouts ADD COLUMN card_session TEXT;
ALTER TABLE checkouts ADD COLUMN card_status TEXT;
-- A provider session belongs to one checkout.
CREATE UNIQUE INDEX checkouts_card_session ON checkouts (card_provider, card_session) WHERE card_session IS NOT NULL;
-- PolledCardCheckouts: routes the provider may still move, of checkouts
-- still open or processing, in id order: an abandoned session leaves the
-- index when its checkout ends.
CREATE INDEX checkouts_card_polled ON checkouts (id)
    WHERE card_status IN ('awaiting_payment', 'challenge', 'processing') AND status IN ('open', 'processing');

-- +goose Down
DROP INDEX checkouts_card_polled;
DROP INDEX checkouts_card_session;
ALTER TABLE checkouts DROP COLUMN card_status;
ALTER TABLE checkouts DROP COLUMN card_session;
ALTER TABLE checkouts DROP COLUMN card_provider;
ALTER TABLE checkouts DROP COLUMN card;
