package payd

import (
	"errors"
	"fmt"
	"time"
)

// Error codes are the stable strings of the specification (section 7).
// api/errors.go holds the only map from a code to an HTTP status.
const (
	ErrInvalidRequest         = "invalid_request"
	ErrInvalidJSON            = "invalid_json"
	ErrIdempotencyKeyRequired = "idempotency_key_required"
	ErrUnsupportedMediaType   = "unsupported_media_type"
	ErrPayloadTooLarge        = "payload_too_large"
	ErrUnauthenticated        = "unauthenticated"
	ErrInvalidAPIKey          = "invalid_api_key"
	ErrBusinessForbidden      = "business_forbidden"
	ErrPermissionDenied       = "permission_denied"
	ErrTestModeUnavailable    = "test_mode_unavailable"
	ErrSessionRequired        = "session_required"
	ErrNotFound               = "not_found"
	ErrConflict               = "conflict"
	ErrIdempotencyKeyReused   = "idempotency_key_reused"
	ErrIdempotencyKeyInUse    = "idempotency_key_in_use"
	ErrRateLimited            = "rate_limited"
	ErrInternal               = "internal_error"
	ErrTemporarilyUnavailable = "temporarily_unavailable"
	ErrUpstreamUnavailable    = "upstream_unavailable"
	ErrBusinessSuspended      = "business_suspended"
	// Links and customers (spec 7.5).
	ErrCustomerExists  = "customer_exists"
	ErrLinkHasPayments = "link_has_payments"
	ErrLinkDisabled    = "link_disabled"
	// Payments (spec 7.3) and checkout (7.4).
	ErrInvalidEmail         = "invalid_email"
	ErrReferenceInUse       = "reference_in_use"
	ErrPaymentNotCancelable = "payment_not_cancelable"
	ErrPaymentInFlight      = "payment_in_flight"
	ErrPaymentNotAcceptable = "payment_not_acceptable"
	ErrPaymentNotFound      = "payment_not_found"
	ErrCustomerBlocked      = "customer_blocked"
	ErrNotAccepting         = "not_accepting"
	ErrPaymentNotUnderpaid  = "payment_not_underpaid"
	ErrRemainderUnavailable = "remainder_unavailable"
	ErrNothingDue           = "nothing_due"
	// Checkouts and receipts (spec 7.4), crypto rail.
	ErrEmailRequired           = "email_required"
	ErrRailUnavailable         = "rail_unavailable"
	ErrAssetUnavailable        = "asset_unavailable"
	ErrInvalidTxHash           = "invalid_tx_hash"
	ErrLinkNotFound            = "link_not_found"
	ErrPaymentPaid             = "payment_paid"
	ErrPaymentCanceled         = "payment_canceled"
	ErrWrongRail               = "wrong_rail"
	ErrCheckoutCanceled        = "checkout_canceled"
	ErrCheckoutFailed          = "checkout_failed"
	ErrCheckoutNotCancelable   = "checkout_not_cancelable"
	ErrCheckoutNotSupersedable = "checkout_not_supersedable"
	ErrCheckoutNotClaimable    = "checkout_not_claimable"
	ErrAlreadyClaimed          = "already_claimed"
	ErrPaymentExpired          = "payment_expired"
	ErrCheckoutExpired         = "checkout_expired"
	ErrLinkArchived            = "link_archived"
	// Checkouts, card rail (spec 7.4; docs/card.md).
	ErrAmountOutOfRange     = "amount_out_of_range"
	ErrCheckoutNotRetryable = "checkout_not_retryable"
	ErrRouteInProgress      = "route_in_progress"
	ErrNoRoute              = "no_route"
	ErrStaleRoute           = "stale_route"
	ErrCheckoutNotAwaiting  = "checkout_not_awaiting"
	// ErrInvalidSignature answers a card provider's webhook whose
	// signature does not verify.
	ErrInvalidSignature = "invalid_signature"
	// Dashboard and account (spec 7.6).
	ErrWeakPassword       = "weak_password"
	ErrInvalidCredentials = "invalid_credentials"
	// Wallet (spec 7.6).
	ErrWalletExists      = "wallet_exists"
	ErrInsufficientFunds = "insufficient_funds"
	// Accounts and sessions (spec 7.6).
	ErrChallengeFailed        = "challenge_failed"
	ErrBusinessRequired       = "business_required"
	ErrPasswordRequired       = "password_required"
	ErrSignupBrowserRequired  = "signup_browser_required"
	ErrInvalidCode            = "invalid_code"
	ErrCodeExpired            = "code_expired"
	ErrVerificationExpired    = "verification_expired"
	ErrInvalidToken           = "invalid_token"
	ErrChallengeExpired       = "challenge_expired"
	ErrPasswordResetRequired  = "password_reset_required"
	ErrResetOnHold            = "reset_on_hold"
	ErrStepUpRequired         = "step_up_required"
	ErrTooManyAttempts        = "too_many_attempts"
	ErrTooManyEmails          = "too_many_emails"
	ErrEmailUnavailable       = "email_unavailable"
	ErrEmailTaken             = "email_taken"
	ErrTwoFactorSetupRequired = "two_factor_setup_required"
	ErrTwoFactorEnabled       = "two_factor_enabled"
	ErrTwoFactorDisabled      = "two_factor_disabled"
	ErrCurrentSession         = "current_session"
	ErrPublishableKey         = "publishable_key"
	ErrAPIKeyRevoked          = "api_key_revoked"
	ErrReferralLocked         = "referral_locked"
	ErrCrossSiteRequest       = "cross_site_request"
	ErrEdgeForbidden          = "edge_forbidden"
	// Passkeys (spec 7.6).
	ErrPasskeyExists    = "passkey_exists"
	ErrPasskeyLimit     = "passkey_limit"
	ErrPasskeyFailed    = "passkey_failed"
	ErrPasskeyUnknown   = "passkey_unknown"
	ErrNoPasskeys       = "no_passkeys"
	ErrLastSignInMethod = "last_sign_in_method"
)

// Error is payd's one error type: a stable code, a message for people and,
// when an input is at fault, the field that holds it.
type Error struct {
	Code    string
	Message string
	Field   string
	// RetryAfter, when set, tells the client how long to wait (429, 503).
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError returns an invalid_request error that names the offending field.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: ErrInvalidRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and
// internal_error otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrInternal
}

// IsNotFound reports whether err is a not_found error.
func IsNotFound(err error) bool { return err != nil && ErrorCode(err) == ErrNotFound }

// Wrap adds context to *errp, if it is not nil and not a payd *Error (which
// already speaks for itself to the client). Use it as
// defer payd.Wrap(&err, "store.CreateBusiness(%s)", id).
func Wrap(errp *error, format string, args ...any) {
	if *errp == nil {
		return
	}
	var e *Error
	if errors.As(*errp, &e) {
		return
	}
	*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
}
