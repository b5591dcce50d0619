package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"payd"
)

// statusByCode is the only map from an error code to an HTTP status.
var statusByCode = map[string]int{
	payd.ErrInvalidRequest:          http.StatusBadRequest,
	payd.ErrInvalidJSON:             http.StatusBadRequest,
	payd.ErrIdempotencyKeyRequired:  http.StatusBadRequest,
	payd.ErrUnsupportedMediaType:    http.StatusUnsupportedMediaType,
	payd.ErrPayloadTooLarge:         http.StatusRequestEntityTooLarge,
	payd.ErrUnauthenticated:         http.StatusUnauthorized,
	payd.ErrInvalidAPIKey:           http.StatusUnauthorized,
	payd.ErrBusinessForbidden:       http.StatusForbidden,
	payd.ErrPermissionDenied:        http.StatusForbidden,
	payd.ErrTestModeUnavailable:     http.StatusForbidden,
	payd.ErrSessionRequired:         http.StatusForbidden,
	payd.ErrBusinessSuspended:       http.StatusForbidden,
	payd.ErrNotFound:                http.StatusNotFound,
	payd.ErrConflict:                http.StatusConflict,
	payd.ErrIdempotencyKeyReused:    http.StatusConflict,
	payd.ErrIdempotencyKeyInUse:     http.StatusConflict,
	payd.ErrRateLimited:             http.StatusTooManyRequests,
	payd.ErrInternal:                http.StatusInternalServerError,
	payd.ErrTemporarilyUnavailable:  http.StatusServiceUnavailable,
	payd.ErrUpstreamUnavailable:     http.StatusServiceUnavailable,
	payd.ErrCustomerExists:          http.StatusConflict,
	payd.ErrLinkHasPayments:         http.StatusConflict,
	payd.ErrLinkDisabled:            http.StatusConflict,
	payd.ErrInvalidEmail:            http.StatusBadRequest,
	payd.ErrReferenceInUse:          http.StatusConflict,
	payd.ErrPaymentNotCancelable:    http.StatusConflict,
	payd.ErrPaymentInFlight:         http.StatusConflict,
	payd.ErrPaymentNotAcceptable:    http.StatusConflict,
	payd.ErrPaymentNotFound:         http.StatusNotFound,
	payd.ErrCustomerBlocked:         http.StatusForbidden,
	payd.ErrNotAccepting:            http.StatusConflict,
	payd.ErrPaymentNotUnderpaid:     http.StatusConflict,
	payd.ErrRemainderUnavailable:    http.StatusConflict,
	payd.ErrNothingDue:              http.StatusConflict,
	payd.ErrEmailRequired:           http.StatusBadRequest,
	payd.ErrRailUnavailable:         http.StatusBadRequest,
	payd.ErrAssetUnavailable:        http.StatusBadRequest,
	payd.ErrInvalidTxHash:           http.StatusBadRequest,
	payd.ErrLinkNotFound:            http.StatusNotFound,
	payd.ErrPaymentPaid:             http.StatusConflict,
	payd.ErrPaymentCanceled:         http.StatusConflict,
	payd.ErrWrongRail:               http.StatusConflict,
	payd.ErrCheckoutCanceled:        http.StatusConflict,
	payd.ErrCheckoutFailed:          http.StatusConflict,
	payd.ErrAmountOutOfRange:        http.StatusBadRequest,
	payd.ErrCheckoutNotRetryable:    http.StatusConflict,
	payd.ErrRouteInProgress:         http.StatusConflict,
	payd.ErrNoRoute:                 http.StatusConflict,
	payd.ErrStaleRoute:              http.StatusConflict,
	payd.ErrCheckoutNotAwaiting:     http.StatusConflict,
	payd.ErrInvalidSignature:        http.StatusBadRequest,
	payd.ErrCheckoutNotCancelable:   http.StatusConflict,
	payd.ErrCheckoutNotSupersedable: http.StatusConflict,
	payd.ErrCheckoutNotClaimable:    http.StatusConflict,
	payd.ErrAlreadyClaimed:          http.StatusConflict,
	payd.ErrPaymentExpired:          http.StatusGone,
	payd.ErrCheckoutExpired:         http.StatusGone,
	payd.ErrLinkArchived:            http.StatusGone,
	payd.ErrWeakPassword:            http.StatusBadRequest,
	payd.ErrInvalidCredentials:      http.StatusBadRequest,
	payd.ErrWalletExists:            http.StatusConflict,
	payd.ErrInsufficientFunds:       http.StatusConflict,
	payd.ErrChallengeFailed:         http.StatusBadRequest,
	payd.ErrBusinessRequired:        http.StatusBadRequest,
	payd.ErrPasswordRequired:        http.StatusBadRequest,
	payd.ErrSignupBrowserRequired:   http.StatusBadRequest,
	payd.ErrInvalidCode:             http.StatusBadRequest,
	payd.ErrCodeExpired:             http.StatusBadRequest,
	payd.ErrVerificationExpired:     http.StatusBadRequest,
	payd.ErrInvalidToken:            http.StatusBadRequest,
	payd.ErrChallengeExpired:        http.StatusBadRequest,
	payd.ErrPasswordResetRequired:   http.StatusForbidden,
	payd.ErrResetOnHold:             http.StatusConflict,
	payd.ErrStepUpRequired:          http.StatusForbidden,
	payd.ErrTooManyAttempts:         http.StatusTooManyRequests,
	payd.ErrTooManyEmails:           http.StatusTooManyRequests,
	payd.ErrEmailUnavailable:        http.StatusServiceUnavailable,
	payd.ErrEmailTaken:              http.StatusConflict,
	payd.ErrTwoFactorSetupRequired:  http.StatusConflict,
	payd.ErrTwoFactorEnabled:        http.StatusConflict,
	payd.ErrTwoFactorDisabled:       http.StatusConflict,
	payd.ErrCurrentSession:          http.StatusConflict,
	payd.ErrPublishableKey:          http.StatusConflict,
	payd.ErrAPIKeyRevoked:           http.StatusConflict,
	payd.ErrReferralLocked:          http.StatusConflict,
	payd.ErrCrossSiteRequest:        http.StatusForbidden,
	payd.ErrEdgeForbidden:           http.StatusForbidden,
	payd.ErrPasskeyExists:           http.StatusConflict,
	payd.ErrPasskeyLimit:            http.StatusConflict,
	payd.ErrPasskeyFailed:           http.StatusBadRequest,
	payd.ErrPasskeyUnknown:          http.StatusBadRequest,
	payd.ErrNoPasskeys:              http.StatusConflict,
	payd.ErrLastSignInMethod:        http.StatusConflict,
}

// errorBody is the envelope of every error response (spec 7).
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id"`
}

// writeError renders err. A *payd.Error speaks for itself; anything else is a
// bug: it is logged with the request id and the client sees only a generic
// internal_error, never the cause.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	reqID := requestID(r.Context())
	var e *payd.Error
	if !errors.As(err, &e) || statusByCode[e.Code] == 0 {
		s.log.ErrorContext(r.Context(), "internal error", slog.String("request_id", reqID),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		e = payd.Errorf(payd.ErrInternal, "something went wrong on our side; retry with the same idempotency key")
	}
	status := statusByCode[e.Code]
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	if e.RetryAfter > 0 {
		secs := int64((e.RetryAfter + 999_999_999) / 1_000_000_000)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	writeJSON(w, status, errorBody{errorDetail{Code: e.Code, Message: e.Message, Field: e.Field, RequestID: reqID}})
}
