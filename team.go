package payd

import (
	"context"
	"time"
)

// Teams (issue 18, docs/accounts.md "Teams"): a business's owner and admins
// invite people by email with a role; the invited person, signed in with
// that address, accepts with the emailed link's token and becomes a member.

// PrefixInvitation starts an invitation's id.
const PrefixInvitation = "inv_"

// InvitationTTL is how long an invitation can be accepted: a week, long
// enough to reach someone back from holiday, short enough that a
// forgotten link in an inbox soon stops working.
const InvitationTTL = 7 * 24 * time.Hour

// InvitationsPerDay bounds the invitations a business sends in a day, so
// that no business turns payd into a mailer (too_many_emails).
const InvitationsPerDay = 50

// InvitationsPerAddressDay bounds the invitations one address receives
// from one business in a day.
const InvitationsPerAddressDay = 5

// InvitationStatus is where an invitation stands; only a pending one can be
// accepted or withdrawn.
type InvitationStatus string

// The invitation statuses.
const (
	InvitationPending  InvitationStatus = "pending"
	InvitationAccepted InvitationStatus = "accepted"
	InvitationRevoked  InvitationStatus = "revoked"
	// InvitationReplaced is an invitation superseded by a newer one to the
	// same address: only the newest link works.
	InvitationReplaced InvitationStatus = "replaced"
)

// Invitation offers a person a role in a business. The emailed link holds
// a random token; the row holds its hash (SecretHash).
type Invitation struct {
	ID         string
	BusinessID string
	Email      string
	Role       MemberRole
	TokenHash  string
	// InvitedBy is the user who sent it.
	InvitedBy string
	Status    InvitationStatus
	CreatedAt time.Time
	ExpiresAt time.Time
	// EndedAt is when it stopped being pending (accepted, revoked or
	// replaced); nil while pending.
	EndedAt *time.Time
}

// NewInvitation checks an invitation's address and role and returns the
// link's token with the row to store.
func NewInvitation(businessID, email string, role MemberRole, invitedBy string, now time.Time) (string, *Invitation, error) {
	if err := CheckEmail("email", email); err != nil {
		return "", nil, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return "", nil, err
	}
	token := RandomString(43)
	return token, &Invitation{ID: NewID(PrefixInvitation), BusinessID: businessID, Email: email, Role: role,
		TokenHash: SecretHash(token), InvitedBy: invitedBy, Status: InvitationPending,
		CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}, nil
}

// AcceptableBy checks that u may accept the invitation at now: it is
// pending and unexpired (invalid_token otherwise, as for any used,
// replaced or expired link), and it was sent to u's address. A link
// forwarded to someone else does not let them in: the inviter chose a
// person by their address.
func (i *Invitation) AcceptableBy(u *User, now time.Time) error {
	if i.Status != InvitationPending || !now.Before(i.ExpiresAt) {
		return InvalidInvitation()
	}
	if EmailKey(i.Email) != EmailKey(u.Email) {
		return &Error{Code: ErrInvalidToken, Field: "token",
			Message: "this invitation was sent to another email address; sign in with that address to accept it"}
	}
	return nil
}

// InvalidInvitation is invalid_token for an unknown, used, withdrawn,
// replaced or expired invitation.
func InvalidInvitation() *Error {
	return &Error{Code: ErrInvalidToken, Field: "token",
		Message: "this invitation is used, withdrawn, replaced or expired; ask for a new one"}
}

// TeamMember is a membership with the person's name and address, as the
// team page lists it.
type TeamMember struct {
	Membership
	Email string
	Name  string
}

// OwnerProtected refuses to remove or demote the owner (permission_denied):
// every business keeps the one person who can always reach it.
func (m *Membership) OwnerProtected() error {
	if m.Role == RoleOwner {
		return Errorf(ErrPermissionDenied, "the owner of a business can never be removed or given another role")
	}
	return nil
}

// TeamStore keeps invitations and the members of a business.
type TeamStore interface {
	// CreateInvitation stores a pending invitation and marks the
	// business's earlier pending invitations to the same address (in any
	// case) replaced.
	CreateInvitation(ctx context.Context, i *Invitation) error
	// InvitationByToken returns the invitation whose token hashes to hash,
	// in any status; not_found otherwise.
	InvitationByToken(ctx context.Context, hash string) (*Invitation, error)
	// PendingInvitations lists the business's pending invitations, expired
	// ones too, newest first.
	PendingInvitations(ctx context.Context, businessID string) ([]*Invitation, error)
	// CountInvitations counts the invitations the business made since
	// since, to the address when email is not "" (in any case).
	CountInvitations(ctx context.Context, businessID, email string, since time.Time) (int, error)
	// EndInvitation moves the business's pending invitation to status at
	// at; not_found when there is no such pending invitation.
	EndInvitation(ctx context.Context, businessID, id string, status InvitationStatus, at time.Time) error
	// TeamMembers lists the business's members with their names and
	// addresses, oldest first.
	TeamMembers(ctx context.Context, businessID string) ([]*TeamMember, error)
	// SetMemberRole changes a member's role; not_found when the user is not
	// a member.
	SetMemberRole(ctx context.Context, businessID, userID string, role MemberRole) error
	// RemoveMember takes the user out of the business; not_found when not a
	// member.
	RemoveMember(ctx context.Context, businessID, userID string) error
}
