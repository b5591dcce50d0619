package payd

import (
	"context"
	"time"
)

// ChallengeForm names the form a bot-check token was solved for (spec 5
// rule 8): a token is good for one submission of that form only, so a token
// solved on the sign-in page cannot be spent on sign-up.
type ChallengeForm string

// The forms that need a bot-check token in header Service-Challenge.
const (
	ChallengeSignup ChallengeForm = "signup"
	ChallengeSignin ChallengeForm = "signin"
	ChallengeReset  ChallengeForm = "reset"
)

// ChallengeForms lists every form, in the order the documentation gives them.
var ChallengeForms = []ChallengeForm{ChallengeSignup, ChallengeSignin, ChallengeReset}

// ParseChallengeForm reads a form name such as the body of
// POST /devnet/challenges carries; anything else is invalid_request on
// field form.
func ParseChallengeForm(s string) (ChallengeForm, error) {
	for _, f := range ChallengeForms {
		if string(f) == s {
			return f, nil
		}
	}
	return "", FieldError("form", "form must be signup, signin or reset")
}

// ChallengeHeader is the request header that carries the bot-check token.
const ChallengeHeader = "Service-Challenge"

// ChallengeRetryAfter is how long a client is told to wait when the bot
// check cannot be reached: long enough for a provider's blip to pass, short
// enough that a person retrying by hand does not give up.
const ChallengeRetryAfter = 30 * time.Second

// Challenger verifies bot-check tokens (docs/bot-check.md). payd fails
// closed: when the verifier cannot answer, the form is refused with
// temporarily_unavailable rather than let through, because the check is the
// one thing a sign-up flood or a credential-stuffing run has to defeat, and
// an outage that opens the gate can be waited for or caused. Payments, API
// keys and checkouts never need a token, so an outage only keeps people from
// signing in to the dashboard until it passes (or until the operator
// chooses --challenge none, keeping the per-IP limits of spec 8.2).
type Challenger interface {
	// Verify checks token, solved for form by a browser at remoteIP (which
	// may be empty when unknown), and spends it. It returns nil when the
	// token is good; challenge_failed when the token is missing, refused,
	// already used, expired or from another form; and
	// temporarily_unavailable, with RetryAfter, when the verifier cannot
	// give an answer (unreachable, slow, 5xx, an unreadable answer or a
	// misconfigured secret). Other errors are internal.
	Verify(ctx context.Context, form ChallengeForm, token, remoteIP string) error
}

// ChallengeFailed returns the challenge_failed error with a message for
// people that does not say which check failed: a bot learns nothing from it.
func ChallengeFailed() *Error {
	return &Error{Code: ErrChallengeFailed, Message: "the bot check failed; solve it again and resubmit the form"}
}

// ChallengeUnavailable returns the temporarily_unavailable error of a bot
// check that could not be verified.
func ChallengeUnavailable() *Error {
	return &Error{
		Code:       ErrTemporarilyUnavailable,
		Message:    "the bot check cannot be verified right now; try again shortly",
		RetryAfter: ChallengeRetryAfter,
	}
}

// ChallengeToken is a bot-check token payd issued itself (the dev tokens of
// CONTRACT.md): only its hash is stored, so the database never holds a
// token that could be spent.
type ChallengeToken struct {
	// Hash is the hex SHA-256 of the token.
	Hash      string
	Form      ChallengeForm
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Check reports whether a token just taken from the store may pass for
// form at now: challenge_failed when it was issued for another form or has
// expired. The token is spent either way; one seen on the wrong form is
// not trusted again.
func (t *ChallengeToken) Check(form ChallengeForm, now time.Time) error {
	if t.Form != form || !now.Before(t.ExpiresAt) {
		return ChallengeFailed()
	}
	return nil
}

// ChallengeTokenStore keeps the issued dev tokens, by hash, shared by every
// replica.
type ChallengeTokenStore interface {
	// CreateChallengeToken stores an issued token; conflict when its hash
	// is already stored.
	CreateChallengeToken(ctx context.Context, t *ChallengeToken) error
	// TakeChallengeToken removes the token with this hash and returns it,
	// in one statement: of two concurrent takes one gets the token and the
	// other not_found, as does a hash never issued or already taken.
	TakeChallengeToken(ctx context.Context, hash string) (*ChallengeToken, error)
	// DeleteExpiredChallengeTokens removes the tokens that expired at or
	// before now and returns how many.
	DeleteExpiredChallengeTokens(ctx context.Context, now time.Time) (int, error)
}
