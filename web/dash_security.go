package web

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// Sign-in and security (/dashboard/account/security): two-step sign-in
// (docs/two-step.md), passkeys (docs/passkeys.md) and the sessions
// signed in to the account.

// twoFactorState is GET /me/two-factor, and the answers of
// POST /me/two-factor that make recovery codes.
type twoFactorState struct {
	Enabled           bool     `json:"enabled"`
	EnabledAt         *string  `json:"enabled_at"`
	RecoveryCodesLeft int      `json:"recovery_codes_left"`
	RecoveryCodes     []string `json:"recovery_codes"`
}

type dashPasskey struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Transports     []string `json:"transports"`
	BackupEligible bool     `json:"backup_eligible"`
	CreatedAt      string   `json:"created_at"`
	LastUsedAt     *string  `json:"last_used_at"`
}

type dashSessionRow struct {
	ID         string `json:"id"`
	Current    bool   `json:"current"`
	Method     string `json:"method"`
	UserAgent  string `json:"user_agent"`
	IP         string `json:"ip"`
	CreatedAt  string `json:"created_at"`
	LastSeenAt string `json:"last_seen_at"`
}

// Device names the browser of a user agent in a few words.
func (s dashSessionRow) Device() string {
	ua := s.UserAgent
	if ua == "" {
		return "Unknown device"
	}
	browser := "A browser"
	for _, b := range []struct{ key, name string }{{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"},
		{"HeadlessChrome/", "Chromium"}, {"Chromium/", "Chromium"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}} {
		if strings.Contains(ua, b.key) {
			browser = b.name
			break
		}
	}
	if !strings.Contains(ua, "Mozilla/") {
		browser = ua
		if len(browser) > 40 {
			browser = browser[:40] + "…"
		}
	}
	for _, o := range []struct{ key, name string }{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"},
		{"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"}} {
		if strings.Contains(ua, o.key) {
			return browser + " on " + o.name
		}
	}
	return browser
}

// securityPage is the security page.
type securityPage struct {
	TwoFactor twoFactorState
	Passkeys  []dashPasskey
	Sessions  []dashSessionRow
	// Form names the form a refusal is about: setup, disable, codes,
	// passkey, sessions.
	Form string
}

// showSecurity serves GET /dashboard/account/security.
func (h *Handler) showSecurity(d *dashReq) { d.security(http.StatusOK, securityPage{}) }

// security renders the page with what the API says now.
func (d *dashReq) security(status int, p securityPage) {
	var pk, ses struct {
		Data json.RawMessage `json:"data"`
	}
	if err := d.call("GET", "/me/two-factor", nil, &p.TwoFactor); err != nil {
		d.fail(err)
		return
	}
	if err := d.call("GET", "/me/passkeys", nil, whole{&pk}); err != nil {
		d.fail(err)
		return
	}
	if err := d.call("GET", "/sessions", nil, whole{&ses}); err != nil {
		d.fail(err)
		return
	}
	_ = json.Unmarshal(pk.Data, &p.Passkeys)
	_ = json.Unmarshal(ses.Data, &p.Sessions)
	d.page.Title, d.page.Data = "Sign-in and security", p
	d.render(status, "dash/security.html")
}

// twoStepSetupPage shows the secret of a two-step setup as a QR code and
// as text, and asks for its first code.
type twoStepSetupPage struct {
	URI, Secret string
	QR          template.URL
	ExpiresAt   string
}

func (d *dashReq) twoStepSetup(status int, p twoStepSetupPage) {
	p.QR = qrDataURI(p.URI)
	d.page.Title, d.page.Data = "Turn on two-step sign-in", p
	d.render(status, "dash/twostep_setup.html")
}

// startTwoStep serves POST /dashboard/account/security/two-step/setup:
// POST /me/two-factor {action: setup} makes a secret kept with this
// session for 10 minutes.
func (h *Handler) startTwoStep(d *dashReq) {
	var out struct {
		Secret    string `json:"secret"`
		URI       string `json:"uri"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := d.call("POST", "/me/two-factor", map[string]string{"action": "setup"}, &out); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "setup"})
		}
		return
	}
	d.twoStepSetup(http.StatusOK, twoStepSetupPage{URI: out.URI, Secret: out.Secret, ExpiresAt: out.ExpiresAt})
}

// recoveryPage shows a new set of recovery codes, once.
type recoveryPage struct {
	Codes    []string
	Download template.URL
	Text     string
}

func (d *dashReq) recoveryCodes(codes []string) {
	text := strings.Join(codes, "\n") + "\n"
	p := recoveryPage{Codes: codes, Text: text,
		Download: template.URL("data:text/plain;charset=utf-8," + url.PathEscape("payd recovery codes for "+d.page.Me.Email+"\n\n"+text))}
	d.page.Title, d.page.Data = "Your recovery codes", p
	d.render(http.StatusOK, "dash/recovery_codes.html")
}

// enableTwoStep serves POST /dashboard/account/security/two-step/enable:
// the first code turns it on, and the answer shows the recovery codes.
// The form carries the setup's URI and secret back, so a wrong code shows
// the same QR code again.
func (h *Handler) enableTwoStep(d *dashReq) {
	var out twoFactorState
	err := d.call("POST", "/me/two-factor", map[string]string{"action": "enable", "code": d.form.Get("code")}, &out)
	if err != nil {
		if d.refuse(err) {
			d.twoStepSetup(d.status(err), twoStepSetupPage{URI: d.form.Get("uri"), Secret: d.form.Get("secret")})
		}
		return
	}
	d.page.Flash = dashFlash["two_step_on"]
	d.recoveryCodes(out.RecoveryCodes)
}

// disableTwoStep serves POST /dashboard/account/security/two-step/disable.
func (h *Handler) disableTwoStep(d *dashReq) {
	body := map[string]any{"action": "disable", "code": d.form.Get("code")}
	if d.page.Me.HasPassword {
		body["current_password"] = d.form.Get("current_password")
	}
	if err := d.call("POST", "/me/two-factor", body, nil); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "disable"})
		}
		return
	}
	d.redirect(dashBase+"/account/security", "two_step_off")
}

// newRecoveryCodes serves POST /dashboard/account/security/two-step/recovery-codes.
func (h *Handler) newRecoveryCodes(d *dashReq) {
	var out twoFactorState
	if err := d.call("POST", "/me/two-factor", map[string]string{"action": "recovery_codes", "code": d.form.Get("code")}, &out); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "codes"})
		}
		return
	}
	d.page.Flash = dashFlash["recovery_codes_new"]
	d.recoveryCodes(out.RecoveryCodes)
}

// passkeyNewPage carries the creation options to the browser's script,
// which asks the authenticator and posts its answer back.
type passkeyNewPage struct {
	Options string // the publicKey member, JSON
	Name    string
}

// startPasskey serves POST /dashboard/account/security/passkeys/new: the
// creation options of POST /me/passkeys/registration/options (a
// sensitive change: the step-up asks for the password first).
func (h *Handler) startPasskey(d *dashReq) {
	var out struct {
		PublicKey json.RawMessage `json:"publicKey"`
	}
	if err := d.call("POST", "/me/passkeys/registration/options", map[string]any{}, &out); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "passkey"})
		}
		return
	}
	d.page.Title, d.page.Data = "Add a passkey", passkeyNewPage{Options: string(out.PublicKey), Name: d.form.Get("name")}
	d.render(http.StatusOK, "dash/passkey_new.html")
}

// addPasskey serves POST /dashboard/account/security/passkeys: the
// authenticator's answer, posted by the script, to POST /me/passkeys.
func (h *Handler) addPasskey(d *dashReq) {
	body := map[string]any{"credential": json.RawMessage(d.form.Get("credential"))}
	if !json.Valid([]byte(d.form.Get("credential"))) {
		body["credential"] = nil
	}
	if n := strings.TrimSpace(d.form.Get("name")); n != "" {
		body["name"] = n
	}
	if err := d.call("POST", "/me/passkeys", body, nil); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "passkey"})
		}
		return
	}
	d.redirect(dashBase+"/account/security", "passkey_added")
}

// renamePasskey serves POST /dashboard/account/security/passkeys/{id}/rename.
func (h *Handler) renamePasskey(d *dashReq) {
	id := d.r.PathValue("id")
	if err := d.call("PATCH", "/me/passkeys/"+url.PathEscape(id), map[string]string{"name": strings.TrimSpace(d.form.Get("name"))}, nil); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "passkey"})
		}
		return
	}
	d.redirect(dashBase+"/account/security", "passkey_renamed")
}

// deletePasskey serves POST /dashboard/account/security/passkeys/{id}/delete.
func (h *Handler) deletePasskey(d *dashReq) {
	id := d.r.PathValue("id")
	if err := d.call("DELETE", "/me/passkeys/"+url.PathEscape(id), nil, nil); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "passkey"})
		}
		return
	}
	d.redirect(dashBase+"/account/security", "passkey_deleted")
}

// endSession serves POST /dashboard/account/security/sessions/{id}/end.
func (h *Handler) endSession(d *dashReq) {
	if err := d.call("DELETE", "/sessions/"+url.PathEscape(d.r.PathValue("id")), nil, nil); err != nil {
		if d.refuse(err) {
			d.security(d.status(err), securityPage{Form: "sessions"})
		}
		return
	}
	d.redirect(dashBase+"/account/security", "session_ended")
}

// endOtherSessions serves POST /dashboard/account/security/sessions/end-others:
// every session but this one, one DELETE each.
func (h *Handler) endOtherSessions(d *dashReq) {
	var list struct {
		Data []dashSessionRow `json:"data"`
	}
	if err := d.call("GET", "/sessions", nil, whole{&list}); err != nil {
		d.fail(err)
		return
	}
	for _, s := range list.Data {
		if s.Current {
			continue
		}
		if err := d.call("DELETE", "/sessions/"+url.PathEscape(s.ID), nil, nil); err != nil && !isNotFound(err) {
			if d.refuse(err) {
				d.security(d.status(err), securityPage{Form: "sessions"})
			}
			return
		}
	}
	d.redirect(dashBase+"/account/security", "sessions_ended")
}
