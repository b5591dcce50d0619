package web

import (
	"net/http"
	"strings"
)

// newBusinessPage is the form that makes a business.
type newBusinessPage struct{ Name string }

// showNewBusiness serves GET /dashboard/businesses/new.
func (h *Handler) showNewBusiness(d *dashReq) {
	d.page.Title, d.page.Data = "Create a business", newBusinessPage{}
	d.render(http.StatusOK, "dash/business_new.html")
}

// createBusiness serves POST /dashboard/businesses/new: POST /businesses,
// then the new business's home.
func (h *Handler) createBusiness(d *dashReq) {
	p := newBusinessPage{Name: strings.TrimSpace(d.form.Get("name"))}
	var b dashBusiness
	if err := d.call("POST", "/businesses", map[string]string{"name": p.Name}, &b); err != nil {
		if d.refuse(err) {
			d.page.Title, d.page.Data = "Create a business", p
			d.render(d.status(err), "dash/business_new.html")
		}
		return
	}
	d.redirect(dashBase+"/"+b.ID+"/", "business_created")
}
