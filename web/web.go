// Package web serves the hosted checkout pages: the page of a payment link
// (/l/{code}) and of a payment made with the API (/p/{code}), where a
// customer chooses a coin, sees the quote and watches the payment arrive.
// The pages are server-rendered with html/template from embedded files and
// read everything through the public JSON API, in process.
package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"

	"payd/clock"
)

// Options are the pages' dependencies; cmd/payd fills them.
type Options struct {
	// API is the JSON API's handler; the pages call its public routes.
	API http.Handler
	// APIBase is the path the API is mounted at (api.BasePath).
	APIBase string
	Clock   clock.Clock
	Log     *slog.Logger
	// Dev serves the development pages (/dev/emails), as serve --dev does.
	Dev bool
	// Challenge is the bot check the dashboard's getting-in forms show.
	Challenge ChallengeWidget
}

// ChallengeWidget is the bot check of the sign-up, sign-in and reset forms
// (docs/bot-check.md): Kind "dev" (tokens the page asks the API for, as
// serve --dev issues), "turnstile" or "hcaptcha" (the provider's widget,
// with SiteKey), or "" for none.
type ChallengeWidget struct {
	Kind, SiteKey string
}

// Handler serves the checkout pages and their static files.
type Handler struct {
	api   client
	clock clock.Clock
	log   *slog.Logger
	views *views
	mux   *http.ServeMux
	dev   bool
	// challenge is the dashboard's bot check.
	challenge ChallengeWidget
}

// New builds the pages' handler; it fails only when the embedded templates
// do not parse.
func New(o Options) (*Handler, error) {
	if o.API == nil || o.Clock == nil || o.Log == nil || o.APIBase == "" {
		return nil, errors.New("web.New: API, APIBase, Clock and Log are required")
	}
	v, err := loadViews()
	if err != nil {
		return nil, err
	}
	h := &Handler{api: client{api: o.API, apiBase: o.APIBase}, clock: o.Clock, log: o.Log, views: v,
		mux: http.NewServeMux(), dev: o.Dev, challenge: o.Challenge}
	h.routes()
	return h, nil
}

// ServeHTTP serves a page request; Mount decides which requests come here.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// render writes a full page with its status.
func (h *Handler) render(w http.ResponseWriter, status int, name string, p any) {
	h.write(w, status, name, "layout", p)
}

// write executes one template into a buffer first, so that a template
// error becomes a clean 500 rather than half a page.
func (h *Handler) write(w http.ResponseWriter, status int, name, tmpl string, p any) {
	var buf bytes.Buffer
	if err := h.views.execute(&buf, name, tmpl, p); err != nil {
		h.log.Error("render page", slog.String("template", name), slog.Any("err", err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// newIdemKey is the Idempotency-Key a rendered form carries, so a form sent
// twice opens one checkout.
func newIdemKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "web_" + hex.EncodeToString(b)
}
