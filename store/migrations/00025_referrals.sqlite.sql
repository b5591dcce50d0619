-- Referral codes (docs/accounts.md "Referrals"): every business has its
-- own code to share (referral_code: 8 characters of
-- 23456789ABCDEFGHJKMNPQRSTVWXYZ, no 0/O, 1/I/L or U), and may name the
-- business whose code referred it (referred_by: that business's id, ''
-- for none) until it has a wallet. The .postgres.sql of this number is the
-- same but for how a random character is drawn for the businesses that
-- exist already; new ones get theirs from payd.NewReferralCode.

-- +goose Up
ALTER TABLE businesses ADD COLUMN referral_code TEXT NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN referred_by TEXT NOT NULL DEFAULT '';
UPDATE businesses SET referral_code =
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1) ||
    substr('23456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + abs(random() % 30), 1);
CREATE UNIQUE INDEX businesses_referral_code ON businesses (referral_code);

-- +goose Down
DROP INDEX businesses_referral_code;
ALTER TABLE businesses DROP COLUMN referred_by;
ALTER TABLE businesses DROP COLUMN referral_code;
