-- Checkout branding (docs/payments.md "Checkout settings"): the name
-- customers see ('' for the business's own) and the checkout pages' accent
-- colour ('#rrggbb', '' for payd's own). The support
-- email stays in businesses.support_email. Shared by SQLite and PostgreSQL;
-- see 00001 for the column conventions.
--
-- checkout_logos holds each business's logo: a PNG or JPEG of at most
-- 256 KiB that payd decoded before keeping it, as base64 (one column type
-- for both databases), served at /static/logo/DIGEST.EXT (digest: the
-- first 32 hex digits of its SHA-256), so the address changes with the
-- image and can be cached for good.

-- +goose Up
ALTER TABLE checkout_settings ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE checkout_settings ADD COLUMN accent_color TEXT NOT NULL DEFAULT '';
CREATE TABLE checkout_logos (
    business_id  TEXT   NOT NULL PRIMARY KEY REFERENCES businesses (id),
    digest       TEXT   NOT NULL,
    content_type TEXT   NOT NULL,
    data         TEXT   NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX checkout_logos_digest ON checkout_logos (digest);

-- +goose Down
DROP TABLE checkout_logos;
ALTER TABLE checkout_settings DROP COLUMN accent_color;
ALTER TABLE checkout_settings DROP COLUMN display_name;
