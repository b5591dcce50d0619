package sandbox

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"net/http"
	"time"

	"payd"
)

// The sandbox's pages: the card form a provider would host, and its
// challenge step. They work without script, and post plain forms.

//go:embed assets
var assets embed.FS

// pages holds the parsed page template and the style sheet.
type pages struct {
	page *template.Template
	css  []byte
}

func newPages() (*pages, error) {
	page, err := template.ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, err
	}
	return &pages{page: page, css: css}, nil
}

// pagePolicy is the pages' Content-Security-Policy: no script at all, the
// style sheet and forms of payd's own origin only.
const pagePolicy = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxForm bounds a form's body: a card number and a few short fields.
const maxForm = 4 << 10

// Handler serves the card pages under /sandbox/card/: GET
// /sandbox/card/{session} shows the session (its card form, its challenge
// step, or how it ended), POST there takes the card form, and POST
// /sandbox/card/{session}/challenge the challenge step's answer.
func (p *Provider) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PagePath+"style.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(p.pages.css)
	})
	mux.HandleFunc("GET "+PagePath+"{session}", p.show)
	mux.HandleFunc("POST "+PagePath+"{session}", p.pay)
	mux.HandleFunc("POST "+PagePath+"{session}/challenge", p.challenge)
	return mux
}

// view is what the page template shows.
type view struct {
	// Mode is form, challenge, status or missing.
	Mode    string
	Title   string
	Session *payd.CardSandboxSession
	Charge  string
	Coin    string
	// Error is the form's error; Number and Name what was typed.
	Error, Number, Name, Expiry string
	// Heading and Message say how the session stands (status).
	Heading, Message string
}

// show serves GET /sandbox/card/{session}.
func (p *Provider) show(w http.ResponseWriter, r *http.Request) {
	s, ok := p.session(w, r)
	if !ok {
		return
	}
	p.render(w, http.StatusOK, p.viewOf(s))
}

// pay serves POST /sandbox/card/{session}: the card form. A number that is
// no test card shows the form again with an error and changes nothing;
// otherwise the test card decides what happens, payd is told (Notify),
// and the customer goes back to the checkout (303), or on to the
// challenge step.
func (p *Provider) pay(w http.ResponseWriter, r *http.Request) {
	s, ok := p.form(w, r, payd.CardAwaiting)
	if !ok {
		return
	}
	ctx := r.Context()
	number, card, err := lookupCard(r.PostForm.Get("number"))
	if err != nil {
		v := p.viewOf(s)
		v.Error, v.Number, v.Name, v.Expiry = err.Error(), r.PostForm.Get("number"), r.PostForm.Get("name"), r.PostForm.Get("expiry")
		p.render(w, http.StatusUnprocessableEntity, v)
		return
	}
	s.Last4 = number[len(number)-4:]
	switch card.outcome {
	case declines:
		p.decline(w, r, s, payd.CardAwaiting, card.code)
	case challenges:
		if !p.moved(w, r, s, payd.CardSandboxState(payd.CardAwaiting), payd.CardSandboxState(payd.CardChallenge)) {
			return
		}
		p.notify(ctx, s.ID)
		http.Redirect(w, r, PagePath+s.ID, http.StatusSeeOther)
	case delays:
		due := p.clock.Now().Add(Delay)
		s.PayAt = &due
		p.charge(w, r, s, payd.CardAwaiting)
	default:
		p.charge(w, r, s, payd.CardAwaiting)
	}
}

// challenge serves POST /sandbox/card/{session}/challenge: result
// complete pays, fail declines with challenge_failed; either way payd is
// told and the customer goes back to the checkout.
func (p *Provider) challenge(w http.ResponseWriter, r *http.Request) {
	s, ok := p.form(w, r, payd.CardChallenge)
	if !ok {
		return
	}
	switch result := r.PostForm.Get("result"); {
	case result == "complete":
		p.charge(w, r, s, payd.CardChallenge)
	case result == "fail":
		p.decline(w, r, s, payd.CardChallenge, payd.CardChallengeFailed)
	default:
		http.Error(w, "Choose Complete or Fail.", http.StatusBadRequest)
	}
}

// form reads a page's form posted for a session in state: a session
// already past it (paid, declined, or on to the challenge step) sends the
// customer to its page, which says how it stands, and one past its end is
// declined with session_expired. It reports whether the form's handler
// goes on.
func (p *Provider) form(w http.ResponseWriter, r *http.Request, state payd.CardStatus) (*payd.CardSandboxSession, bool) {
	s, ok := p.session(w, r)
	if !ok {
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form could not be read.", http.StatusBadRequest)
		return nil, false
	}
	switch {
	case s.State != payd.CardSandboxState(state):
		http.Redirect(w, r, PagePath+s.ID, http.StatusSeeOther)
		return nil, false
	case p.expired(s):
		p.decline(w, r, s, state, payd.CardSessionExpired)
		return nil, false
	}
	return s, true
}

// charge moves s from state from to processing and tells payd, then,
// unless the coin is due later, sends it and tells payd again (a failed
// send is tried again by a poll RetryAfter later), and sends the customer
// back.
func (p *Provider) charge(w http.ResponseWriter, r *http.Request, s *payd.CardSandboxSession, from payd.CardStatus) {
	ctx := r.Context()
	if !p.moved(w, r, s, payd.CardSandboxState(from), payd.CardSandboxState(payd.CardProcessing)) {
		return
	}
	p.notify(ctx, s.ID)
	if s.PayAt == nil {
		if _, err := p.deliverCoin(ctx, s); err != nil {
			p.log.ErrorContext(ctx, "sandbox: delivering a card payment's coin failed; a poll tries again",
				"session", s.ID, "error", err)
		} else {
			p.notify(ctx, s.ID)
		}
	}
	http.Redirect(w, r, s.ReturnURL, http.StatusSeeOther)
}

// decline moves s from state from to declined with code, tells payd and
// sends the customer back.
func (p *Provider) decline(w http.ResponseWriter, r *http.Request, s *payd.CardSandboxSession, from payd.CardStatus, code string) {
	s.DeclineCode = code
	if !p.moved(w, r, s, payd.CardSandboxState(from), payd.CardSandboxState(payd.CardDeclined)) {
		return
	}
	p.notify(r.Context(), s.ID)
	http.Redirect(w, r, s.ReturnURL, http.StatusSeeOther)
}

// moved moves s on and reports whether it did; when another request moved
// it first, the customer is shown the page as it now stands.
func (p *Provider) moved(w http.ResponseWriter, r *http.Request, s *payd.CardSandboxSession, from, to payd.CardSandboxState) bool {
	ok, err := p.move(r.Context(), s, from, to)
	if err != nil {
		p.fail(w, r, err)
		return false
	}
	if !ok {
		http.Redirect(w, r, PagePath+s.ID, http.StatusSeeOther)
	}
	return ok
}

// expired reports whether the session's page is past its end.
func (p *Provider) expired(s *payd.CardSandboxSession) bool {
	return !p.clock.Now().Before(s.ExpiresAt)
}

// session reads the path's session, answering 404 when there is none.
func (p *Provider) session(w http.ResponseWriter, r *http.Request) (*payd.CardSandboxSession, bool) {
	s, err := p.store.CardSandboxSession(r.Context(), r.PathValue("session"))
	if payd.IsNotFound(err) {
		p.render(w, http.StatusNotFound, view{Mode: "missing", Title: "No such payment page"})
		return nil, false
	} else if err != nil {
		p.fail(w, r, err)
		return nil, false
	}
	return s, true
}

// fail answers 500 and logs why.
func (p *Provider) fail(w http.ResponseWriter, r *http.Request, err error) {
	p.log.ErrorContext(r.Context(), "sandbox: a card page failed", "path", r.URL.Path, "error", err)
	http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
}

// viewOf is the page of a session as it stands.
func (p *Provider) viewOf(s *payd.CardSandboxSession) view {
	v := view{Session: s, Charge: s.Currency.Format(s.Amount) + " " + string(s.Currency),
		Coin: s.Deliver.String() + " " + string(s.Deliver.Asset) + " on " + string(s.Network)}
	switch payd.CardStatus(s.State) {
	case payd.CardAwaiting:
		v.Mode, v.Title = "form", "Pay by card"
		if p.expired(s) {
			v.Mode, v.Heading, v.Message = "status", "This payment page expired", declineMessages[payd.CardSessionExpired]
		}
	case payd.CardChallenge:
		v.Mode, v.Title = "challenge", "Confirm the payment with your bank"
	case payd.CardDeclined:
		v.Mode, v.Title, v.Heading, v.Message = "status", "Card declined", "Card declined", declineMessages[s.DeclineCode]
	case payd.CardDelivered:
		v.Mode, v.Title, v.Heading = "status", "Paid", "Paid"
		v.Message = "Your card was charged and the coin was sent in transaction " + s.TxHash + "."
	default: // processing, delivering
		v.Mode, v.Title, v.Heading = "status", "Payment processing", "Payment processing"
		v.Message = "Your card was charged; the coin is on its way."
		if s.PayAt != nil {
			v.Message += " It is sent at " + s.PayAt.UTC().Format(time.RFC1123) + "."
		}
	}
	if v.Title == "" {
		v.Title = v.Heading
	}
	return v
}

// render writes the page.
func (p *Provider) render(w http.ResponseWriter, status int, v view) {
	var buf bytes.Buffer
	if err := p.pages.page.Execute(&buf, v); err != nil {
		p.log.ErrorContext(context.Background(), "sandbox: a card page did not render", "error", err)
		http.Error(w, "Something went wrong; try again.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", pagePolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
