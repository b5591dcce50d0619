package web

import "net/http"

// twoStepPage asks for the code of two-step sign-in (docs/two-step.md).
type twoStepPage struct {
	ChallengeID string
	Next        string
}

func (d *dashReq) twoStepForm(status int, p twoStepPage) {
	d.page.Title, d.page.Data = "Two-step sign-in", p
	d.render(status, "dash/twostep.html")
}

// finishTwoStep serves POST /dashboard/sign-in/two-step: the code of
// POST /sessions/two-factor, from the authenticator app or a recovery
// code.
func (h *Handler) finishTwoStep(d *dashReq) {
	p := twoStepPage{ChallengeID: d.form.Get("challenge_id"), Next: safeNext(d.form.Get("next"))}
	err := d.call("POST", "/sessions/two-factor",
		map[string]string{"challenge_id": p.ChallengeID, "code": d.form.Get("code")}, nil)
	if err == nil {
		http.Redirect(d.w, d.r, p.Next, http.StatusSeeOther)
		return
	}
	if d.refuse(err) {
		d.twoStepForm(d.status(err), p)
	}
}
