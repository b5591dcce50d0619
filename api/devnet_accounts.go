package api

import (
	"net/http"

	"payd"
)

// The development routes of accounts (CONTRACT.md, --dev only): the kept
// emails, and bot-check tokens for scripts and tests.

// devEmail is a kept email as GET /devnet/emails lists it.
type devEmail struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	To        string `json:"to"`
	Subject   string `json:"subject"`
	Text      string `json:"text"`
	HTML      string `json:"html"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	CreatedAt Time   `json:"created_at"`
}

// devEmailLimit bounds one listing: the newest are what a person trying
// payd looks for.
const devEmailLimit = 100

// listDevEmails serves GET /devnet/emails?to=ADDRESS, newest first.
func (s *Server) listDevEmails(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	if err := refuseUnknownParams(v, []string{"to"}); err != nil {
		return err
	}
	to := v.Get("to")
	if err := payd.CheckEmail("to", to); err != nil {
		return err
	}
	es, err := s.store.ListEmails(r.Context(), to, devEmailLimit)
	if err != nil {
		return err
	}
	out := objectList{Data: make([]any, 0, len(es))}
	for _, e := range es {
		out.Data = append(out.Data, devEmail{Kind: "email", ID: e.ID, To: e.To, Subject: e.Subject, Text: e.Text,
			HTML: e.HTML, Type: e.Kind, Status: string(e.Status), CreatedAt: Time(e.CreatedAt)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type devChallengeRequest struct {
	Form string `json:"form"`
}

type devChallenge struct {
	Kind  string `json:"kind"`
	Form  string `json:"form"`
	Token string `json:"token"`
}

// createDevChallenge serves POST /devnet/challenges {form}: a bot-check
// token good once, for that form only.
func (s *Server) createDevChallenge(w http.ResponseWriter, r *http.Request) error {
	var req devChallengeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	form, err := payd.ParseChallengeForm(req.Form)
	if err != nil {
		return err
	}
	if s.opts.DevChallenges == nil {
		return payd.Errorf(payd.ErrTemporarilyUnavailable, "this server does not issue dev bot-check tokens: it was started with another --challenge")
	}
	token, err := s.opts.DevChallenges.Issue(r.Context(), form)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, single{devChallenge{Kind: "challenge", Form: string(form), Token: token}})
	return nil
}
