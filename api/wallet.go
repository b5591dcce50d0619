package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"payd"
	"payd/hd"
	"payd/money"
)

// Wallet (docs/wallets.md): the public keys a business receives on, and
// what it holds.

// wallet is a wallet on the wire. Networks holds only the networks the
// wallet can receive on.
type wallet struct {
	ID        string                          `json:"id"`
	Kind      string                          `json:"kind"`
	Source    payd.WalletSource               `json:"source"`
	Networks  map[money.Network]walletNetwork `json:"networks"`
	Holdings  []holding                       `json:"holdings"`
	TotalUSD  int64                           `json:"total_usd"`
	CreatedAt Time                            `json:"created_at"`
}

// walletNetwork is what the wallet receives on one network: its account
// key, the first receive address (index 0, for the business to compare
// with its wallet software) and the coins.
type walletNetwork struct {
	AccountKey   string        `json:"account_key"`
	FirstAddress string        `json:"first_address"`
	Assets       []money.Asset `json:"assets"`
}

// holding is one coin on one network: the amount as a decimal string in
// coin units, and its value in US cents at the current rates.
type holding struct {
	Asset     money.Asset   `json:"asset"`
	Network   money.Network `json:"network"`
	Amount    string        `json:"amount"`
	AmountUSD int64         `json:"amount_usd"`
}

// toWallet renders w with its holdings valued at x. x may be nil only when
// nothing is held: zero is worth zero at any price.
func toWallet(w *payd.Wallet, held []payd.Holding, x *payd.ExchangeRates) (wallet, error) {
	out := wallet{ID: w.ID, Kind: "wallet", Source: w.Source, Networks: map[money.Network]walletNetwork{},
		Holdings: []holding{}, CreatedAt: Time(w.CreatedAt)}
	for _, n := range w.Networks() {
		key, err := hd.ParseAccountKey(n, w.Keys[n])
		if err != nil {
			return wallet{}, fmt.Errorf("stored %s key of %s: %w", n, w.ID, err)
		}
		addr, err := key.Address(0)
		if err != nil {
			return wallet{}, fmt.Errorf("first %s address of %s: %w", n, w.ID, err)
		}
		out.Networks[n] = walletNetwork{AccountKey: key.String(), FirstAddress: addr, Assets: w.Assets(n)}
	}
	for _, h := range w.Balances(held) {
		var price int64
		if x != nil {
			price = x.Coins[h.Amount.Asset]
		} else if !h.Amount.IsZero() {
			return wallet{}, errors.New("api: holdings need exchange rates to be valued")
		}
		usd := money.CoinToUSDCents(h.Amount, price)
		out.Holdings = append(out.Holdings, holding{Asset: h.Amount.Asset, Network: h.Network, Amount: h.Amount.String(), AmountUSD: usd})
		out.TotalUSD += usd
	}
	return out, nil
}

// createWalletRequest is the body of POST /wallet.
type createWalletRequest struct {
	Keys walletKeysRequest `json:"keys"`
}

// walletKeysRequest holds the account public key of each network; a
// network left out (or null) is not received on. Polygon takes the
// ethereum key unless it is sent.
type walletKeysRequest struct {
	Bitcoin  *string `json:"bitcoin"`
	Ethereum *string `json:"ethereum"`
	Polygon  *string `json:"polygon"`
	Solana   *string `json:"solana"`
	Tron     *string `json:"tron"`
}

// byNetwork lists the sent keys by network.
func (k *walletKeysRequest) byNetwork() map[money.Network]*string {
	return map[money.Network]*string{money.Bitcoin: k.Bitcoin, money.Ethereum: k.Ethereum, money.Polygon: k.Polygon,
		money.Solana: k.Solana, money.Tron: k.Tron}
}

// parse checks every sent key with package hd and returns the keys in
// canonical spelling and their identities (payd.Wallet.KeyIDs). A refusal
// is invalid_request naming keys.<network> with hd's message, which never
// repeats the key: a pasted private key must not reach a response or a
// log.
func (k *walletKeysRequest) parse() (keys, ids map[money.Network]string, err error) {
	sent := k.byNetwork()
	keys, ids = map[money.Network]string{}, map[money.Network]string{}
	for _, n := range money.Networks {
		if sent[n] == nil {
			continue
		}
		key, err := hd.ParseAccountKey(n, *sent[n])
		var he *hd.Error
		switch {
		case errors.As(err, &he):
			return nil, nil, payd.FieldError("keys."+string(n), "%s", he.Error())
		case err != nil:
			return nil, nil, err
		case key.Testnet():
			return nil, nil, payd.FieldError("keys."+string(n), "%s account key: is a test-network key (vpub or tpub); "+
				"payd receives on bitcoin's main network, so attach the account's zpub (m/84'/0'/0')", n)
		}
		keys[n], ids[n] = key.String(), key.Identity()
	}
	if k.Polygon == nil && keys[money.Ethereum] != "" {
		keys[money.Polygon], ids[money.Polygon] = keys[money.Ethereum], ids[money.Ethereum]
	}
	return keys, ids, nil
}

// createWallet serves POST /wallet: the business attaches its public keys.
func (s *Server) createWallet(w http.ResponseWriter, r *http.Request) error {
	var req createWalletRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	keys, ids, err := req.Keys.parse()
	if err != nil {
		return err
	}
	wal, err := payd.NewWallet(callOf(r.Context()).biz.ID, keys, ids, payd.WalletAttached, s.clock.Now())
	if err != nil {
		return err
	}
	return s.writeTx(w, r, http.StatusCreated, func(ctx context.Context, q payd.Queries) (any, error) {
		if err := q.CreateWallet(ctx, wal); err != nil {
			return nil, req.Keys.nameSentKey(err)
		}
		return toWallet(wal, nil, nil)
	})
}

// nameSentKey points a refusal of the polygon key at keys.ethereum when
// polygon was not sent and so took the ethereum key.
func (k *walletKeysRequest) nameSentKey(err error) error {
	var pe *payd.Error
	if k.Polygon != nil || !errors.As(err, &pe) || pe.Field != "keys.polygon" {
		return err
	}
	return payd.FieldError("keys.ethereum", "this ethereum account key is already attached on polygon to another business's "+
		"wallet (polygon uses the ethereum key unless keys.polygon is sent)")
}

// getWallet serves GET /wallet. Holdings are valued at the newest exchange
// rates, which are only asked for when something is held.
func (s *Server) getWallet(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	bizID := callOf(ctx).biz.ID
	wal, err := s.store.WalletByBusiness(ctx, bizID)
	if payd.IsNotFound(err) {
		return payd.Errorf(payd.ErrNotFound, "the business has no wallet; attach one with POST /wallet")
	} else if err != nil {
		return err
	}
	held, err := s.store.WalletHoldings(ctx, bizID, wal.ID)
	if err != nil {
		return err
	}
	var x *payd.ExchangeRates
	if slices.ContainsFunc(held, func(h payd.Holding) bool { return !h.Amount.IsZero() }) {
		if x, err = s.rates.Latest(ctx); err != nil {
			return err
		}
	}
	out, err := toWallet(wal, held, x)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{out})
	return nil
}
