package web

import (
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"payd/money"
)

// The checkout settings page (/dashboard/{biz}/settings): how checkouts
// behave (GET/PATCH /checkout-settings) and how they look (the branding
// fields of the same resource).

// dashSettings is GET /checkout-settings.
type dashSettings struct {
	QuoteMinutes   int                 `json:"quote_minutes"`
	CollectEmail   bool                `json:"collect_email"`
	FeePayer       string              `json:"fee_payer"`
	AcceptedRails  []string            `json:"accepted_rails"`
	AcceptedAssets map[string][]string `json:"accepted_assets"`
	DisplayName    *string             `json:"display_name"`
	AccentColor    *string             `json:"accent_color"`
	SupportEmail   *string             `json:"support_email"`
	LogoURL        *string             `json:"logo_url"`
	UpdatedAt      *string             `json:"updated_at"`
}

// settingsPage is the form, as read or as sent.
type settingsPage struct {
	QuoteMinutes                           string
	CollectEmail, Crypto, Card             bool
	FeePayer                               string
	Networks                               []settingsNetwork
	DisplayName, AccentColor, SupportEmail string
	Updated                                string
	// Logo is the path of the saved logo, "" for none.
	Logo string
}

// settingsNetwork is one network's coins in the form.
type settingsNetwork struct {
	Name, Label string
	Coins       []settingsCoin
}

type settingsCoin struct {
	Asset   string
	Checked bool
}

var settingsNetworkLabels = map[money.Network]string{money.Bitcoin: "Bitcoin", money.Ethereum: "Ethereum",
	money.Polygon: "Polygon", money.Solana: "Solana", money.Tron: "Tron"}

// settingsNetworks lists every network and the coins payd accepts on it,
// checked by accepted(network, asset).
func settingsNetworks(accepted func(n, a string) bool) []settingsNetwork {
	var out []settingsNetwork
	for _, n := range money.Networks {
		sn := settingsNetwork{Name: string(n), Label: settingsNetworkLabels[n]}
		for _, a := range money.Assets {
			if money.Supports(a, n) {
				sn.Coins = append(sn.Coins, settingsCoin{string(a), accepted(string(n), string(a))})
			}
		}
		out = append(out, sn)
	}
	return out
}

// loadSettings reads the settings into the form; false when the page has
// been answered.
func (d *dashReq) loadSettings() (settingsPage, bool) {
	var s dashSettings
	if err := d.call("GET", "/checkout-settings", nil, &s); err != nil {
		d.fail(err)
		return settingsPage{}, false
	}
	p := settingsPage{QuoteMinutes: strconv.Itoa(s.QuoteMinutes), CollectEmail: s.CollectEmail, FeePayer: s.FeePayer,
		Crypto: slices.Contains(s.AcceptedRails, "crypto"), Card: slices.Contains(s.AcceptedRails, "card"),
		Networks: settingsNetworks(func(n, a string) bool { return slices.Contains(s.AcceptedAssets[n], a) })}
	for _, f := range []struct {
		in  *string
		out *string
	}{{s.DisplayName, &p.DisplayName}, {s.AccentColor, &p.AccentColor}, {s.SupportEmail, &p.SupportEmail}} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
	if s.UpdatedAt != nil {
		p.Updated = utcText(*s.UpdatedAt)
	}
	if s.LogoURL != nil {
		p.Logo = business{LogoURL: s.LogoURL}.LogoPath()
	}
	d.page.Title, d.page.Section = "Checkout settings", "settings"
	return p, true
}

// showSettings serves GET /dashboard/{biz}/settings.
func (h *Handler) showSettings(d *dashReq) {
	p, ok := d.loadSettings()
	if !ok {
		return
	}
	d.page.Data = p
	d.render(http.StatusOK, "dash/settings.html")
}

// saveSettings serves POST /dashboard/{biz}/settings: the whole form as
// one PATCH /checkout-settings.
func (h *Handler) saveSettings(d *dashReq) {
	f := d.form
	p := settingsPage{QuoteMinutes: strings.TrimSpace(f.Get("quote_minutes")), CollectEmail: f.Get("collect_email") == "yes",
		FeePayer: f.Get("fee_payer"), Crypto: slices.Contains(f["rail"], "crypto"), Card: slices.Contains(f["rail"], "card"),
		Networks:    settingsNetworks(func(n, a string) bool { return slices.Contains(f["coin_"+n], a) }),
		DisplayName: strings.TrimSpace(f.Get("display_name")), AccentColor: strings.TrimSpace(f.Get("accent_color")),
		SupportEmail: strings.TrimSpace(f.Get("support_email"))}
	d.page.Title, d.page.Section, d.page.Data = "Checkout settings", "settings", p
	if cur, ok := d.currentLogo(); ok {
		p.Logo = cur
		d.page.Data = p
	} else {
		return
	}
	minutes, err := strconv.Atoi(p.QuoteMinutes)
	if err != nil {
		d.page.Error, d.page.Field = "Enter the quote window as a whole number of minutes, from 1 to 60.", "quote_minutes"
		d.render(http.StatusBadRequest, "dash/settings.html")
		return
	}
	rails := []string{}
	if p.Crypto {
		rails = append(rails, "crypto")
	}
	if p.Card {
		rails = append(rails, "card")
	}
	assets := map[string][]string{}
	for _, n := range p.Networks {
		for _, c := range n.Coins {
			if c.Checked {
				assets[n.Name] = append(assets[n.Name], c.Asset)
			}
		}
	}
	body := map[string]any{"quote_minutes": minutes, "collect_email": p.CollectEmail, "fee_payer": p.FeePayer,
		"accepted_rails": rails, "accepted_assets": assets, "display_name": p.DisplayName,
		"accent_color": p.AccentColor, "support_email": p.SupportEmail}
	if err := d.call("PATCH", "/checkout-settings", body, nil); err != nil {
		if d.refuse(err) {
			if strings.HasPrefix(d.page.Field, "accepted_assets") {
				d.page.Field = "accepted_assets"
			}
			d.render(d.status(err), "dash/settings.html")
		}
		return
	}
	d.redirect(d.bizPath("/settings"), "settings_saved")
}

// dashUploadMax is the largest form with a file: a logo of at most 256
// KiB with room for the form's other fields.
const dashUploadMax = 300 << 10

// uploadLogo serves POST /dashboard/{biz}/settings/logo: the file of the
// form as POST /checkout-settings/logo.
func (h *Handler) uploadLogo(d *dashReq) {
	var data []byte
	if d.r.MultipartForm != nil && len(d.r.MultipartForm.File["logo"]) == 1 {
		fh := d.r.MultipartForm.File["logo"][0]
		if f, err := fh.Open(); err == nil {
			data, _ = io.ReadAll(io.LimitReader(f, dashUploadMax))
			f.Close()
		}
	}
	if len(data) == 0 {
		d.settingsRefused(http.StatusBadRequest, "Choose a PNG or JPEG image to upload.")
		return
	}
	if err := d.call("POST", "/checkout-settings/logo", map[string]string{"data": base64.StdEncoding.EncodeToString(data)}, nil); err != nil {
		if d.refuse(err) {
			d.settingsRefused(d.status(err), d.page.Error)
		}
		return
	}
	d.redirect(d.bizPath("/settings"), "logo_saved")
}

// removeLogo serves POST /dashboard/{biz}/settings/logo/delete.
func (h *Handler) removeLogo(d *dashReq) {
	if err := d.call("DELETE", "/checkout-settings/logo", nil, nil); err != nil {
		if d.refuse(err) {
			d.settingsRefused(d.status(err), d.page.Error)
		}
		return
	}
	d.redirect(d.bizPath("/settings"), "logo_removed")
}

// settingsRefused shows the settings page as saved, with why the logo was
// refused beside the logo's form.
func (d *dashReq) settingsRefused(status int, why string) {
	p, ok := d.loadSettings()
	if !ok {
		return
	}
	d.page.Error, d.page.Field = why, "logo"
	d.page.Data = p
	d.render(status, "dash/settings.html")
}

// currentLogo is the saved logo's path, for a refused form's page.
func (d *dashReq) currentLogo() (string, bool) {
	var s dashSettings
	if err := d.call("GET", "/checkout-settings", nil, &s); err != nil {
		d.fail(err)
		return "", false
	}
	if s.LogoURL == nil {
		return "", true
	}
	return business{LogoURL: s.LogoURL}.LogoPath(), true
}
