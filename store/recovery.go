package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
)

// Password reset links and email changes (migration 23, docs/accounts.md
// "Recovery").

const resetColumns = `id, user_id, email, token_hash, status, created_at, expires_at, used_at`

func scanReset(row rowScanner) (*payd.PasswordReset, error) {
	var p payd.PasswordReset
	var status string
	var created, expires int64
	var used sql.NullInt64
	if err := row.Scan(&p.ID, &p.UserID, &p.Email, &p.TokenHash, &status, &created, &expires, &used); err != nil {
		return nil, err
	}
	p.Status, p.UsedAt = payd.PasswordResetStatus(status), fromNullMicros(used)
	p.CreatedAt, p.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &p, nil
}

// CreatePasswordReset stores a reset link, replacing the user's pending ones.
func (q *queries) CreatePasswordReset(ctx context.Context, p *payd.PasswordReset) (err error) {
	defer fail(&err, "password reset", "store.CreatePasswordReset(%s)", p.ID)
	if _, err = q.ex.ExecContext(ctx, `UPDATE password_resets SET status = $2 WHERE user_id = $1 AND status = $3`,
		p.UserID, string(payd.ResetReplaced), string(payd.ResetPending)); err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `INSERT INTO password_resets (`+resetColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.ID, p.UserID, p.Email, p.TokenHash, string(p.Status),
		micros(p.CreatedAt), micros(p.ExpiresAt), nullMicros(p.UsedAt))
	return err
}

// PasswordResetByToken returns the link with this token hash; not_found otherwise.
func (q *queries) PasswordResetByToken(ctx context.Context, hash string) (_ *payd.PasswordReset, err error) {
	defer fail(&err, "password reset", "store.PasswordResetByToken")
	return scanReset(q.ex.QueryRowContext(ctx, `SELECT `+resetColumns+` FROM password_resets WHERE token_hash = $1`, hash))
}

// UsePasswordReset marks a pending link used in one statement, so a link
// works once even with replicas racing for it; conflict otherwise.
func (q *queries) UsePasswordReset(ctx context.Context, id string, now time.Time) (err error) {
	defer fail(&err, "password reset", "store.UsePasswordReset(%s)", id)
	err = affected(q.ex.ExecContext(ctx, `UPDATE password_resets SET status = $2, used_at = $3
		WHERE id = $1 AND status = $4`, id, string(payd.ResetUsed), micros(now), string(payd.ResetPending)))
	if err == sql.ErrNoRows {
		return payd.Errorf(payd.ErrConflict, "password reset %s is no longer pending", id)
	}
	return err
}

const changeColumns = `id, user_id, old_email, new_email, code_hash, code_sent_at, codes_sent, status,
	undo_hash, version, created_at, expires_at, done_at, undo_expires_at, session_started_at`

func scanChange(row rowScanner) (*payd.EmailChange, error) {
	var c payd.EmailChange
	var status string
	var undo sql.NullString
	var sent, created, expires, sessionStarted int64
	var done, undoExpires sql.NullInt64
	if err := row.Scan(&c.ID, &c.UserID, &c.OldEmail, &c.NewEmail, &c.CodeHash, &sent, &c.CodesSent,
		&status, &undo, &c.Version, &created, &expires, &done, &undoExpires, &sessionStarted); err != nil {
		return nil, err
	}
	c.SessionStartedAt = fromMicros(sessionStarted)
	c.Status, c.UndoHash = payd.EmailChangeStatus(status), undo.String
	c.CodeSentAt, c.CreatedAt, c.ExpiresAt = fromMicros(sent), fromMicros(created), fromMicros(expires)
	c.DoneAt, c.UndoExpiresAt = fromNullMicros(done), fromNullMicros(undoExpires)
	return &c, nil
}

// CreateEmailChange stores an email change, replacing the user's pending ones.
func (q *queries) CreateEmailChange(ctx context.Context, c *payd.EmailChange) (err error) {
	defer fail(&err, "email change", "store.CreateEmailChange(%s)", c.ID)
	if _, err = q.ex.ExecContext(ctx, `UPDATE email_changes SET status = $2, version = version + 1
		WHERE user_id = $1 AND status = $3`, c.UserID, string(payd.EmailChangeReplaced), string(payd.EmailChangePending)); err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `INSERT INTO email_changes (`+changeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		c.ID, c.UserID, c.OldEmail, c.NewEmail, c.CodeHash, micros(c.CodeSentAt), c.CodesSent,
		string(c.Status), nullString(c.UndoHash), c.Version, micros(c.CreatedAt), micros(c.ExpiresAt),
		nullMicros(c.DoneAt), nullMicros(c.UndoExpiresAt), micros(c.SessionStartedAt))
	return err
}

// EndEmailChanges marks the user's pending and done changes replaced,
// which voids the undo links of the done ones.
func (q *queries) EndEmailChanges(ctx context.Context, userID string) (err error) {
	defer fail(&err, "email change", "store.EndEmailChanges(%s)", userID)
	_, err = q.ex.ExecContext(ctx, `UPDATE email_changes SET status = $2, version = version + 1
		WHERE user_id = $1 AND status IN ($3, $4)`, userID, string(payd.EmailChangeReplaced),
		string(payd.EmailChangePending), string(payd.EmailChangeDone))
	return err
}

// PendingEmailChange returns the user's newest pending change; not_found otherwise.
func (q *queries) PendingEmailChange(ctx context.Context, userID string) (_ *payd.EmailChange, err error) {
	defer fail(&err, "email change", "store.PendingEmailChange(%s)", userID)
	return scanChange(q.ex.QueryRowContext(ctx, `SELECT `+changeColumns+` FROM email_changes
		WHERE user_id = $1 AND status = $2 ORDER BY created_at DESC, id DESC LIMIT 1`,
		userID, string(payd.EmailChangePending)))
}

// EmailChangeByUndo returns the change with this undo token hash; not_found otherwise.
func (q *queries) EmailChangeByUndo(ctx context.Context, hash string) (_ *payd.EmailChange, err error) {
	defer fail(&err, "email change", "store.EmailChangeByUndo")
	return scanChange(q.ex.QueryRowContext(ctx, `SELECT `+changeColumns+` FROM email_changes WHERE undo_hash = $1`, hash))
}

// SaveEmailChange writes c at its version; conflict otherwise.
func (q *queries) SaveEmailChange(ctx context.Context, c *payd.EmailChange) (err error) {
	defer fail(&err, "email change", "store.SaveEmailChange(%s)", c.ID)
	err = affected(q.ex.ExecContext(ctx, `UPDATE email_changes SET code_hash = $3, code_sent_at = $4,
			codes_sent = $5, status = $6, undo_hash = $7, done_at = $8, undo_expires_at = $9,
			version = version + 1
		WHERE id = $1 AND version = $2`, c.ID, c.Version, c.CodeHash, micros(c.CodeSentAt), c.CodesSent,
		string(c.Status), nullString(c.UndoHash), nullMicros(c.DoneAt), nullMicros(c.UndoExpiresAt)))
	if err == sql.ErrNoRows {
		return payd.Errorf(payd.ErrConflict, "email change %s was changed meanwhile; retry", c.ID)
	}
	if err == nil {
		c.Version++
	}
	return err
}

// CountEmailChanges counts the user's changes started and finished since then.
func (q *queries) CountEmailChanges(ctx context.Context, userID string, since time.Time) (started, alerted int, err error) {
	defer fail(&err, "email change", "store.CountEmailChanges(%s)", userID)
	err = q.ex.QueryRowContext(ctx, `SELECT
			COALESCE(SUM(CASE WHEN created_at >= $2 THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN done_at >= $2 THEN 1 ELSE 0 END), 0)
		FROM email_changes WHERE user_id = $1 AND (created_at >= $2 OR done_at >= $2)`,
		userID, micros(since)).Scan(&started, &alerted)
	return started, alerted, err
}

// ClearDeviceAttempts deletes the user's per-browser counts, the subjects
// pwdev:USER:HASH (api's passwordLockOf). The prefix is compared with
// substr, not LIKE, whose wildcards include the ids' underscore.
func (q *queries) ClearDeviceAttempts(ctx context.Context, userID string) (err error) {
	defer fail(&err, "attempt", "store.ClearDeviceAttempts(%s)", userID)
	prefix := "pwdev:" + userID + ":"
	_, err = q.ex.ExecContext(ctx, `DELETE FROM attempts WHERE substr(subject, 1, $2) = $1`, prefix, len(prefix))
	return err
}

// ClearDeviceAttempts: see payd.RecoveryStore.
func (db *DB) ClearDeviceAttempts(ctx context.Context, userID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.ClearDeviceAttempts(ctx, userID) })
}

// CreatePasswordReset: see payd.RecoveryStore.
func (db *DB) CreatePasswordReset(ctx context.Context, p *payd.PasswordReset) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreatePasswordReset(ctx, p) })
}

// PasswordResetByToken: see payd.RecoveryStore.
func (db *DB) PasswordResetByToken(ctx context.Context, hash string) (*payd.PasswordReset, error) {
	return db.reader(ctx).PasswordResetByToken(ctx, hash)
}

// UsePasswordReset: see payd.RecoveryStore.
func (db *DB) UsePasswordReset(ctx context.Context, id string, now time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.UsePasswordReset(ctx, id, now) })
}

// CreateEmailChange: see payd.RecoveryStore.
func (db *DB) CreateEmailChange(ctx context.Context, c *payd.EmailChange) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateEmailChange(ctx, c) })
}

// EndEmailChanges: see payd.RecoveryStore.
func (db *DB) EndEmailChanges(ctx context.Context, userID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.EndEmailChanges(ctx, userID) })
}

// PendingEmailChange: see payd.RecoveryStore.
func (db *DB) PendingEmailChange(ctx context.Context, userID string) (*payd.EmailChange, error) {
	return db.reader(ctx).PendingEmailChange(ctx, userID)
}

// EmailChangeByUndo: see payd.RecoveryStore.
func (db *DB) EmailChangeByUndo(ctx context.Context, hash string) (*payd.EmailChange, error) {
	return db.reader(ctx).EmailChangeByUndo(ctx, hash)
}

// SaveEmailChange: see payd.RecoveryStore.
func (db *DB) SaveEmailChange(ctx context.Context, c *payd.EmailChange) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveEmailChange(ctx, c) })
}

// CountEmailChanges: see payd.RecoveryStore.
func (db *DB) CountEmailChanges(ctx context.Context, userID string, since time.Time) (started, alerted int, err error) {
	return db.reader(ctx).CountEmailChanges(ctx, userID, since)
}
