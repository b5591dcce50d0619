package web

import "net/http"

// notFound serves every other path under the pages' prefixes.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	m := language(r)
	h.render(w, http.StatusNotFound, "notfound.html", &page{M: m, Title: m.T("notfound.title")})
}
