package web

import (
	"errors"
	"net/http"
	"net/url"
	"time"
)

// devEmailsPage is the development page of kept emails (/dev/emails, only
// with --dev): for people trying payd, who have no mailbox for the
// sign-up codes and links payd would send. It reads GET
// /devnet/emails?to= like any other client.
type devEmailsPage struct {
	// page is what the shared layout reads (language, title, branding);
	// its Error says why the list could not be shown.
	page
	To     string
	Asked  bool
	Emails []devEmail
}

// devEmail is one kept email as GET /devnet/emails answers it.
type devEmail struct {
	Subject   string    `json:"subject"`
	Text      string    `json:"text"`
	Type      string    `json:"type"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// Sent is when the email was made, in UTC.
func (e devEmail) Sent() string { return e.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC") }

// devEmails lists the kept emails of the address in ?to=, newest first;
// without one it shows the form alone.
func (h *Handler) devEmails(w http.ResponseWriter, r *http.Request) {
	m := language(r)
	p := &devEmailsPage{page: page{M: m, Title: m.T("devemails.title")}, To: r.URL.Query().Get("to")}
	if p.To != "" {
		p.Asked = true
		err := h.api.call(r, http.MethodGet, "/devnet/emails?to="+url.QueryEscape(p.To), nil, nil, &p.Emails)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status < 500 {
			p.Error = m.T("devemails.bad_address")
		} else if err != nil {
			h.log.Error("dev emails", "err", err)
			p.Error = m.T("devemails.failed")
		}
	}
	h.render(w, http.StatusOK, "devemails.html", p)
}
