package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"payd"
)

// The Developers section's webhooks (docs/dashboard.md "Developers and
// wallet"): the business's endpoints, each with its page (turn on or off,
// rotate the secret, send a test event, delete) and its delivery log; a
// delivery's page shows what was sent and every attempt, and resends it.

// dashWebhook is a webhook endpoint as the API answers it.
type dashWebhook struct {
	ID                      string   `json:"id"`
	URL                     string   `json:"url"`
	EventTypes              []string `json:"event_types"`
	Description             string   `json:"description"`
	Enabled                 bool     `json:"enabled"`
	Secret                  string   `json:"secret"`
	PreviousSecretExpiresAt *string  `json:"previous_secret_expires_at"`
	CreatedAt               string   `json:"created_at"`
}

// dashDelivery is a webhook delivery as the API answers it.
type dashDelivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Subject   struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	} `json:"subject"`
	Status         string `json:"status"`
	ResponseStatus *int   `json:"response_status"`
	DurationMS     *int64 `json:"duration_ms"`
	Attempt        int    `json:"attempt"`
	Attempts       []struct {
		At             string  `json:"at"`
		ResponseStatus *int    `json:"response_status"`
		DurationMS     int64   `json:"duration_ms"`
		Trigger        string  `json:"trigger"`
		Error          *string `json:"error"`
	} `json:"attempts"`
	NextRetryAt    *string           `json:"next_retry_at"`
	RequestHeaders map[string]string `json:"request_headers"`
	Payload        json.RawMessage   `json:"payload"`
	Test           bool              `json:"test"`
	CreatedAt      string            `json:"created_at"`
}

// hookRow is an endpoint as the pages show it, with the outcome of its
// latest delivery.
type hookRow struct {
	dashWebhook
	Created string
	Events  string
	// Health is the latest delivery's outcome: "" without deliveries.
	Health  string
	Failing bool
	// OldUntil is when the secret replaced by the last rotation stops
	// signing.
	OldUntil string
}

// deliveryRow is a delivery as the pages show it.
type deliveryRow struct {
	dashDelivery
	Created, Response, Next string
	Failed, OK              bool
	Rows                    []attemptRow
	Headers                 []formField
	Pretty                  string
}

// attemptRow is one attempt of a delivery.
type attemptRow struct {
	N                           int
	At, Response, Time, Trigger string
	OK                          bool
}

// eventGroup is a group of event types for the create form's
// checkboxes.
type eventGroup struct {
	Label string
	Types []eventChoice
}

type eventChoice struct {
	Type, Info, ID string
	Checked        bool
}

// hooksPage is the webhooks page: the endpoints and the form for a new
// one.
type hooksPage struct {
	devSub
	Hooks     []hookRow
	URL, Desc string
	All       bool
	Groups    []eventGroup
	HasMore   bool
}

// hookPage is one endpoint's page with its delivery log.
type hookPage struct {
	devSub
	Hook       hookRow
	Deliveries []deliveryRow
	Secret     string
	Next       string // the log's next page's cursor
	Status     string // the log's status filter
	Statuses   []string
}

// deliveryPage is one delivery's page.
type deliveryPage struct {
	devSub
	Hook     hookRow
	Delivery deliveryRow
}

// Shown is the secret part's data.
func (p hookPage) Shown() shownSecret {
	return shownSecret{Label: "The endpoint's signing secret", Value: p.Secret, Webhook: true}
}

// groupLabels names the groups of event types, by the part before the dot.
var groupLabels = map[string]string{"payment": "Payments", "checkout": "Checkouts", "customer": "Customers", "link": "Payment links"}

// eventGroups lists the catalogue (payd.EventCatalogue) by subject, with
// checked ticked.
func eventGroups(checked []string) []eventGroup {
	var out []eventGroup
	for _, e := range payd.EventCatalogue {
		g, _, _ := strings.Cut(e.Type, ".")
		if len(out) == 0 || out[len(out)-1].Label != groupLabels[g] {
			out = append(out, eventGroup{Label: groupLabels[g]})
		}
		last := &out[len(out)-1]
		last.Types = append(last.Types, eventChoice{Type: e.Type, Info: e.Description,
			ID: "event-" + strings.ReplaceAll(e.Type, ".", "-"), Checked: slices.Contains(checked, e.Type)})
	}
	return out
}

func toHookRow(w dashWebhook) hookRow {
	r := hookRow{dashWebhook: w, Created: utcText(w.CreatedAt), Events: strings.Join(w.EventTypes, ", ")}
	if len(w.EventTypes) == 1 && w.EventTypes[0] == "*" {
		r.Events = "Every event"
	}
	if w.PreviousSecretExpiresAt != nil {
		r.OldUntil = utcText(*w.PreviousSecretExpiresAt)
	}
	return r
}

// health reads the endpoint's latest delivery.
func (d *dashReq) health(r *hookRow) error {
	var list dashList[dashDelivery]
	if err := d.call("GET", "/webhook-deliveries?limit=1&webhook_id="+url.QueryEscape(r.ID), nil, whole{&list}); err != nil {
		return err
	}
	if len(list.Data) == 0 {
		return nil
	}
	switch list.Data[0].Status {
	case "succeeded":
		r.Health = "Delivering"
	case "pending":
		r.Health = "Sending"
	case "retrying":
		r.Health, r.Failing = "Failing: retrying", true
	case "failed":
		r.Health, r.Failing = "Failing: last delivery failed", true
	}
	return nil
}

// showHooks serves GET /dashboard/{biz}/developers/webhooks.
func (h *Handler) showHooks(d *dashReq) {
	h.renderHooks(d, hooksPage{Groups: eventGroups(nil)}, http.StatusOK)
}

func (h *Handler) renderHooks(d *dashReq, p hooksPage, status int) {
	var list dashList[dashWebhook]
	if err := d.call("GET", "/webhooks?limit=100", nil, whole{&list}); err != nil {
		d.fail(err)
		return
	}
	p.HasMore = list.HasMore
	for _, w := range list.Data {
		r := toHookRow(w)
		if err := d.health(&r); err != nil {
			d.fail(err)
			return
		}
		p.Hooks = append(p.Hooks, r)
	}
	p.Sub = "webhooks"
	d.page.Title, d.page.Section, d.page.Data = "Webhooks", "developers", p
	d.render(status, "dash/webhooks.html")
}

// createHook serves POST /dashboard/{biz}/developers/webhooks: POST
// /webhooks, and the endpoint's page with its secret on this answer only.
func (h *Handler) createHook(d *dashReq) {
	types := d.form["event"]
	p := hooksPage{URL: strings.TrimSpace(d.form.Get("url")), Desc: d.form.Get("description"),
		All: d.form.Get("all") == "yes", Groups: eventGroups(types)}
	if p.All {
		types = []string{"*"}
	}
	if len(types) == 0 {
		d.page.Error, d.page.Field = "Choose the events to send, or every event.", "event_types"
		h.renderHooks(d, p, http.StatusBadRequest)
		return
	}
	var w dashWebhook
	body := map[string]any{"url": p.URL, "event_types": types, "description": p.Desc}
	if err := d.call("POST", "/webhooks", body, &w); err != nil {
		if d.refuse(err) {
			h.renderHooks(d, p, d.status(err))
		}
		return
	}
	d.page.Flash = "The endpoint is added. Copy its signing secret now: it is shown only this once."
	h.renderHook(d, hookPage{Hook: toHookRow(w), Secret: w.Secret}, http.StatusOK)
}

// findHook reads the endpoint named in the path.
func (d *dashReq) findHook() (hookRow, bool) {
	var w dashWebhook
	if err := d.call("GET", "/webhooks/"+url.PathEscape(d.r.PathValue("id")), nil, &w); err != nil {
		d.fail(err)
		return hookRow{}, false
	}
	r := toHookRow(w)
	if err := d.health(&r); err != nil {
		d.fail(err)
		return hookRow{}, false
	}
	return r, true
}

// showHook serves GET /dashboard/{biz}/developers/webhooks/{id}.
func (h *Handler) showHook(d *dashReq) {
	r, ok := d.findHook()
	if !ok {
		return
	}
	h.renderHook(d, hookPage{Hook: r}, http.StatusOK)
}

func (h *Handler) renderHook(d *dashReq, p hookPage, status int) {
	q := url.Values{"webhook_id": {p.Hook.ID}, "limit": {"20"}}
	if s := d.r.URL.Query().Get("status"); slices.Contains([]string{"pending", "retrying", "succeeded", "failed"}, s) {
		q.Set("status", s)
		p.Status = s
	}
	if c := d.r.URL.Query().Get("cursor"); c != "" && d.r.Method == http.MethodGet {
		q.Set("cursor", c)
	}
	var list dashList[dashDelivery]
	if err := d.call("GET", "/webhook-deliveries?"+q.Encode(), nil, whole{&list}); err != nil {
		d.fail(err)
		return
	}
	for _, x := range list.Data {
		p.Deliveries = append(p.Deliveries, toDeliveryRow(x))
	}
	p.Next = list.next()
	p.Sub, p.Statuses = "webhooks", []string{"pending", "retrying", "succeeded", "failed"}
	d.page.Title, d.page.Section, d.page.Data = "Webhook endpoint", "developers", p
	d.render(status, "dash/webhook.html")
}

// responseText says what an endpoint answered.
func responseText(status *int, errText *string) string {
	switch {
	case status != nil:
		return "HTTP " + strconv.Itoa(*status) + " " + http.StatusText(*status)
	case errText != nil:
		return *errText
	}
	return "No answer yet"
}

func toDeliveryRow(x dashDelivery) deliveryRow {
	r := deliveryRow{dashDelivery: x, Created: utcText(x.CreatedAt), Response: responseText(x.ResponseStatus, nil),
		Failed: x.Status == "failed" || x.Status == "retrying", OK: x.Status == "succeeded"}
	if x.NextRetryAt != nil {
		r.Next = utcText(*x.NextRetryAt)
	}
	for _, a := range x.Attempts {
		ok := a.ResponseStatus != nil && *a.ResponseStatus >= 200 && *a.ResponseStatus < 300
		r.Rows = append(r.Rows, attemptRow{N: len(r.Rows) + 1, At: utcText(a.At), Response: responseText(a.ResponseStatus, a.Error),
			Time: strconv.FormatInt(a.DurationMS, 10) + " ms", Trigger: a.Trigger, OK: ok})
	}
	if n := len(x.Attempts); n > 0 && x.ResponseStatus == nil {
		r.Response = r.Rows[n-1].Response
	}
	for k, v := range x.RequestHeaders {
		r.Headers = append(r.Headers, formField{k, v})
	}
	slices.SortFunc(r.Headers, func(a, b formField) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	if json.Indent(&buf, x.Payload, "", "  ") == nil {
		r.Pretty = buf.String()
	} else {
		r.Pretty = string(x.Payload)
	}
	return r
}

// changeHook serves the endpoint page's forms: turn on or off, rotate the
// secret, send a test event, delete.
func (h *Handler) changeHook(d *dashReq) {
	id := url.PathEscape(d.r.PathValue("id"))
	path := "/webhooks/" + id
	page := d.bizPath("/developers/webhooks/" + id)
	var err error
	switch d.r.PathValue("action") {
	case "enable", "disable":
		on := d.r.PathValue("action") == "enable"
		if err = d.call("PATCH", path, map[string]bool{"enabled": on}, nil); err == nil {
			done := "webhook_disabled"
			if on {
				done = "webhook_enabled"
			}
			d.redirect(page, done)
			return
		}
	case "rotate":
		var w dashWebhook
		if err = d.call("POST", path+"/rotate-secret", map[string]any{}, &w); err == nil {
			r := toHookRow(w)
			if err := d.health(&r); err != nil {
				d.fail(err)
				return
			}
			d.page.Flash = "The secret is rotated. The old one keeps signing beside it for 24 hours. Copy the new one now: it is shown only this once."
			h.renderHook(d, hookPage{Hook: r, Secret: w.Secret}, http.StatusOK)
			return
		}
	case "test":
		var x dashDelivery
		if err = d.call("POST", path+"/test", nil, &x); err == nil {
			d.redirect(d.bizPath("/developers/deliveries/"+url.PathEscape(x.ID)), "webhook_tested")
			return
		}
	case "delete":
		if d.form.Get("confirm") != "yes" {
			r, ok := d.findHook()
			if !ok {
				return
			}
			d.page.Error, d.page.Field = "Tick the box to confirm that the endpoint should be deleted.", "confirm"
			h.renderHook(d, hookPage{Hook: r}, http.StatusBadRequest)
			return
		}
		if err = d.call("DELETE", path, nil, nil); err == nil {
			d.redirect(d.bizPath("/developers/webhooks"), "webhook_deleted")
			return
		}
	default:
		d.notFound()
		return
	}
	if d.refuse(err) {
		r, ok := d.findHook()
		if !ok {
			return
		}
		h.renderHook(d, hookPage{Hook: r}, d.status(err))
	}
}

// showDelivery serves GET /dashboard/{biz}/developers/deliveries/{id}.
func (h *Handler) showDelivery(d *dashReq) {
	var x dashDelivery
	if err := d.call("GET", "/webhook-deliveries/"+url.PathEscape(d.r.PathValue("id")), nil, &x); err != nil {
		d.fail(err)
		return
	}
	h.renderDelivery(d, x, http.StatusOK)
}

func (h *Handler) renderDelivery(d *dashReq, x dashDelivery, status int) {
	var w dashWebhook
	if err := d.call("GET", "/webhooks/"+url.PathEscape(x.WebhookID), nil, &w); err != nil {
		d.fail(err)
		return
	}
	p := deliveryPage{Hook: toHookRow(w), Delivery: toDeliveryRow(x)}
	p.Sub = "webhooks"
	d.page.Title, d.page.Section, d.page.Data = "Delivery of "+x.EventType, "developers", p
	d.render(status, "dash/delivery.html")
}

// resendDelivery serves POST /dashboard/{biz}/developers/deliveries/{id}:
// one attempt now (POST /webhook-deliveries/{id}/resend).
func (h *Handler) resendDelivery(d *dashReq) {
	id := url.PathEscape(d.r.PathValue("id"))
	var x dashDelivery
	if err := d.call("POST", "/webhook-deliveries/"+id+"/resend", nil, &x); err != nil {
		if d.refuse(err) {
			if err := d.call("GET", "/webhook-deliveries/"+id, nil, &x); err != nil {
				d.fail(err)
				return
			}
			h.renderDelivery(d, x, d.status(err))
		}
		return
	}
	done := "delivery_resent_failed"
	if x.Status == "succeeded" {
		done = "delivery_resent"
	}
	d.redirect(d.bizPath("/developers/deliveries/"+id), done)
}
