package web

import (
	"net/http"
	"strings"
	"time"
)

// Undoing an email change from the alert sent to the old address
// (docs/accounts.md "Recovery"): /dashboard/email-undo#token=…, the token
// in the fragment as on the reset page.

// emailUndoPage explains the undo and, once done, what it did.
type emailUndoPage struct {
	Done bool
	// Email is the address put back; ResetAt when a new password may be
	// chosen.
	Email, ResetAt string
}

// showEmailUndo serves GET /dashboard/email-undo.
func (h *Handler) showEmailUndo(d *dashReq) { d.emailUndoForm(http.StatusOK, emailUndoPage{}) }

func (d *dashReq) emailUndoForm(status int, p emailUndoPage) {
	d.page.Title, d.page.Data = "Undo an email change", p
	d.render(status, "dash/email_undo.html")
}

// undoEmail serves POST /dashboard/email-undo: POST /email-changes/undo.
func (h *Handler) undoEmail(d *dashReq) {
	var out struct {
		Email            string `json:"email"`
		ResetAvailableAt string `json:"reset_available_at"`
	}
	err := d.call("POST", "/email-changes/undo", map[string]string{"token": strings.TrimSpace(d.form.Get("token"))}, &out)
	if err != nil {
		d.gettingInRefused(err, func(status int) { d.emailUndoForm(status, emailUndoPage{}) })
		return
	}
	p := emailUndoPage{Done: true, Email: out.Email, ResetAt: out.ResetAvailableAt}
	if t, err := time.Parse(time.RFC3339, out.ResetAvailableAt); err == nil {
		p.ResetAt = t.UTC().Format("2 January 2006 at 15:04 UTC")
	}
	d.emailUndoForm(http.StatusOK, p)
}
