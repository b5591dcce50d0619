package web

import "strings"

// The dashboard's sentences. The dashboard is in English for now (the
// checkout pages, which customers read, are translated through the
// catalogue); what a refusal says and what a change did are kept here by
// code, so every page says the same thing the same way.

// dashErrors says an API refusal (spec 7) as a merchant should read it.
// A code without a sentence here shows the API's own message, which is
// written for people too.
var dashErrors = map[string]string{
	"internal_error":          "Something went wrong on our side. Please try again in a moment.",
	"invalid_credentials":     "The email address or password is not right.",
	"too_many_attempts":       "Too many tries.",
	"too_many_emails":         "Too many emails have been sent to this address.",
	"rate_limited":            "Too many requests from your connection.",
	"challenge_failed":        "The check that you are not a robot did not pass. Please solve it again.",
	"temporarily_unavailable": "This is paused for a moment.",
	"cross_site_request":      "This form was sent from another site, so it was refused. Open the dashboard yourself and try again.",
	"permission_denied":       "Your role in this business does not allow this. Ask an owner or admin.",
	"edge_forbidden":          "This address is not where payd answers.",
	"invalid_request":         "Please check the form: something in it is not right.",
	"idempotency_conflict":    "This form was already sent with other values. Reload the page and try again.",
	"code_expired":            "This code is older than 15 minutes. Ask for a new one.",
	"email_unavailable":       "This payd cannot send email yet, so it cannot send your code or link. Ask its operator to set up email.",

	// Customers, links and checkout settings.
	"link_has_payments":      "This link has payments, so it cannot be deleted. Archive it instead.",
	"link_disabled":          "The operator of this payd has switched this link off, so it cannot be changed.",
	"test_mode_unavailable":  "This business takes real money, so a test key cannot make this change.",
	"customer_exists":        "Another customer of this business already has this email address.",
	"payment_not_acceptable": "Only an underpaid payment, or one that needs review, can be accepted; this one has changed since the page was shown.",
}

// dashErrorText is the sentence for a refusal: the dashboard's own, or
// the API's message, with the wait of Retry-After when there is one.
func dashErrorText(ae *apiError) string {
	if ae == nil {
		return dashErrors["internal_error"]
	}
	s, ok := dashErrors[ae.Code]
	if !ok || ae.Code == "invalid_request" && ae.Message != "" {
		s = sentence(ae.Message)
	}
	if s == "" {
		s = dashErrors["internal_error"]
	}
	return s + retryText(ae.RetryAfter)
}

// sentence makes an API message a sentence: a capital first letter and a
// full stop.
func sentence(m string) string {
	m = strings.TrimSpace(m)
	if m == "" {
		return ""
	}
	m = strings.ToUpper(m[:1]) + m[1:]
	if !strings.HasSuffix(m, ".") && !strings.HasSuffix(m, "?") && !strings.HasSuffix(m, "!") {
		m += "."
	}
	return m
}

// dashFlash says what a change did, by the done= of the page it leads to.
var dashFlash = map[string]string{
	"signed_out":          "You are signed out.",
	"business_created":    "Your business is ready.",
	"business_saved":      "The business is saved.",
	"payment_accepted":    "The payment is accepted as paid.",
	"payment_canceled":    "The payment is canceled.",
	"remainder_requested": "The rest is requested: send the customer the address below.",
	"link_created":        "The payment link is ready to share.",
	"link_saved":          "The payment link is saved.",
	"link_archived":       "The payment link is archived. Customers can no longer pay with it.",
	"link_restored":       "The payment link is restored. Customers can pay with it again.",
	"link_deleted":        "The payment link is deleted.",
	"customer_saved":      "The customer is saved.",
	"customer_blocked":    "The customer is blocked: they can no longer pay.",
	"customer_unblocked":  "The customer is unblocked: they can pay again.",
	"settings_saved":      "The checkout settings are saved.",
	// Developers and wallet.
	"key_renamed":            "The key is renamed.",
	"key_revoked":            "The key is revoked: it no longer works.",
	"webhook_enabled":        "The endpoint is on: events are sent to it again.",
	"webhook_disabled":       "The endpoint is off: no events are sent to it.",
	"webhook_deleted":        "The endpoint is deleted.",
	"webhook_tested":         "A test event was sent. Here is its delivery.",
	"delivery_resent":        "Resent: the endpoint answered with success.",
	"delivery_resent_failed": "Resent, but the endpoint did not answer with success. See the attempts below.",
	"wallet_attached":        "The wallet is attached. Compare each first address with your wallet software.",
	// Account, security and team.
	"name_saved":           "Your name is saved.",
	"email_code_sent":      "A code is on its way to the new address.",
	"email_changed":        "Your email address is changed.",
	"password_changed":     "Your password is changed. Your other sessions are signed out.",
	"theme_saved":          "The theme is saved for this browser.",
	"two_step_on":          "Two-step sign-in is on.",
	"two_step_off":         "Two-step sign-in is off.",
	"recovery_codes_new":   "New recovery codes are made; the old ones no longer work.",
	"passkey_added":        "The passkey is added.",
	"passkey_renamed":      "The passkey is renamed.",
	"passkey_deleted":      "The passkey is deleted.",
	"session_ended":        "That session is signed out.",
	"sessions_ended":       "Every other session is signed out.",
	"invitation_sent":      "The invitation is sent.",
	"invitation_withdrawn": "The invitation is withdrawn.",
	"role_changed":         "The role is changed.",
	"member_removed":       "The member is removed.",
	"team_left":            "You have left the business.",
	"signed_up":            "Welcome to payd. Your account is ready.",
	"code_sent":            "A new code is on its way. It replaces the one sent before.",
	"password_reset":       "Your password is changed, and every session of your account is signed out. Sign in with the new password.",
	"invitation_accepted":  "You joined the team.",

	// Customers, links and checkout settings.
	"logo_saved":   "The logo is saved. Your payment pages show it now.",
	"logo_removed": "The logo is removed.",
}
