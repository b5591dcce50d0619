-- Indexes for GET /payments and the payment_days rollup behind GET /metrics
-- and unfiltered status_counts (docs/listing.md). The PostgreSQL twin has the
-- same indexes and table; only the trigger language differs.
--
-- Every listing filter has an index that starts (business_id, filter) and
-- ends in the sort key, so a first page and a deep keyset page are both one
-- index range scan that stops after limit+1 rows. Columns that stay NULL
-- until a customer pays (rail) or are often unset (customer_id, link_id)
-- get partial indexes: "col = $N" implies NOT NULL on both databases.

-- +goose Up
CREATE INDEX payments_status ON payments (business_id, status, created_at, id);
CREATE INDEX payments_amount ON payments (business_id, amount, id);
CREATE INDEX payments_customer ON payments (business_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL;
CREATE INDEX payments_link ON payments (business_id, link_id, created_at, id) WHERE link_id IS NOT NULL;
CREATE INDEX payments_rail ON payments (business_id, rail, created_at, id) WHERE rail IS NOT NULL;
-- Replaces payment_metadata_value (a prefix of it, so nothing that used it
-- loses): with payment_id last, a metadata[key]=value filter is a keyset
-- range scan in the list's own order (created_at, id), driven from here.
DROP INDEX payment_metadata_value;
CREATE INDEX payment_metadata_list ON payment_metadata (business_id, key, value, created_at, payment_id);

-- One row per business, UTC day of created_at (days since 1970-01-01),
-- status and rail ('' until chosen), kept by the triggers below in the
-- transaction that writes the payment, whoever writes it.
CREATE TABLE payment_days (
    business_id TEXT   NOT NULL,
    day         BIGINT NOT NULL,
    status      TEXT   NOT NULL,
    rail        TEXT   NOT NULL,
    payments    BIGINT NOT NULL,
    -- sums of usd_amount and usd_fee (NULL counts as 0), US cents
    amount_usd  BIGINT NOT NULL,
    fee_usd     BIGINT NOT NULL,
    PRIMARY KEY (business_id, day, status, rail)
);

INSERT INTO payment_days (business_id, day, status, rail, payments, amount_usd, fee_usd)
SELECT business_id, created_at / 86400000000, status, COALESCE(rail, ''),
       COUNT(*), SUM(usd_amount), SUM(COALESCE(usd_fee, 0))
FROM payments GROUP BY 1, 2, 3, 4;

-- +goose StatementBegin
CREATE TRIGGER payment_days_insert AFTER INSERT ON payments BEGIN
    INSERT INTO payment_days (business_id, day, status, rail, payments, amount_usd, fee_usd)
    VALUES (NEW.business_id, NEW.created_at / 86400000000, NEW.status, COALESCE(NEW.rail, ''),
            1, NEW.usd_amount, COALESCE(NEW.usd_fee, 0))
    ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
        payments = payments + 1,
        amount_usd = amount_usd + excluded.amount_usd,
        fee_usd = fee_usd + excluded.fee_usd;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER payment_days_update AFTER UPDATE ON payments
WHEN OLD.status IS NOT NEW.status OR OLD.rail IS NOT NEW.rail OR OLD.usd_amount IS NOT NEW.usd_amount
  OR OLD.usd_fee IS NOT NEW.usd_fee OR OLD.created_at IS NOT NEW.created_at OR OLD.business_id IS NOT NEW.business_id
BEGIN
    UPDATE payment_days SET
        payments = payments - 1,
        amount_usd = amount_usd - OLD.usd_amount,
        fee_usd = fee_usd - COALESCE(OLD.usd_fee, 0)
    WHERE business_id = OLD.business_id AND day = OLD.created_at / 86400000000
      AND status = OLD.status AND rail = COALESCE(OLD.rail, '');
    INSERT INTO payment_days (business_id, day, status, rail, payments, amount_usd, fee_usd)
    VALUES (NEW.business_id, NEW.created_at / 86400000000, NEW.status, COALESCE(NEW.rail, ''),
            1, NEW.usd_amount, COALESCE(NEW.usd_fee, 0))
    ON CONFLICT (business_id, day, status, rail) DO UPDATE SET
        payments = payments + 1,
        amount_usd = amount_usd + excluded.amount_usd,
        fee_usd = fee_usd + excluded.fee_usd;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER payment_days_delete AFTER DELETE ON payments BEGIN
    UPDATE payment_days SET
        payments = payments - 1,
        amount_usd = amount_usd - OLD.usd_amount,
        fee_usd = fee_usd - COALESCE(OLD.usd_fee, 0)
    WHERE business_id = OLD.business_id AND day = OLD.created_at / 86400000000
      AND status = OLD.status AND rail = COALESCE(OLD.rail, '');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER payment_days_delete;
DROP TRIGGER payment_days_update;
DROP TRIGGER payment_days_insert;
DROP TABLE payment_days;
CREATE INDEX payment_metadata_value ON payment_metadata (business_id, key, value, created_at);
DROP INDEX payment_metadata_list;
DROP INDEX payments_rail;
DROP INDEX payments_link;
DROP INDEX payments_customer;
DROP INDEX payments_amount;
DROP INDEX payments_status;
