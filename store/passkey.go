package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"payd"
)

// Passkeys and WebAuthn ceremony state (docs/passkeys.md). Bytes are kept as
// text, the subset both databases share: credential ids and public keys as
// unpadded base64url, the AAGUID as hex, transports comma-separated.

// passkeyColumns are read by every passkey query, in scanPasskey's order.
const passkeyColumns = `id, user_id, credential_id, public_key, aaguid, sign_count, transports,
	backup_eligible, backup_state, name, created_at, last_used_at`

// b64 is how credential ids and public keys are stored.
var b64 = base64.RawURLEncoding

// scanPasskey reads one row of passkeyColumns.
func scanPasskey(row rowScanner) (*payd.Passkey, error) {
	var p payd.Passkey
	var credID, publicKey, aaguid, transports string
	var signCount, created int64
	var lastUsed sql.NullInt64
	err := row.Scan(&p.ID, &p.UserID, &credID, &publicKey, &aaguid, &signCount, &transports,
		&p.BackupEligible, &p.BackupState, &p.Name, &created, &lastUsed)
	if err != nil {
		return nil, err
	}
	if p.CredentialID, err = b64.DecodeString(credID); err != nil {
		return nil, fmt.Errorf("passkey %s: stored credential id: %w", p.ID, err)
	}
	if p.PublicKey, err = b64.DecodeString(publicKey); err != nil {
		return nil, fmt.Errorf("passkey %s: stored public key: %w", p.ID, err)
	}
	if p.AAGUID, err = hex.DecodeString(aaguid); err != nil {
		return nil, fmt.Errorf("passkey %s: stored aaguid: %w", p.ID, err)
	}
	if signCount < 0 || signCount > 1<<32-1 {
		return nil, fmt.Errorf("passkey %s: stored sign count %d out of range", p.ID, signCount)
	}
	p.SignCount = uint32(signCount)
	if transports != "" {
		p.Transports = strings.Split(transports, ",")
	}
	p.CreatedAt, p.LastUsedAt = fromMicros(created), fromNullMicros(lastUsed)
	return &p, nil
}

// CreatePasskey stores a new passkey; see payd.PasskeyStore.
func (q *queries) CreatePasskey(ctx context.Context, p *payd.Passkey) (err error) {
	defer fail(&err, "passkey", "store.CreatePasskey(%s)", p.ID)
	for _, t := range p.Transports {
		if t == "" || strings.Contains(t, ",") {
			return fmt.Errorf("transport %q cannot be stored", t)
		}
	}
	_, err = q.ex.ExecContext(ctx, `INSERT INTO passkeys (id, user_id, credential_id, public_key, aaguid,
			sign_count, transports, backup_eligible, backup_state, name, created_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		p.ID, p.UserID, b64.EncodeToString(p.CredentialID), b64.EncodeToString(p.PublicKey),
		hex.EncodeToString(p.AAGUID), int64(p.SignCount), strings.Join(p.Transports, ","),
		p.BackupEligible, p.BackupState, p.Name, micros(p.CreatedAt), nullMicros(p.LastUsedAt))
	return err
}

// PasskeyByCredentialID returns the passkey with this credential id.
func (q *queries) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (_ *payd.Passkey, err error) {
	defer fail(&err, "passkey", "store.PasskeyByCredentialID")
	return scanPasskey(q.ex.QueryRowContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys
		WHERE credential_id = $1`, b64.EncodeToString(credentialID)))
}

// PasskeysByUser returns the user's passkeys, oldest first.
func (q *queries) PasskeysByUser(ctx context.Context, userID string) (_ []*payd.Passkey, err error) {
	defer fail(&err, "passkey", "store.PasskeysByUser(%s)", userID)
	return queryAll(ctx, q.ex, scanPasskey, `SELECT `+passkeyColumns+` FROM passkeys
		WHERE user_id = $1 ORDER BY created_at, id`, userID)
}

// CountPasskeys returns how many passkeys the user holds.
func (q *queries) CountPasskeys(ctx context.Context, userID string) (n int, err error) {
	defer fail(&err, "passkey", "store.CountPasskeys(%s)", userID)
	err = q.ex.QueryRowContext(ctx, `SELECT COUNT(*) FROM passkeys WHERE user_id = $1`, userID).Scan(&n)
	return n, err
}

// UpdatePasskeyUse records a verified use of the passkey.
func (q *queries) UpdatePasskeyUse(ctx context.Context, id string, signCount uint32, backupState bool, lastUsedAt time.Time) (err error) {
	defer fail(&err, "passkey", "store.UpdatePasskeyUse(%s)", id)
	return affected(q.ex.ExecContext(ctx, `UPDATE passkeys SET sign_count = $2, backup_state = $3, last_used_at = $4
		WHERE id = $1`, id, int64(signCount), backupState, micros(lastUsedAt)))
}

// RenamePasskey sets the name of the user's passkey.
func (q *queries) RenamePasskey(ctx context.Context, userID, id, name string) (err error) {
	defer fail(&err, "passkey", "store.RenamePasskey(%s)", id)
	return affected(q.ex.ExecContext(ctx, `UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2`,
		id, userID, name))
}

// DeletePasskey removes the user's passkey.
func (q *queries) DeletePasskey(ctx context.Context, userID, id string) (err error) {
	defer fail(&err, "passkey", "store.DeletePasskey(%s)", id)
	return affected(q.ex.ExecContext(ctx, `DELETE FROM passkeys WHERE id = $1 AND user_id = $2`, id, userID))
}

// CreateWebAuthnChallenge stores a started ceremony by its challenge's hash.
func (q *queries) CreateWebAuthnChallenge(ctx context.Context, c *payd.WebAuthnChallenge) (err error) {
	defer fail(&err, "webauthn challenge", "store.CreateWebAuthnChallenge()")
	_, err = q.ex.ExecContext(ctx, `INSERT INTO webauthn_challenges (hash, state, user_id, purpose, binding,
			created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.Hash, string(c.State), c.UserID, string(c.Purpose), c.Binding,
		micros(c.CreatedAt), micros(c.ExpiresAt))
	return err
}

// TakeWebAuthnChallenge deletes the ceremony with this hash and returns it.
// The DELETE … RETURNING is one statement, so of two concurrent takes only
// one sees the row; whether it may finish the ceremony (purpose, binding,
// expiry) is the caller's to decide with WebAuthnChallenge.Check.
func (q *queries) TakeWebAuthnChallenge(ctx context.Context, hash string) (_ *payd.WebAuthnChallenge, err error) {
	defer fail(&err, "webauthn challenge", "store.TakeWebAuthnChallenge()")
	var c payd.WebAuthnChallenge
	var state, purpose string
	var created, expires int64
	err = q.ex.QueryRowContext(ctx, `DELETE FROM webauthn_challenges WHERE hash = $1
		RETURNING hash, state, user_id, purpose, binding, created_at, expires_at`, hash).
		Scan(&c.Hash, &state, &c.UserID, &purpose, &c.Binding, &created, &expires)
	if err != nil {
		return nil, err
	}
	c.State, c.Purpose = []byte(state), payd.WebAuthnPurpose(purpose)
	c.CreatedAt, c.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &c, nil
}

// DeleteExpiredWebAuthnChallenges removes the ceremonies expired at or before now.
func (q *queries) DeleteExpiredWebAuthnChallenges(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "webauthn challenge", "store.DeleteExpiredWebAuthnChallenges()")
	return count(q.ex.ExecContext(ctx, `DELETE FROM webauthn_challenges WHERE expires_at <= $1`, micros(now)))
}

// CreatePasskey stores a new passkey, in ctx's transaction when it carries one.
func (db *DB) CreatePasskey(ctx context.Context, p *payd.Passkey) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreatePasskey(ctx, p) })
}

// PasskeyByCredentialID returns the passkey with this credential id.
func (db *DB) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*payd.Passkey, error) {
	return db.reader(ctx).PasskeyByCredentialID(ctx, credentialID)
}

// PasskeysByUser returns the user's passkeys, oldest first.
func (db *DB) PasskeysByUser(ctx context.Context, userID string) ([]*payd.Passkey, error) {
	return db.reader(ctx).PasskeysByUser(ctx, userID)
}

// CountPasskeys returns how many passkeys the user holds.
func (db *DB) CountPasskeys(ctx context.Context, userID string) (int, error) {
	return db.reader(ctx).CountPasskeys(ctx, userID)
}

// UpdatePasskeyUse records a verified use of the passkey.
func (db *DB) UpdatePasskeyUse(ctx context.Context, id string, signCount uint32, backupState bool, lastUsedAt time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error {
		return q.UpdatePasskeyUse(ctx, id, signCount, backupState, lastUsedAt)
	})
}

// RenamePasskey sets the name of the user's passkey.
func (db *DB) RenamePasskey(ctx context.Context, userID, id, name string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.RenamePasskey(ctx, userID, id, name) })
}

// DeletePasskey removes the user's passkey.
func (db *DB) DeletePasskey(ctx context.Context, userID, id string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.DeletePasskey(ctx, userID, id) })
}

// CreateWebAuthnChallenge stores a started ceremony by its challenge's hash.
func (db *DB) CreateWebAuthnChallenge(ctx context.Context, c *payd.WebAuthnChallenge) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateWebAuthnChallenge(ctx, c) })
}

// TakeWebAuthnChallenge removes the ceremony with this hash and returns it;
// of two concurrent takes, on any replicas, one wins and the other gets
// not_found.
func (db *DB) TakeWebAuthnChallenge(ctx context.Context, hash string) (c *payd.WebAuthnChallenge, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		c, err = q.TakeWebAuthnChallenge(ctx, hash)
		return err
	})
	return c, err
}

// DeleteExpiredWebAuthnChallenges removes the ceremonies expired at or before now.
func (db *DB) DeleteExpiredWebAuthnChallenges(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredWebAuthnChallenges(ctx, now)
		return err
	})
	return n, err
}
