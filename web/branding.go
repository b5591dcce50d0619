package web

import (
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"payd"
)

// A business's branding on the checkout pages (its checkout settings'
// display_name, accent_color, support_email and logo): what the layout
// and the summary read of the public answer's business, and the two
// addresses that serve the colour and the logo from this origin.

// A business's accent colour (its checkout settings' accent_color) reaches
// the checkout pages as a stylesheet of this origin, since the pages'
// Content-Security-Policy allows no inline style: /static/accent/RRGGBB.css
// sets --accent. The address names the colour, so the answer never changes
// and is cached for a year; a colour the API would refuse (too little
// contrast on the page's white) is not found here either.

// AccentCSS is the address of the business's accent stylesheet, "" for
// payd's own colours.
func (b business) AccentCSS() string {
	if b.AccentColor == nil {
		return ""
	}
	c, err := payd.CheckAccent(*b.AccentColor)
	if err != nil || c == "" {
		return ""
	}
	return "/static/accent/" + c[1:] + ".css"
}

// accentCSS serves GET /static/accent/{file}: "RRGGBB.css" in lower case.
func accentCSS(w http.ResponseWriter, r *http.Request) {
	hex, ok := strings.CutSuffix(r.PathValue("file"), ".css")
	c, err := payd.CheckAccent("#" + hex)
	if !ok || err != nil || c != "#"+hex {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write([]byte(":root { --accent: " + c + "; --accent-ink: #ffffff; }\n"))
}

// Support is the business's support email, "" for none. (The template
// cannot pass the *string itself: the catalogue would print its address.)
func (b business) Support() string {
	if b.SupportEmail == nil {
		return ""
	}
	return *b.SupportEmail
}

// logoFile is the file name of a logo's address: its digest and extension.
var logoFile = regexp.MustCompile(`^([0-9a-f]{32})\.(png|jpg)$`)

// LogoPath is the path of the business's logo on this origin ("" for
// none): the public answer's logo_url is absolute on the public URL, and
// the page shows it from wherever the page itself is served.
func (b business) LogoPath() string {
	if b.LogoURL == nil {
		return ""
	}
	i := strings.LastIndex(*b.LogoURL, "/static/logo/")
	if i < 0 || !logoFile.MatchString((*b.LogoURL)[i+len("/static/logo/"):]) {
		return ""
	}
	return (*b.LogoURL)[i:]
}

// logo serves GET /static/logo/{file}: a business's checkout logo (GET
// /public/checkout-logos/{digest}) as an image. The address names the
// image's digest, so the answer is cached for a year.
func (h *Handler) logo(w http.ResponseWriter, r *http.Request) {
	m := logoFile.FindStringSubmatch(r.PathValue("file"))
	if m == nil {
		http.NotFound(w, r)
		return
	}
	var l struct {
		ContentType string `json:"content_type"`
		Data        string `json:"data"`
	}
	err := h.api.call(r, "GET", "/public/checkout-logos/"+m[1], nil, nil, &l)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		http.NotFound(w, r)
		return
	}
	data, derr := base64.StdEncoding.DecodeString(l.Data)
	if err != nil || derr != nil {
		http.Error(w, "the logo could not be read", http.StatusServiceUnavailable)
		return
	}
	if want := map[string]string{"png": "image/png", "jpg": "image/jpeg"}[m[2]]; l.ContentType != want {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", l.ContentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(data)
}
