package web

import (
	"net/http"
	"strings"

	"payd/money"
)

// The wallet page (/dashboard/{biz}/wallet, docs/dashboard.md "Developers
// and wallet"): the public keys the business receives on, each network's
// first address to compare with the business's wallet software, and what
// the wallet holds by payd's count, in US dollars. A business without a
// wallet attaches one by its public keys (POST /wallet, a step-up change).

// dashWallet is GET /wallet.
type dashWallet struct {
	ID       string `json:"id"`
	Source   string `json:"source"`
	Networks map[money.Network]struct {
		AccountKey   string   `json:"account_key"`
		FirstAddress string   `json:"first_address"`
		Assets       []string `json:"assets"`
	} `json:"networks"`
	Holdings []struct {
		Asset     string `json:"asset"`
		Network   string `json:"network"`
		Amount    string `json:"amount"`
		AmountUSD int64  `json:"amount_usd"`
	} `json:"holdings"`
	TotalUSD  int64  `json:"total_usd"`
	CreatedAt string `json:"created_at"`
}

// walletPage is the wallet page: the wallet, or the form that attaches
// one.
type walletPage struct {
	Has      bool
	Source   string
	Created  string
	Networks []walletNet
	Holdings []walletHolding
	Total    string
	// Keys are the attach form's fields as sent, by network.
	Keys []walletKeyField
}

type walletNet struct {
	Name, AccountKey, FirstAddress, Assets string
}

type walletHolding struct {
	Asset, Network, Amount, USD string
	Zero                        bool
}

type walletKeyField struct {
	Network, Name, Value, Hint string
	Invalid                    bool
}

// networkNames names the networks for people.
var networkNames = map[money.Network]string{money.Bitcoin: "Bitcoin", money.Ethereum: "Ethereum",
	money.Polygon: "Polygon", money.Solana: "Solana", money.Tron: "Tron"}

// keyHints say which key each network takes (docs/wallet-keys.md).
var keyHints = map[money.Network]string{
	money.Bitcoin:  "The account's zpub (or xpub) of m/84'/0'/0'.",
	money.Ethereum: "The account's xpub of m/44'/60'/0'.",
	money.Polygon:  "Leave empty to use the Ethereum key.",
	money.Solana:   "The wallet's address: its ed25519 public key of m/44'/501'/0'/0', in base58.",
	money.Tron:     "The account's xpub of m/44'/195'/0'.",
}

// showWallet serves GET /dashboard/{biz}/wallet.
func (h *Handler) showWallet(d *dashReq) {
	var w dashWallet
	err := d.call("GET", "/wallet", nil, &w)
	if isNotFound(err) {
		h.renderWallet(d, walletPage{Keys: keyFields(nil, "")}, http.StatusOK)
		return
	} else if err != nil {
		d.fail(err)
		return
	}
	p := walletPage{Has: true, Source: w.Source, Created: utcText(w.CreatedAt), Total: usdText(w.TotalUSD)}
	for _, n := range money.Networks {
		x, ok := w.Networks[n]
		if !ok {
			continue
		}
		p.Networks = append(p.Networks, walletNet{Name: networkNames[n], AccountKey: x.AccountKey,
			FirstAddress: x.FirstAddress, Assets: strings.Join(x.Assets, ", ")})
	}
	for _, x := range w.Holdings {
		p.Holdings = append(p.Holdings, walletHolding{Asset: x.Asset, Network: networkNames[money.Network(x.Network)],
			Amount: x.Amount, USD: usdText(x.AmountUSD), Zero: strings.Trim(x.Amount, "0.") == ""})
	}
	h.renderWallet(d, p, http.StatusOK)
}

func (h *Handler) renderWallet(d *dashReq, p walletPage, status int) {
	d.page.Title, d.page.Section, d.page.Data = "Wallet", "wallet", p
	d.render(status, "dash/wallet.html")
}

// keyFields are the attach form's fields, with form's values and the
// refused field marked.
func keyFields(form map[string][]string, field string) []walletKeyField {
	var out []walletKeyField
	for _, n := range money.Networks {
		f := walletKeyField{Network: string(n), Name: networkNames[n], Hint: keyHints[n], Invalid: field == "keys."+string(n)}
		if v := form["key_"+string(n)]; len(v) > 0 {
			f.Value = strings.TrimSpace(v[0])
		}
		out = append(out, f)
	}
	return out
}

// attachWallet serves POST /dashboard/{biz}/wallet: POST /wallet with the
// keys given.
func (h *Handler) attachWallet(d *dashReq) {
	keys := map[string]string{}
	for _, f := range keyFields(d.form, "") {
		if f.Value != "" {
			keys[f.Network] = f.Value
		}
	}
	if err := d.call("POST", "/wallet", map[string]any{"keys": keys}, nil); err != nil {
		if d.refuse(err) {
			h.renderWallet(d, walletPage{Keys: keyFields(d.form, d.page.Field)}, d.status(err))
		}
		return
	}
	d.redirect(d.bizPath("/wallet"), "wallet_attached")
}
