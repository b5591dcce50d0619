package web

import "net/http"

// routes lists every checkout page route on one screen (the dashboard's
// are in dash_routes.go). Each page is GET to show,
// POST to open a checkout (a plain form, so it works without JavaScript)
// and GET …/status for the live part that the page's script polls.
func (h *Handler) routes() {
	h.mux.Handle("GET /l/{code}", pageRoute(h.showLink))
	h.mux.Handle("POST /l/{code}", formRoute(h.openLinkCheckout))
	h.mux.Handle("GET /l/{code}/status", pageRoute(h.checkoutStatus))
	h.mux.Handle("GET /p/{code}", pageRoute(h.showPayment))
	h.mux.Handle("POST /p/{code}", formRoute(h.openPaymentCheckout))
	h.mux.Handle("GET /p/{code}/status", pageRoute(h.checkoutStatus))
	h.mux.Handle("GET /pay/card/{checkout}", pageRoute(h.goCard))
	h.mux.Handle("GET /static/", secure(staticFiles(), false))
	h.mux.Handle("GET /static/accent/{file}", secure(http.HandlerFunc(accentCSS), false))
	h.mux.Handle("GET /static/logo/{file}", secure(http.HandlerFunc(h.logo), false))
	if h.dev {
		h.mux.Handle("GET /dev/emails", pageRoute(h.devEmails))
	}
	h.dashRoutes()
	h.mux.Handle("/", pageRoute(h.notFound))
}

// Mount puts the pages on mux beside the API: the page paths and the
// static files.
func (h *Handler) Mount(mux *http.ServeMux) {
	for _, p := range []string{"/l/", "/p/", "/pay/card/", "/static/", "/dashboard/", "/dashboard"} {
		mux.Handle(p, h)
	}
	if h.dev {
		mux.Handle("/dev/", h)
	}
}

// pageRoute wraps a page handler with the security headers of a page.
func pageRoute(f http.HandlerFunc) http.Handler { return secure(f, true) }

// crossOrigin refuses forms that another site's page submits (by the
// browser's Sec-Fetch-Site and Origin headers): a checkout opens only from
// its own page.
var crossOrigin = http.NewCrossOriginProtection()

// formRoute is a page route that takes a form.
func formRoute(f http.HandlerFunc) http.Handler { return pageRoute(crossOrigin.Handler(f).ServeHTTP) }

// contentSecurityPolicy allows only this origin's script and styles, no
// inline code of either kind, images from here or data: URIs (the QR
// codes), and no framing. The pages make no third-party request.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the security headers. Pages are never cached: they show a
// live payment. Static files are fingerprinted and cached for a year.
func secure(next http.Handler, page bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		if page {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}
