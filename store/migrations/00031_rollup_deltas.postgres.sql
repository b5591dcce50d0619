-- No hot rows on the write path (docs/storage.md, "Rollups without hot
-- rows"). The payment_days rollup and the customers' and links' stats were
-- updated in place in the transaction of every payment change, so that
-- row stayed locked until commit and one business's (one link's, one
-- customer's) payments were written one at a time on PostgreSQL. Now a
-- change appends its delta, which locks nothing another request needs;
-- readers add the deltas not yet folded, and the rollup folder
-- (store.Folder) moves them into the rollup rows in the background. The
-- SQLite twin has the same tables; only the trigger language differs.

-- +goose Up
CREATE TABLE payment_day_deltas (
    business_id TEXT   NOT NULL,
    day         BIGINT NOT NULL,
    status      TEXT   NOT NULL,
    rail        TEXT   NOT NULL,
    payments    BIGINT NOT NULL,
    amount_usd  BIGINT NOT NULL,
    fee_usd     BIGINT NOT NULL
);
CREATE INDEX payment_day_deltas_business ON payment_day_deltas (business_id, day);

-- kind is 'customer' or 'link'; the columns add to the row's stats (a
-- link's only payments and volume_usd), last_payment_at moves it forward.
CREATE TABLE stats_deltas (
    business_id     TEXT   NOT NULL,
    kind            TEXT   NOT NULL,
    id              TEXT   NOT NULL,
    payments        BIGINT NOT NULL,
    succeeded       BIGINT NOT NULL,
    volume_usd      BIGINT NOT NULL,
    crypto          BIGINT NOT NULL,
    card            BIGINT NOT NULL,
    last_payment_at BIGINT
);
CREATE INDEX stats_deltas_item ON stats_deltas (business_id, kind, id);

-- Receive indexes handed out ahead, for checkouts to claim with SKIP
-- LOCKED instead of queueing on wallet_keys.next_index until commit
-- (PostgreSQL only: SQLite's single writer takes the counter directly).
-- A claim that rolls back puts its index back, so no index is skipped.
CREATE TABLE address_pool (
    wallet_id TEXT   NOT NULL,
    network   TEXT   NOT NULL,
    idx       BIGINT NOT NULL,
    PRIMARY KEY (wallet_id, network, idx),
    FOREIGN KEY (wallet_id, network) REFERENCES wallet_keys (wallet_id, network) ON DELETE CASCADE
);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION payment_days_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO payment_day_deltas (business_id, day, status, rail, payments, amount_usd, fee_usd)
        VALUES (OLD.business_id, OLD.created_at / 86400000000, OLD.status, COALESCE(OLD.rail, ''),
                -1, -OLD.usd_amount, -COALESCE(OLD.usd_fee, 0));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO payment_day_deltas (business_id, day, status, rail, payments, amount_usd, fee_usd)
        VALUES (NEW.business_id, NEW.created_at / 86400000000, NEW.status, COALESCE(NEW.rail, ''),
                1, NEW.usd_amount, COALESCE(NEW.usd_fee, 0));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION payment_days_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE payment_days SET
            payments = payments - 1,
            amount_usd = amount_usd - OLD.usd_amount,
            fee_usd = fee_usd - COALESCE(OLD.usd_fee, 0)
        WHERE business_id = OLD.business_id AND day = OLD.created_at / 86400000000
          AND status = OLD.status AND rail = COALESCE(OLD.rail, '');
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO payment_days (business_id, day, status, rail, payments, amount_usd, fee_usd)
        VALUES (NEW.business_id, NEW.created_at / 86400000000, NEW.status, COALESCE(NEW.rail, ''),
                1, NEW.usd_amount, COALESCE(NEW.usd_fee, 0))
        ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
            payments = payment_days.payments + 1,
            amount_usd = payment_days.amount_usd + excluded.amount_usd,
            fee_usd = payment_days.fee_usd + excluded.fee_usd;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
INSERT INTO payment_days (business_id, day, status, rail, payments, amount_usd, fee_usd)
SELECT business_id, day, status, rail, SUM(payments), SUM(amount_usd), SUM(fee_usd)
FROM payment_day_deltas GROUP BY business_id, day, status, rail
ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
    payments = payment_days.payments + excluded.payments,
    amount_usd = payment_days.amount_usd + excluded.amount_usd,
    fee_usd = payment_days.fee_usd + excluded.fee_usd;
UPDATE customers SET payments_count = payments_count + d.payments, succeeded_count = succeeded_count + d.succeeded,
    volume_usd = customers.volume_usd + d.volume_usd, crypto_count = crypto_count + d.crypto, card_count = card_count + d.card,
    last_payment_at = GREATEST(last_payment_at, d.last_payment_at)
FROM (SELECT id, SUM(payments) AS payments, SUM(succeeded) AS succeeded, SUM(volume_usd) AS volume_usd,
             SUM(crypto) AS crypto, SUM(card) AS card, MAX(last_payment_at) AS last_payment_at
      FROM stats_deltas WHERE kind = 'customer' GROUP BY id) d
WHERE customers.id = d.id;
UPDATE links SET payments_count = payments_count + d.payments, volume_usd = links.volume_usd + d.volume_usd
FROM (SELECT id, SUM(payments) AS payments, SUM(volume_usd) AS volume_usd
      FROM stats_deltas WHERE kind = 'link' GROUP BY id) d
WHERE links.id = d.id;
DROP TABLE address_pool;
DROP TABLE stats_deltas;
DROP TABLE payment_day_deltas;
