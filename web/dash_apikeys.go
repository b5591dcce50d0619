package web

import (
	"net/http"
	"strings"
	"time"

	"payd"
)

// The Developers section's API keys (docs/dashboard.md "Developers and
// wallet"): /dashboard/{biz}/developers lists the business's keys and
// makes new ones; each key has a page to rename, roll or revoke it. A new
// or rolled key's secret is shown once, in the answer to the POST that
// made it.

// dashKey is a key as GET /api-keys answers it.
type dashKey struct {
	ID          string            `json:"id"`
	Kind        string            `json:"kind"`
	Mode        string            `json:"mode"`
	Name        string            `json:"name"`
	Hint        string            `json:"hint"`
	Permissions map[string]string `json:"permissions"`
	CreatedAt   string            `json:"created_at"`
	RevokedAt   *string           `json:"revoked_at"`
	Secret      string            `json:"secret"`
}

// keyRow is a key as the pages show it.
type keyRow struct {
	dashKey
	Created string
	// State is "Active", "Revoked" or "Ends …" (a rolled key in its
	// overlap); Ended says the key no longer works.
	State string
	Ended bool
	// Until is when a rolled key in its overlap stops working.
	Until string
	// Access lists a restricted key's areas and levels, for people.
	Access []string
}

// devSub names the Developers sub-page ("keys" or "webhooks") for the
// sub-navigation.
type devSub struct{ Sub string }

// shownSecret is a secret shown once (the "secret" part).
type shownSecret struct {
	Label, Value string
	Webhook      bool
}

// Shown is the part's data for a key's secret.
func (p keyPage) Shown() shownSecret {
	return shownSecret{Label: "The key's secret", Value: p.Secret}
}

// areaRow is one row of the permission matrix.
type areaRow struct {
	Area, Label, Level string
}

// areaLabels names the areas (payd.Areas) for people.
var areaLabels = map[payd.Area]string{
	payd.AreaPayments: "Payments", payd.AreaCustomers: "Customers", payd.AreaLinks: "Payment links",
	payd.AreaWebhooks: "Webhooks", payd.AreaCheckoutSettings: "Checkout settings", payd.AreaWallet: "Wallet",
	payd.AreaMetrics: "Metrics",
}

// keysPage is the developers page: the keys and the form for a new one.
type keysPage struct {
	devSub
	Keys []keyRow
	// The new key form as sent (after a refusal) or its defaults.
	Name, Kind, Mode string
	Areas            []areaRow
}

// keyPage is one key's page; Secret is set on the answer to a create or a
// roll, the once it is shown.
type keyPage struct {
	devSub
	Key    keyRow
	Old    *keyRow // the rolled key, on the answer to a roll
	Secret string
	Name   string
}

// toKeyRow reads a key for the pages; now tells a rolled key in its
// overlap from an ended one.
func toKeyRow(k dashKey, now time.Time) keyRow {
	r := keyRow{dashKey: k, Created: utcText(k.CreatedAt), State: "Active"}
	if k.RevokedAt != nil {
		end, _ := apiTime(*k.RevokedAt)
		if end.After(now) {
			r.Until = utcText(*k.RevokedAt)
			r.State = "Rolled, works until " + r.Until
		} else {
			r.State, r.Ended = "Ended "+utcText(*k.RevokedAt), true
		}
	}
	for _, a := range payd.Areas {
		if lvl := k.Permissions[string(a)]; lvl != "" && lvl != "none" {
			r.Access = append(r.Access, areaLabels[a]+": "+lvl)
		}
	}
	return r
}

// now is the service clock's time (the dev clock moves it too).
func (d *dashReq) now() time.Time { return d.h.clock.Now() }

// keys reads the business's keys.
func (d *dashReq) keys() ([]keyRow, error) {
	var list struct {
		Data []dashKey `json:"data"`
	}
	if err := d.call("GET", "/api-keys", nil, whole{&list}); err != nil {
		return nil, err
	}
	out := make([]keyRow, 0, len(list.Data))
	for _, k := range list.Data {
		out = append(out, toKeyRow(k, d.now()))
	}
	return out, nil
}

// showKeys serves GET /dashboard/{biz}/developers.
func (h *Handler) showKeys(d *dashReq) {
	p := keysPage{Kind: "restricted", Mode: "live"}
	for _, a := range payd.Areas {
		p.Areas = append(p.Areas, areaRow{Area: string(a), Label: areaLabels[a], Level: "none"})
	}
	h.renderKeys(d, p, http.StatusOK)
}

func (h *Handler) renderKeys(d *dashReq, p keysPage, status int) {
	keys, err := d.keys()
	if err != nil {
		d.fail(err)
		return
	}
	p.Keys = keys
	p.Sub = "keys"
	d.page.Title, d.page.Section, d.page.Data = "API keys", "developers", p
	d.render(status, "dash/developers.html")
}

// createKey serves POST /dashboard/{biz}/developers: POST /api-keys, and
// the new key's secret on this answer only.
func (h *Handler) createKey(d *dashReq) {
	p := keysPage{Name: strings.TrimSpace(d.form.Get("name")), Kind: d.form.Get("kind"), Mode: d.form.Get("mode")}
	body := map[string]any{"name": p.Name, "kind": p.Kind, "mode": p.Mode}
	perms := map[string]string{}
	for _, a := range payd.Areas {
		lvl := d.form.Get("perm_" + string(a))
		if lvl != "read" && lvl != "write" {
			lvl = "none"
		} else {
			perms[string(a)] = lvl
		}
		p.Areas = append(p.Areas, areaRow{Area: string(a), Label: areaLabels[a], Level: lvl})
	}
	if p.Kind == "restricted" {
		body["permissions"] = perms
	}
	var k dashKey
	if err := d.call("POST", "/api-keys", body, &k); err != nil {
		if d.refuse(err) {
			h.renderKeys(d, p, d.status(err))
		}
		return
	}
	d.page.Flash = "The key is made. Copy its secret now: it is shown only this once."
	h.renderKey(d, keyPage{Key: toKeyRow(k, d.now()), Secret: k.Secret}, http.StatusOK)
}

// findKey reads the key named in the path.
func (d *dashReq) findKey() (keyRow, bool) {
	keys, err := d.keys()
	if err != nil {
		d.fail(err)
		return keyRow{}, false
	}
	for _, k := range keys {
		if k.ID == d.r.PathValue("id") {
			return k, true
		}
	}
	d.notFound()
	return keyRow{}, false
}

// showKey serves GET /dashboard/{biz}/developers/keys/{id}.
func (h *Handler) showKey(d *dashReq) {
	k, ok := d.findKey()
	if !ok {
		return
	}
	h.renderKey(d, keyPage{Key: k, Name: k.Name}, http.StatusOK)
}

func (h *Handler) renderKey(d *dashReq, p keyPage, status int) {
	title := p.Key.Name
	if title == "" && p.Key.Kind != "" {
		title = strings.ToUpper(p.Key.Kind[:1]) + p.Key.Kind[1:] + " key " + p.Key.Hint
	}
	if title == "" {
		title = "API key " + p.Key.Hint
	}
	if p.Name == "" {
		p.Name = p.Key.Name
	}
	p.Sub = "keys"
	d.page.Title, d.page.Section, d.page.Data = title, "developers", p
	d.render(status, "dash/apikey.html")
}

// changeKey serves the key page's forms: rename (PATCH), roll and revoke.
func (h *Handler) changeKey(d *dashReq) {
	k, ok := d.findKey()
	if !ok {
		return
	}
	path := "/api-keys/" + k.ID
	switch d.r.PathValue("action") {
	case "rename":
		name := strings.TrimSpace(d.form.Get("name"))
		if err := d.call("PATCH", path, map[string]string{"name": name}, nil); err != nil {
			if d.refuse(err) {
				h.renderKey(d, keyPage{Key: k, Name: name}, d.status(err))
			}
			return
		}
		d.redirect(d.bizPath("/developers/keys/"+k.ID), "key_renamed")
	case "roll":
		var next dashKey
		if err := d.call("POST", path+"/roll", map[string]any{}, &next); err != nil {
			if d.refuse(err) {
				h.renderKey(d, keyPage{Key: k}, d.status(err))
			}
			return
		}
		old, _ := d.findKeyByID(k.ID)
		d.page.Flash = "The key is rolled. Copy the new secret now: it is shown only this once."
		h.renderKey(d, keyPage{Key: toKeyRow(next, d.now()), Old: old, Secret: next.Secret}, http.StatusOK)
	case "revoke":
		if d.form.Get("confirm") != "yes" {
			d.page.Error, d.page.Field = "Tick the box to confirm that the key should stop working.", "confirm"
			h.renderKey(d, keyPage{Key: k}, http.StatusBadRequest)
			return
		}
		if err := d.call("POST", path+"/revoke", map[string]any{}, nil); err != nil {
			if d.refuse(err) {
				h.renderKey(d, keyPage{Key: k}, d.status(err))
			}
			return
		}
		d.redirect(d.bizPath("/developers"), "key_revoked")
	default:
		d.notFound()
	}
}

// findKeyByID reads one key again (after a change), nil if it is gone.
func (d *dashReq) findKeyByID(id string) (*keyRow, error) {
	keys, err := d.keys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id {
			return &k, nil
		}
	}
	return nil, nil
}
