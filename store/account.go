package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"payd"
)

// The accounts' tables (migration 20, docs/accounts.md).

const userColumns = `id, email, name, password_hash, password_disabled, reset_hold_until, totp_secret,
	totp_enabled_at, totp_last_step, recovery_codes, version, created_at, updated_at`

func scanUser(row rowScanner) (*payd.User, error) {
	var u payd.User
	var hold, enabled sql.NullInt64
	var codes string
	var created, updated int64
	if err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.PasswordDisabled, &hold, &u.TOTPSecret,
		&enabled, &u.TOTPLastStep, &codes, &u.Version, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(codes), &u.RecoveryCodes); err != nil {
		return nil, err
	}
	u.ResetHoldUntil, u.TOTPEnabledAt = fromNullMicros(hold), fromNullMicros(enabled)
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &u, nil
}

// recoveryJSON stores the recovery code hashes as a JSON array ("[]" for none).
func recoveryJSON(codes []string) string {
	if codes == nil {
		codes = []string{}
	}
	b, _ := json.Marshal(codes)
	return string(b)
}

// emailTaken turns the unique violation on users.email_key into email_taken.
func emailTaken(err error) error {
	if err != nil && isUniqueViolation(err) {
		return payd.Errorf(payd.ErrEmailTaken, "this email belongs to another account")
	}
	return err
}

// CreateUser stores a new user; email_taken when the address is taken.
func (q *queries) CreateUser(ctx context.Context, u *payd.User) (err error) {
	defer fail(&err, "user", "store.CreateUser(%s)", u.ID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO users (`+userColumns+`, email_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		u.ID, u.Email, u.Name, u.PasswordHash, u.PasswordDisabled, nullMicros(u.ResetHoldUntil), u.TOTPSecret,
		nullMicros(u.TOTPEnabledAt), u.TOTPLastStep, recoveryJSON(u.RecoveryCodes), u.Version,
		micros(u.CreatedAt), micros(u.UpdatedAt), payd.EmailKey(u.Email))
	return emailTaken(err)
}

// UserByID returns the user; not_found otherwise.
func (q *queries) UserByID(ctx context.Context, id string) (_ *payd.User, err error) {
	defer fail(&err, "user", "store.UserByID(%s)", id)
	return scanUser(q.ex.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// UserByEmail returns the user with the address in any case; not_found otherwise.
func (q *queries) UserByEmail(ctx context.Context, email string) (_ *payd.User, err error) {
	defer fail(&err, "user", "store.UserByEmail")
	return scanUser(q.ex.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = $1`,
		payd.EmailKey(email)))
}

// SaveUser writes u at its version.
func (q *queries) SaveUser(ctx context.Context, u *payd.User) (err error) {
	defer fail(&err, "user", "store.SaveUser(%s)", u.ID)
	err = affected(q.ex.ExecContext(ctx, `UPDATE users SET email = $3, email_key = $4, name = $5,
			password_hash = $6, password_disabled = $7, reset_hold_until = $8, totp_secret = $9,
			totp_enabled_at = $10, totp_last_step = $11, recovery_codes = $12, updated_at = $13,
			version = version + 1
		WHERE id = $1 AND version = $2`, u.ID, u.Version, u.Email, payd.EmailKey(u.Email), u.Name,
		u.PasswordHash, u.PasswordDisabled, nullMicros(u.ResetHoldUntil), u.TOTPSecret,
		nullMicros(u.TOTPEnabledAt), u.TOTPLastStep, recoveryJSON(u.RecoveryCodes), micros(u.UpdatedAt)))
	if err == sql.ErrNoRows {
		if _, err := q.UserByID(ctx, u.ID); err != nil {
			return err
		}
		return payd.Errorf(payd.ErrConflict, "user %s was changed meanwhile; retry", u.ID)
	}
	if err != nil {
		return emailTaken(err)
	}
	u.Version++
	return nil
}

const signupColumns = `id, email, name, password_hash, browser_hash, code_hash, code_sent_at, codes_sent,
	exists_already, status, version, created_at, expires_at`

func scanSignup(row rowScanner) (*payd.Signup, error) {
	var s payd.Signup
	var status string
	var sent, created, expires int64
	if err := row.Scan(&s.ID, &s.Email, &s.Name, &s.PasswordHash, &s.BrowserHash, &s.CodeHash, &sent,
		&s.CodesSent, &s.Exists, &status, &s.Version, &created, &expires); err != nil {
		return nil, err
	}
	s.Status = payd.SignupStatus(status)
	s.CodeSentAt, s.CreatedAt, s.ExpiresAt = fromMicros(sent), fromMicros(created), fromMicros(expires)
	return &s, nil
}

// CreateSignup stores a sign-up, replacing the address's pending ones.
func (q *queries) CreateSignup(ctx context.Context, s *payd.Signup) (err error) {
	defer fail(&err, "sign-up", "store.CreateSignup(%s)", s.ID)
	key := payd.EmailKey(s.Email)
	if _, err = q.ex.ExecContext(ctx, `UPDATE signups SET status = $2, version = version + 1
		WHERE email_key = $1 AND status = $3`, key, string(payd.SignupReplaced), string(payd.SignupPending)); err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `INSERT INTO signups (`+signupColumns+`, email_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		s.ID, s.Email, s.Name, s.PasswordHash, s.BrowserHash, s.CodeHash, micros(s.CodeSentAt), s.CodesSent,
		s.Exists, string(s.Status), s.Version, micros(s.CreatedAt), micros(s.ExpiresAt), key)
	return err
}

// PendingSignup returns the address's newest pending sign-up; not_found otherwise.
func (q *queries) PendingSignup(ctx context.Context, email string) (_ *payd.Signup, err error) {
	defer fail(&err, "sign-up", "store.PendingSignup")
	return scanSignup(q.ex.QueryRowContext(ctx, `SELECT `+signupColumns+` FROM signups
		WHERE email_key = $1 AND status = $2 ORDER BY created_at DESC, id DESC LIMIT 1`,
		payd.EmailKey(email), string(payd.SignupPending)))
}

// SaveSignup writes s at its version; conflict otherwise.
func (q *queries) SaveSignup(ctx context.Context, s *payd.Signup) (err error) {
	defer fail(&err, "sign-up", "store.SaveSignup(%s)", s.ID)
	err = affected(q.ex.ExecContext(ctx, `UPDATE signups SET code_hash = $3, code_sent_at = $4,
			codes_sent = $5, status = $6, version = version + 1
		WHERE id = $1 AND version = $2`, s.ID, s.Version, s.CodeHash, micros(s.CodeSentAt), s.CodesSent,
		string(s.Status)))
	if err == sql.ErrNoRows {
		return payd.Errorf(payd.ErrConflict, "sign-up %s was changed meanwhile; retry", s.ID)
	}
	if err == nil {
		s.Version++
	}
	return err
}

const sessionColumns = `id, token_hash, user_id, business_id, method, user_agent, ip, proof_at,
	totp_setup_secret, totp_setup_at, created_at, last_seen_at, expires_at`

func scanSession(row rowScanner) (*payd.Session, error) {
	var s payd.Session
	var proof, setup sql.NullInt64
	var created, seen, expires int64
	if err := row.Scan(&s.ID, &s.TokenHash, &s.UserID, &s.BusinessID, &s.Method, &s.UserAgent, &s.IP, &proof,
		&s.TOTPSetupSecret, &setup, &created, &seen, &expires); err != nil {
		return nil, err
	}
	s.ProofAt, s.TOTPSetupAt = fromNullMicros(proof), fromNullMicros(setup)
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return &s, nil
}

// CreateSession stores a session.
func (q *queries) CreateSession(ctx context.Context, s *payd.Session) (err error) {
	defer fail(&err, "session", "store.CreateSession(%s)", s.ID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		s.ID, s.TokenHash, s.UserID, s.BusinessID, s.Method, s.UserAgent, s.IP, nullMicros(s.ProofAt),
		s.TOTPSetupSecret, nullMicros(s.TOTPSetupAt), micros(s.CreatedAt), micros(s.LastSeenAt), micros(s.ExpiresAt))
	return err
}

// SessionByToken returns the session with this token hash; not_found otherwise.
func (q *queries) SessionByToken(ctx context.Context, hash string) (_ *payd.Session, err error) {
	defer fail(&err, "session", "store.SessionByToken")
	return scanSession(q.ex.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE token_hash = $1`, hash))
}

// SessionsByUser lists the user's sessions, newest first.
func (q *queries) SessionsByUser(ctx context.Context, userID string) (_ []*payd.Session, err error) {
	defer fail(&err, "session", "store.SessionsByUser(%s)", userID)
	return queryAll(ctx, q.ex, scanSession, `SELECT `+sessionColumns+` FROM sessions WHERE user_id = $1
		ORDER BY created_at DESC, id DESC`, userID)
}

// SaveSession writes the session's changeable fields.
func (q *queries) SaveSession(ctx context.Context, s *payd.Session) (err error) {
	defer fail(&err, "session", "store.SaveSession(%s)", s.ID)
	return affected(q.ex.ExecContext(ctx, `UPDATE sessions SET business_id = $2, proof_at = $3,
			totp_setup_secret = $4, totp_setup_at = $5, last_seen_at = $6
		WHERE id = $1`, s.ID, s.BusinessID, nullMicros(s.ProofAt), s.TOTPSetupSecret, nullMicros(s.TOTPSetupAt),
		micros(s.LastSeenAt)))
}

// TouchSession writes the session's last use and business only.
func (q *queries) TouchSession(ctx context.Context, id string, lastSeen time.Time, businessID string) (err error) {
	defer fail(&err, "session", "store.TouchSession(%s)", id)
	return affected(q.ex.ExecContext(ctx, `UPDATE sessions SET last_seen_at = $2, business_id = $3 WHERE id = $1`,
		id, micros(lastSeen), businessID))
}

// DeleteSession ends one of the user's sessions; not_found otherwise.
func (q *queries) DeleteSession(ctx context.Context, userID, id string) (err error) {
	defer fail(&err, "session", "store.DeleteSession(%s)", id)
	return affected(q.ex.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id = $2`, userID, id))
}

// DeleteSessions ends the user's sessions but keep.
func (q *queries) DeleteSessions(ctx context.Context, userID, keep string) (_ int, err error) {
	defer fail(&err, "session", "store.DeleteSessions(%s)", userID)
	return count(q.ex.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id <> $2`, userID, keep))
}

func scanMember(row rowScanner) (*payd.Membership, error) {
	var m payd.Membership
	var role string
	var created int64
	if err := row.Scan(&m.BusinessID, &m.UserID, &role, &created); err != nil {
		return nil, err
	}
	m.Role, m.CreatedAt = payd.MemberRole(role), fromMicros(created)
	return &m, nil
}

// AddMember adds a user to a business; conflict when already a member.
func (q *queries) AddMember(ctx context.Context, m *payd.Membership) (err error) {
	defer fail(&err, "membership", "store.AddMember(%s, %s)", m.BusinessID, m.UserID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO memberships (business_id, user_id, role, created_at)
		VALUES ($1, $2, $3, $4)`, m.BusinessID, m.UserID, string(m.Role), micros(m.CreatedAt))
	return err
}

// Member returns the user's membership of the business; not_found otherwise.
func (q *queries) Member(ctx context.Context, businessID, userID string) (_ *payd.Membership, err error) {
	defer fail(&err, "membership", "store.Member(%s, %s)", businessID, userID)
	return scanMember(q.ex.QueryRowContext(ctx, `SELECT business_id, user_id, role, created_at FROM memberships
		WHERE business_id = $1 AND user_id = $2`, businessID, userID))
}

// MembershipsByUser lists the user's memberships, oldest first.
func (q *queries) MembershipsByUser(ctx context.Context, userID string) (_ []*payd.Membership, err error) {
	defer fail(&err, "membership", "store.MembershipsByUser(%s)", userID)
	return queryAll(ctx, q.ex, scanMember, `SELECT business_id, user_id, role, created_at FROM memberships
		WHERE user_id = $1 ORDER BY created_at, business_id`, userID)
}

// RememberDevice records a browser that signed in to the user's account.
func (q *queries) RememberDevice(ctx context.Context, userID, deviceHash string, now time.Time) (err error) {
	defer fail(&err, "device", "store.RememberDevice(%s)", userID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO known_devices (user_id, device_hash, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, device_hash) DO NOTHING`, userID, deviceHash, micros(now))
	return err
}

// KnownDevice reports whether the browser signed in to the user's account before.
func (q *queries) KnownDevice(ctx context.Context, userID, deviceHash string) (ok bool, err error) {
	defer fail(&err, "device", "store.KnownDevice(%s)", userID)
	err = q.ex.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM known_devices WHERE user_id = $1 AND device_hash = $2)`,
		userID, deviceHash).Scan(&ok)
	return ok, err
}

// Attempt returns the subject's failure count at now, zero when none or
// kept past its end.
func (q *queries) Attempt(ctx context.Context, subject string, now time.Time) (_ *payd.Attempt, err error) {
	defer fail(&err, "attempt", "store.Attempt")
	a := payd.Attempt{Subject: subject}
	var locked sql.NullInt64
	err = q.ex.QueryRowContext(ctx, `SELECT failures, locked_until FROM attempts WHERE subject = $1 AND keep_until > $2`,
		subject, micros(now)).Scan(&a.Failures, &locked)
	if err == sql.ErrNoRows {
		return &a, nil
	}
	a.LockedUntil = fromNullMicros(locked)
	return &a, err
}

// TryAttempt reserves a try of the subject: the row is made if absent and
// read under a row lock in one statement (SQLite's one writer holds the
// whole database), so the count and the lock it starts are one decision
// no concurrent try or clear can slip between.
func (q *queries) TryAttempt(ctx context.Context, subject string, now, keepUntil time.Time, lock func(int) time.Duration) (_ *payd.Attempt, ok bool, err error) {
	defer fail(&err, "attempt", "store.TryAttempt")
	// One statement makes the row if absent and reads it under a row lock
	// (the no-op DO UPDATE locks it until the transaction ends): an INSERT
	// … DO NOTHING followed by a SELECT could lose the row to a
	// concurrent ClearAttempts in between.
	a := payd.Attempt{Subject: subject}
	var locked sql.NullInt64
	var keep int64
	if err = q.ex.QueryRowContext(ctx, `INSERT INTO attempts (subject, failures, locked_until, keep_until)
		VALUES ($1, 0, NULL, $2)
		ON CONFLICT (subject) DO UPDATE SET subject = excluded.subject
		RETURNING failures, locked_until, keep_until`, subject, micros(keepUntil)).Scan(&a.Failures, &locked, &keep); err != nil {
		return nil, false, err
	}
	a.LockedUntil = fromNullMicros(locked)
	if fromMicros(keep).After(now) {
		if a.Locked(now) > 0 {
			return &a, false, nil
		}
	} else {
		a.Failures, a.LockedUntil = 0, nil
	}
	a.Failures++
	if d := lock(a.Failures); d > 0 {
		until := now.Add(d)
		a.LockedUntil = &until
		if until.After(keepUntil) {
			keepUntil = until
		}
	}
	_, err = q.ex.ExecContext(ctx, `UPDATE attempts SET failures = $2, locked_until = $3, keep_until = $4 WHERE subject = $1`,
		subject, a.Failures, nullMicros(a.LockedUntil), micros(keepUntil))
	return &a, err == nil, err
}

// ClearAttempts forgets the subject's count.
func (q *queries) ClearAttempts(ctx context.Context, subject string) (err error) {
	defer fail(&err, "attempt", "store.ClearAttempts")
	_, err = q.ex.ExecContext(ctx, `DELETE FROM attempts WHERE subject = $1`, subject)
	return err
}

// DeleteExpiredAccountRows sweeps ended sessions, sign-ups, reset links
// and email changes a day past their end, and failure counts past their
// keep.
func (q *queries) DeleteExpiredAccountRows(ctx context.Context, now time.Time) (_ int, err error) {
	defer fail(&err, "account rows", "store.DeleteExpiredAccountRows")
	total := 0
	for _, del := range []struct {
		query string
		at    time.Time
	}{
		{`DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2`, now},
		{`DELETE FROM signups WHERE expires_at <= $1`, now.Add(-payd.VerificationTTL)},
		{`DELETE FROM attempts WHERE keep_until <= $1`, now},
		// Reset links and email changes a day past their last use: the
		// hour's counts of spec 8.3 never look that far back.
		{`DELETE FROM password_resets WHERE expires_at <= $1`, now.Add(-payd.VerificationTTL)},
		{`DELETE FROM email_changes WHERE COALESCE(undo_expires_at, expires_at) <= $1`, now.Add(-payd.VerificationTTL)},
	} {
		args := []any{micros(del.at)}
		if strings.Contains(del.query, "$2") {
			args = append(args, micros(now.Add(-payd.SessionIdle)))
		}
		n, err := count(q.ex.ExecContext(ctx, del.query, args...))
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// CountEmails counts the emails of the given kinds to the address since then.
func (q *queries) CountEmails(ctx context.Context, to string, kinds []string, since time.Time) (n int, err error) {
	defer fail(&err, "email", "store.CountEmails")
	b, _ := json.Marshal(kinds)
	var query string
	if q.dialect == "postgres" {
		query = `SELECT count(*) FROM emails WHERE recipient_key = $1 AND created_at >= $2
			AND kind IN (SELECT jsonb_array_elements_text($3::jsonb))`
	} else {
		query = `SELECT count(*) FROM emails WHERE recipient_key = $1 AND created_at >= $2
			AND kind IN (SELECT value FROM json_each($3))`
	}
	err = q.ex.QueryRowContext(ctx, query, payd.EmailKey(to), micros(since), string(b)).Scan(&n)
	return n, err
}

// CreateUser: see payd.AccountStore.
func (db *DB) CreateUser(ctx context.Context, u *payd.User) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateUser(ctx, u) })
}

// UserByID: see payd.AccountStore.
func (db *DB) UserByID(ctx context.Context, id string) (*payd.User, error) {
	return db.reader(ctx).UserByID(ctx, id)
}

// UserByEmail: see payd.AccountStore.
func (db *DB) UserByEmail(ctx context.Context, email string) (*payd.User, error) {
	return db.reader(ctx).UserByEmail(ctx, email)
}

// SaveUser: see payd.AccountStore.
func (db *DB) SaveUser(ctx context.Context, u *payd.User) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveUser(ctx, u) })
}

// CreateSignup: see payd.AccountStore.
func (db *DB) CreateSignup(ctx context.Context, s *payd.Signup) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateSignup(ctx, s) })
}

// PendingSignup: see payd.AccountStore.
func (db *DB) PendingSignup(ctx context.Context, email string) (*payd.Signup, error) {
	return db.reader(ctx).PendingSignup(ctx, email)
}

// SaveSignup: see payd.AccountStore.
func (db *DB) SaveSignup(ctx context.Context, s *payd.Signup) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveSignup(ctx, s) })
}

// CreateSession: see payd.AccountStore.
func (db *DB) CreateSession(ctx context.Context, s *payd.Session) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateSession(ctx, s) })
}

// SessionByToken: see payd.AccountStore.
func (db *DB) SessionByToken(ctx context.Context, hash string) (*payd.Session, error) {
	return db.reader(ctx).SessionByToken(ctx, hash)
}

// SessionsByUser: see payd.AccountStore.
func (db *DB) SessionsByUser(ctx context.Context, userID string) ([]*payd.Session, error) {
	return db.reader(ctx).SessionsByUser(ctx, userID)
}

// SaveSession: see payd.AccountStore.
func (db *DB) SaveSession(ctx context.Context, s *payd.Session) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SaveSession(ctx, s) })
}

// DeleteSession: see payd.AccountStore.
func (db *DB) DeleteSession(ctx context.Context, userID, id string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.DeleteSession(ctx, userID, id) })
}

// DeleteSessions: see payd.AccountStore.
func (db *DB) DeleteSessions(ctx context.Context, userID, keep string) (v int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		v, err = q.DeleteSessions(ctx, userID, keep)
		return err
	})
	return v, err
}

// AddMember: see payd.AccountStore.
func (db *DB) AddMember(ctx context.Context, m *payd.Membership) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.AddMember(ctx, m) })
}

// Member: see payd.AccountStore.
func (db *DB) Member(ctx context.Context, businessID, userID string) (*payd.Membership, error) {
	return db.reader(ctx).Member(ctx, businessID, userID)
}

// MembershipsByUser: see payd.AccountStore.
func (db *DB) MembershipsByUser(ctx context.Context, userID string) ([]*payd.Membership, error) {
	return db.reader(ctx).MembershipsByUser(ctx, userID)
}

// Attempt: see payd.AccountStore.
func (db *DB) Attempt(ctx context.Context, subject string, now time.Time) (*payd.Attempt, error) {
	return db.reader(ctx).Attempt(ctx, subject, now)
}

// ClearAttempts: see payd.AccountStore.
func (db *DB) ClearAttempts(ctx context.Context, subject string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.ClearAttempts(ctx, subject) })
}

// CountEmails: see payd.AccountStore.
func (db *DB) CountEmails(ctx context.Context, to string, kinds []string, since time.Time) (int, error) {
	return db.reader(ctx).CountEmails(ctx, to, kinds, since)
}

// RememberDevice: see payd.AccountStore.
func (db *DB) RememberDevice(ctx context.Context, userID, deviceHash string, now time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.RememberDevice(ctx, userID, deviceHash, now) })
}

// KnownDevice: see payd.AccountStore.
func (db *DB) KnownDevice(ctx context.Context, userID, deviceHash string) (bool, error) {
	return db.reader(ctx).KnownDevice(ctx, userID, deviceHash)
}

// TouchSession: see payd.AccountStore.
func (db *DB) TouchSession(ctx context.Context, id string, lastSeen time.Time, businessID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.TouchSession(ctx, id, lastSeen, businessID) })
}

// TryAttempt: see payd.AccountStore.
func (db *DB) TryAttempt(ctx context.Context, subject string, now, keepUntil time.Time, lock func(int) time.Duration) (a *payd.Attempt, ok bool, err error) {
	err = db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		a, ok, err = q.TryAttempt(ctx, subject, now, keepUntil, lock)
		return err
	})
	return a, ok, err
}

// DeleteExpiredAccountRows: see payd.AccountStore.
func (db *DB) DeleteExpiredAccountRows(ctx context.Context, now time.Time) (n int, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		n, err = q.DeleteExpiredAccountRows(ctx, now)
		return err
	})
	return n, err
}
