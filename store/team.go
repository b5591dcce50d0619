package store

import (
	"context"
	"database/sql"
	"time"

	"payd"
)

// Teams: invitations and the members of a business (payd.TeamStore).

const invitationColumns = `id, business_id, email, role, token_hash, invited_by, status, created_at, expires_at, ended_at`

func scanInvitation(row rowScanner) (*payd.Invitation, error) {
	var i payd.Invitation
	var role, status string
	var created, expires int64
	var ended sql.NullInt64
	if err := row.Scan(&i.ID, &i.BusinessID, &i.Email, &role, &i.TokenHash, &i.InvitedBy, &status,
		&created, &expires, &ended); err != nil {
		return nil, err
	}
	i.Role, i.Status = payd.MemberRole(role), payd.InvitationStatus(status)
	i.CreatedAt, i.ExpiresAt, i.EndedAt = fromMicros(created), fromMicros(expires), fromNullMicros(ended)
	return &i, nil
}

// CreateInvitation stores a pending invitation, replacing the business's
// pending ones to the same address.
func (q *queries) CreateInvitation(ctx context.Context, i *payd.Invitation) (err error) {
	defer fail(&err, "invitation", "store.CreateInvitation(%s)", i.ID)
	key := payd.EmailKey(i.Email)
	if _, err = q.ex.ExecContext(ctx, `UPDATE invitations SET status = $3, ended_at = $4
		WHERE business_id = $1 AND email_key = $2 AND status = $5`, i.BusinessID, key,
		string(payd.InvitationReplaced), micros(i.CreatedAt), string(payd.InvitationPending)); err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `INSERT INTO invitations (`+invitationColumns+`, email_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		i.ID, i.BusinessID, i.Email, string(i.Role), i.TokenHash, i.InvitedBy, string(i.Status),
		micros(i.CreatedAt), micros(i.ExpiresAt), nullMicros(i.EndedAt), key)
	return err
}

// InvitationByToken returns the invitation whose token hashes to hash;
// not_found otherwise.
func (q *queries) InvitationByToken(ctx context.Context, hash string) (_ *payd.Invitation, err error) {
	defer fail(&err, "invitation", "store.InvitationByToken")
	return scanInvitation(q.ex.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE token_hash = $1`, hash))
}

// PendingInvitations lists the business's pending invitations, newest first.
func (q *queries) PendingInvitations(ctx context.Context, businessID string) (_ []*payd.Invitation, err error) {
	defer fail(&err, "invitation", "store.PendingInvitations(%s)", businessID)
	return queryAll(ctx, q.ex, scanInvitation, `SELECT `+invitationColumns+` FROM invitations
		WHERE business_id = $1 AND status = $2 ORDER BY created_at DESC, id DESC`,
		businessID, string(payd.InvitationPending))
}

// CountInvitations counts the business's invitations made since since, to
// the address when email is not "".
func (q *queries) CountInvitations(ctx context.Context, businessID, email string, since time.Time) (n int, err error) {
	defer fail(&err, "invitation", "store.CountInvitations(%s)", businessID)
	err = q.ex.QueryRowContext(ctx, `SELECT COUNT(*) FROM invitations
		WHERE business_id = $1 AND created_at >= $2 AND ($3 = '' OR email_key = $3)`,
		businessID, micros(since), payd.EmailKey(email)).Scan(&n)
	return n, err
}

// EndInvitation moves the business's pending invitation to status;
// not_found when it has no such pending invitation.
func (q *queries) EndInvitation(ctx context.Context, businessID, id string, status payd.InvitationStatus, at time.Time) (err error) {
	defer fail(&err, "invitation", "store.EndInvitation(%s, %s)", businessID, id)
	return affected(q.ex.ExecContext(ctx, `UPDATE invitations SET status = $3, ended_at = $4
		WHERE business_id = $1 AND id = $2 AND status = $5`,
		businessID, id, string(status), micros(at), string(payd.InvitationPending)))
}

// TeamMembers lists the business's members with their names and
// addresses, oldest first.
func (q *queries) TeamMembers(ctx context.Context, businessID string) (_ []*payd.TeamMember, err error) {
	defer fail(&err, "membership", "store.TeamMembers(%s)", businessID)
	return queryAll(ctx, q.ex, func(row rowScanner) (*payd.TeamMember, error) {
		var m payd.TeamMember
		var role string
		var created int64
		if err := row.Scan(&m.BusinessID, &m.UserID, &role, &created, &m.Email, &m.Name); err != nil {
			return nil, err
		}
		m.Role, m.CreatedAt = payd.MemberRole(role), fromMicros(created)
		return &m, nil
	}, `SELECT m.business_id, m.user_id, m.role, m.created_at, u.email, u.name
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.business_id = $1 ORDER BY m.created_at, m.user_id`, businessID)
}

// SetMemberRole changes a member's role; not_found when not a member.
func (q *queries) SetMemberRole(ctx context.Context, businessID, userID string, role payd.MemberRole) (err error) {
	defer fail(&err, "membership", "store.SetMemberRole(%s, %s)", businessID, userID)
	return affected(q.ex.ExecContext(ctx, `UPDATE memberships SET role = $3 WHERE business_id = $1 AND user_id = $2`,
		businessID, userID, string(role)))
}

// RemoveMember takes the user out of the business; not_found when not a
// member.
func (q *queries) RemoveMember(ctx context.Context, businessID, userID string) (err error) {
	defer fail(&err, "membership", "store.RemoveMember(%s, %s)", businessID, userID)
	return affected(q.ex.ExecContext(ctx, `DELETE FROM memberships WHERE business_id = $1 AND user_id = $2`,
		businessID, userID))
}

// CreateInvitation: see payd.TeamStore.
func (db *DB) CreateInvitation(ctx context.Context, i *payd.Invitation) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateInvitation(ctx, i) })
}

// InvitationByToken: see payd.TeamStore.
func (db *DB) InvitationByToken(ctx context.Context, hash string) (*payd.Invitation, error) {
	return db.reader(ctx).InvitationByToken(ctx, hash)
}

// PendingInvitations: see payd.TeamStore.
func (db *DB) PendingInvitations(ctx context.Context, businessID string) ([]*payd.Invitation, error) {
	return db.reader(ctx).PendingInvitations(ctx, businessID)
}

// CountInvitations: see payd.TeamStore.
func (db *DB) CountInvitations(ctx context.Context, businessID, email string, since time.Time) (int, error) {
	return db.reader(ctx).CountInvitations(ctx, businessID, email, since)
}

// EndInvitation: see payd.TeamStore.
func (db *DB) EndInvitation(ctx context.Context, businessID, id string, status payd.InvitationStatus, at time.Time) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error {
		return q.EndInvitation(ctx, businessID, id, status, at)
	})
}

// TeamMembers: see payd.TeamStore.
func (db *DB) TeamMembers(ctx context.Context, businessID string) ([]*payd.TeamMember, error) {
	return db.reader(ctx).TeamMembers(ctx, businessID)
}

// SetMemberRole: see payd.TeamStore.
func (db *DB) SetMemberRole(ctx context.Context, businessID, userID string, role payd.MemberRole) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.SetMemberRole(ctx, businessID, userID, role) })
}

// RemoveMember: see payd.TeamStore.
func (db *DB) RemoveMember(ctx context.Context, businessID, userID string) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.RemoveMember(ctx, businessID, userID) })
}
