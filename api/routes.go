package api

import (
	"net/http"

	"payd"
)

// handlerFunc is an API handler: it writes a success or returns an error that
// the one adapter in wrap renders.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one API route and the rules the common chain applies to it.
type route struct {
	method string
	path   string // relative to BasePath, Go 1.22 pattern syntax
	h      handlerFunc
	access access
	idem   idemMode
	// limit names a per-IP rule of rateRules (spec 8.2), if any.
	limit string
	// pause names what the operator can pause to close this route.
	pause string
	// realMoney refuses test keys on a live business (spec 5.3).
	realMoney bool
	// stepUp marks a sensitive change: a session needs a proof younger
	// than payd.ProofTTL (spec 5.7); API keys are never asked.
	stepUp bool
	// inTx says the handler changes nothing but through writeTx, which
	// stores an idempotent response in the change's own transaction; on
	// SQLite such a route's key is then looked up only when the change
	// finds it taken or the handler fails (see Server.idempotent).
	inTx bool
}

// access says who may call a route.
type access struct {
	// public routes need no key; a key that is sent is still checked.
	public bool
	// sessionOnly routes belong to the dashboard: API keys get session_required.
	sessionOnly bool
	// user routes need a signed-in person and no business (the account's
	// own routes); API keys get session_required.
	user  bool
	area  payd.Area
	level payd.Access
	// may, on a session's business routes, is what the person's role
	// must allow (payd.MemberRole.ManagesTeam, ManagesKeys); others get
	// permission_denied.
	may func(payd.MemberRole) bool
}

// idemMode is how a POST route treats Idempotency-Key (spec 4.8).
type idemMode int

const (
	idemOptional idemMode = iota // stored when sent (rules 1–7)
	idemRequired                 // rule 8
	idemIgnored                  // rule 10: responses carrying a secret
)

var public = access{public: true}

// signedIn is the access of a person's own routes (sessions, their
// account, their businesses).
var signedIn = access{sessionOnly: true, user: true}

// Access rules of the customer and link routes.
var (
	customersRead  = access{area: payd.AreaCustomers, level: payd.AccessRead}
	customersWrite = access{area: payd.AreaCustomers, level: payd.AccessWrite}
	linksRead      = access{area: payd.AreaLinks, level: payd.AccessRead}
	linksWrite     = access{area: payd.AreaLinks, level: payd.AccessWrite}
)

// Access rules of the payment, checkout settings and wallet routes.
var (
	paymentsRead  = access{area: payd.AreaPayments, level: payd.AccessRead}
	paymentsWrite = access{area: payd.AreaPayments, level: payd.AccessWrite}
	settingsRead  = access{area: payd.AreaCheckoutSettings, level: payd.AccessRead}
	settingsWrite = access{area: payd.AreaCheckoutSettings, level: payd.AccessWrite}
	walletRead    = access{area: payd.AreaWallet, level: payd.AccessRead}
	walletWrite   = access{area: payd.AreaWallet, level: payd.AccessWrite}
)

// routeTable lists every API route on one screen.
func (s *Server) routeTable() []route {
	rs := []route{
		{method: "GET", path: "/exchange-rates", h: s.getExchangeRates, access: public},
		{method: "GET", path: "/exchange-rates/{id}", h: s.getExchangeRatesByID, access: public},
		{method: "GET", path: "/openapi.json", h: s.getOpenAPI, access: public},
		// API keys and the team: the dashboard's only (spec 5.5); creating
		// keys and deciding who reaches the business are sensitive (5.7).
		{method: "GET", path: "/api-keys", h: s.listAPIKeys, access: keysManage},
		{method: "POST", path: "/api-keys", h: s.createAPIKey, access: keysManage, idem: idemIgnored, stepUp: true},
		{method: "PATCH", path: "/api-keys/{id}", h: s.updateAPIKey, access: keysManage, stepUp: true},
		{method: "POST", path: "/api-keys/{id}/roll", h: s.rollAPIKey, access: keysManage, idem: idemIgnored, stepUp: true},
		{method: "POST", path: "/api-keys/{id}/revoke", h: s.revokeAPIKey, access: keysManage},
		{method: "GET", path: "/team/members", h: s.listMembers, access: teamRead},
		{method: "PATCH", path: "/team/members/{user_id}", h: s.updateMember, access: teamManage, stepUp: true},
		{method: "DELETE", path: "/team/members/{user_id}", h: s.removeMember, access: teamRead, stepUp: true},
		{method: "POST", path: "/team/invitations", h: s.invite, access: teamManage, stepUp: true},
		{method: "GET", path: "/team/invitations", h: s.listInvitations, access: teamManage},
		{method: "DELETE", path: "/team/invitations/{id}", h: s.withdrawInvitation, access: teamManage},
		{method: "POST", path: "/invitations/accept", h: s.acceptInvitation, access: signedIn},
		{method: "POST", path: "/customers", h: s.createCustomer, access: customersWrite, inTx: true},
		{method: "GET", path: "/customers", h: s.listCustomers, access: customersRead},
		{method: "GET", path: "/customers/{id}", h: s.getCustomer, access: customersRead},
		{method: "PATCH", path: "/customers/{id}", h: s.updateCustomer, access: customersWrite},
		{method: "POST", path: "/links", h: s.createLink, access: linksWrite, realMoney: true, inTx: true},
		{method: "GET", path: "/links", h: s.listLinks, access: linksRead},
		{method: "GET", path: "/links/{id}", h: s.getLink, access: linksRead},
		{method: "PATCH", path: "/links/{id}", h: s.updateLink, access: linksWrite, realMoney: true},
		{method: "DELETE", path: "/links/{id}", h: s.deleteLink, access: linksWrite, realMoney: true},
		{method: "POST", path: "/links/{id}/archive", h: s.archiveLink, access: linksWrite, realMoney: true, inTx: true},
		{method: "POST", path: "/links/{id}/restore", h: s.restoreLink, access: linksWrite, realMoney: true, inTx: true},
		{method: "GET", path: "/payments", h: s.listPayments, access: access{area: payd.AreaPayments, level: payd.AccessRead}},
		// Search checks per kind what a restricted key reads (spec 4.2).
		{method: "GET", path: "/search", h: s.search},
		{method: "POST", path: "/payments", h: s.createPayment, access: paymentsWrite, realMoney: true, inTx: true},
		{method: "GET", path: "/payments/{id}", h: s.getPayment, access: paymentsRead},
		{method: "POST", path: "/payments/{id}/cancel", h: s.cancelPayment, access: paymentsWrite, realMoney: true, inTx: true},
		{method: "POST", path: "/payments/{id}/accept", h: s.acceptPayment, access: paymentsWrite, realMoney: true, inTx: true},
		{method: "GET", path: "/checkout-settings", h: s.getCheckoutSettings, access: settingsRead},
		{method: "PATCH", path: "/checkout-settings", h: s.patchCheckoutSettings, access: settingsWrite, realMoney: true},
		{method: "POST", path: "/checkout-settings/logo", h: s.putCheckoutLogo, access: settingsWrite, realMoney: true},
		{method: "DELETE", path: "/checkout-settings/logo", h: s.deleteCheckoutLogo, access: settingsWrite, realMoney: true},
		// Attaching a wallet decides where payments go (spec 5.3).
		{method: "POST", path: "/wallet", h: s.createWallet, access: walletWrite, realMoney: true, inTx: true, stepUp: true},
		{method: "GET", path: "/wallet", h: s.getWallet, access: walletRead},
		{method: "POST", path: "/payments/{id}/request-remainder", h: s.requestRemainder, access: paymentsWrite,
			realMoney: true, idem: idemRequired, inTx: true},
		{method: "POST", path: "/checkouts", h: s.createCheckout, access: public, idem: idemRequired,
			limit: "checkouts", pause: "checkouts", inTx: true},
		{method: "GET", path: "/checkouts/{id}", h: s.getCheckout, access: public},
		{method: "POST", path: "/checkouts/{id}/cancel", h: s.cancelCheckout, access: public, inTx: true},
		{method: "POST", path: "/checkouts/{id}/claim", h: s.claimCheckout, access: public, inTx: true},
		{method: "POST", path: "/checkouts/{id}/card/session", h: s.cardSession, access: public,
			limit: "checkouts", pause: "checkouts"},
		{method: "POST", path: "/checkouts/{id}/card/retry", h: s.cardRetry, access: public, idem: idemRequired,
			limit: "checkouts", pause: "checkouts", inTx: true},
		{method: "POST", path: "/checkouts/{id}/card/refresh", h: s.cardRefresh, access: public},
		{method: "POST", path: "/card-providers/{provider}/webhook", h: s.cardWebhook, access: public, idem: idemIgnored},
		{method: "POST", path: "/checkouts/{id}/remainder", h: s.checkoutRemainder, access: public, idem: idemRequired,
			limit: "checkouts", pause: "checkouts", inTx: true},
		{method: "GET", path: "/public/payments/{code}", h: s.getPublicPayment, access: public},
		{method: "GET", path: "/public/links/{code}", h: s.getPublicLink, access: public},
		{method: "GET", path: "/public/checkout-logos/{digest}", h: s.getPublicLogo, access: public},
		{method: "GET", path: "/metrics", h: s.getMetrics, access: access{area: payd.AreaMetrics, level: payd.AccessRead}},
		{method: "POST", path: "/webhooks", h: s.createWebhook, access: webhooksWrite, idem: idemIgnored, stepUp: true},
		{method: "GET", path: "/webhooks", h: s.listWebhooks, access: webhooksRead},
		{method: "GET", path: "/webhooks/{id}", h: s.getWebhook, access: webhooksRead},
		{method: "PATCH", path: "/webhooks/{id}", h: s.updateWebhook, access: webhooksWrite, stepUp: true},
		{method: "DELETE", path: "/webhooks/{id}", h: s.deleteWebhook, access: webhooksWrite, stepUp: true},
		{method: "POST", path: "/webhooks/{id}/rotate-secret", h: s.rotateWebhookSecret, access: webhooksWrite, idem: idemIgnored, stepUp: true},
		{method: "POST", path: "/webhooks/{id}/test", h: s.testWebhook, access: webhooksWrite},
		{method: "GET", path: "/webhook-deliveries", h: s.listDeliveries, access: webhooksRead},
		{method: "GET", path: "/webhook-deliveries/{id}", h: s.getDelivery, access: webhooksRead},
		{method: "POST", path: "/webhook-deliveries/{id}/resend", h: s.resendDelivery, access: webhooksWrite},
		// Accounts and sessions (spec 5.5–5.8, 8.2). Answers that set
		// cookies are never replayed: Idempotency-Key is ignored.
		{method: "POST", path: "/accounts", h: s.createAccount, access: public, idem: idemIgnored, limit: "accounts", pause: payd.PauseSignups},
		{method: "POST", path: "/accounts/verify", h: s.verifyAccount, access: public, idem: idemIgnored, limit: "accounts_verify", pause: payd.PauseSignups},
		{method: "POST", path: "/accounts/verify/resend", h: s.resendAccountCode, access: public, idem: idemIgnored, limit: "accounts_verify", pause: payd.PauseSignups},
		{method: "POST", path: "/sessions", h: s.createSession, access: public, idem: idemIgnored, limit: "sessions"},
		{method: "GET", path: "/sessions", h: s.listSessions, access: signedIn},
		{method: "GET", path: "/sessions/current", h: s.getCurrentSession, access: signedIn},
		{method: "DELETE", path: "/sessions/current", h: s.signOut, access: signedIn},
		{method: "DELETE", path: "/sessions/{id}", h: s.deleteSession, access: signedIn},
		{method: "POST", path: "/sessions/current/step-up", h: s.stepUp, access: signedIn, idem: idemIgnored, limit: "proofs"},
		{method: "POST", path: "/sessions/current/step-up/options", h: s.stepUpOptions, access: signedIn, idem: idemIgnored, limit: "proofs"},
		{method: "POST", path: "/sessions/two-factor", h: s.finishTwoFactor, access: public, idem: idemIgnored, limit: "sessions_two_factor"},
		{method: "GET", path: "/me", h: s.getMe, access: signedIn},
		{method: "PATCH", path: "/me", h: s.patchMe, access: signedIn},
		{method: "GET", path: "/me/two-factor", h: s.getTwoFactor, access: signedIn},
		{method: "POST", path: "/me/two-factor", h: s.postTwoFactor, access: signedIn, idem: idemIgnored, limit: "proofs", stepUp: true},
		// Recovery (docs/accounts.md "Recovery").
		{method: "POST", path: "/password-resets", h: s.createPasswordReset, access: public, idem: idemIgnored, limit: "password_resets"},
		{method: "POST", path: "/password-resets/check", h: s.checkPasswordReset, access: public, idem: idemIgnored, limit: "account_links"},
		{method: "POST", path: "/password-resets/confirm", h: s.confirmPasswordReset, access: public, idem: idemIgnored, limit: "account_links"},
		{method: "POST", path: "/email-changes/undo", h: s.undoEmailChange, access: public, idem: idemIgnored, limit: "account_links"},
		{method: "POST", path: "/me/password", h: s.changePassword, access: signedIn, idem: idemIgnored, limit: "proofs", stepUp: true},
		{method: "POST", path: "/me/email", h: s.changeEmail, access: signedIn, idem: idemIgnored, limit: "me_email", stepUp: true},
		{method: "POST", path: "/me/email/resend", h: s.resendEmailCode, access: signedIn, idem: idemIgnored, limit: "me_email_verify"},
		{method: "POST", path: "/me/email/verify", h: s.verifyEmailChange, access: signedIn, idem: idemIgnored, limit: "me_email_verify"},
		// Passkeys (docs/passkeys.md): adding one is a sensitive change.
		{method: "POST", path: "/me/passkeys/registration/options", h: s.passkeyRegistrationOptions, access: signedIn,
			idem: idemIgnored, limit: "passkey_register", stepUp: true},
		{method: "POST", path: "/me/passkeys", h: s.createPasskey, access: signedIn, idem: idemIgnored, limit: "passkey_register", stepUp: true},
		{method: "GET", path: "/me/passkeys", h: s.listPasskeys, access: signedIn},
		{method: "PATCH", path: "/me/passkeys/{id}", h: s.renamePasskey, access: signedIn},
		{method: "DELETE", path: "/me/passkeys/{id}", h: s.deletePasskey, access: signedIn, stepUp: true},
		{method: "POST", path: "/passkeys/authentication/options", h: s.passkeyAuthOptions, access: public, idem: idemIgnored, limit: "passkey_auth"},
		{method: "POST", path: "/passkeys/authentication/verify", h: s.passkeyAuthVerify, access: public, idem: idemIgnored, limit: "passkey_auth"},
		{method: "POST", path: "/businesses", h: s.createBusiness, access: signedIn},
		{method: "GET", path: "/businesses", h: s.listBusinesses, access: signedIn},
		{method: "PATCH", path: "/business", h: s.patchBusiness, access: teamManage},
		{method: "GET", path: "/public/referrals/{code}", h: s.getPublicReferral, access: public, limit: "public_referrals"},
	}
	if s.opts.Dev {
		rs = append(rs,
			route{method: "POST", path: "/devnet/clock", h: s.advanceClock, access: public},
			route{method: "POST", path: "/devnet/transfers", h: s.createDevnetTransfer, access: public},
			route{method: "POST", path: "/devnet/blocks", h: s.createDevnetBlocks, access: public},
			route{method: "POST", path: "/devnet/reorg", h: s.reorgDevnet, access: public},
			route{method: "GET", path: "/devnet/transactions/{network}/{hash}", h: s.getDevnetTransaction, access: public},
			route{method: "GET", path: "/devnet/emails", h: s.listDevEmails, access: public},
			route{method: "POST", path: "/devnet/challenges", h: s.createDevChallenge, access: public, idem: idemIgnored},
		)
	}
	return rs
}
