package web

import "net/http"

// showLink serves GET /l/{code}: the link's page, with the checkout of
// ?checkout= when there is one.
func (h *Handler) showLink(w http.ResponseWriter, r *http.Request) {
	t, err := h.loadLink(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.show(w, r, t)
}

// loadLink reads the link's public view.
func (h *Handler) loadLink(r *http.Request) (*target, error) {
	code := r.PathValue("code")
	l, err := h.api.publicLink(r, code)
	if err != nil {
		return nil, err
	}
	m := language(r)
	t := &target{page: basePage(m, "/l/"+l.Code, l.Name, l.Description, l.Amount, l.Currency, l.offer),
		view: "link.html", of: pageOf{link: true, code: l.Code}}
	if !t.Accepting {
		t.Notice = m.T("choose.none")
	}
	return t, nil
}
