package payd

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"time"

	"payd/money"
)

// WalletSource says how a wallet came to payd. Either way payd holds only
// its public keys (DESIGN 1.3).
type WalletSource string

// The wallet sources.
const (
	// WalletGenerated: `payd business create --wallet generate` made the
	// recovery phrase on the operator's side, printed it once and kept only
	// the public keys.
	WalletGenerated WalletSource = "generated"
	// WalletAttached: the business sent its own public keys (POST /wallet).
	WalletAttached WalletSource = "attached"
)

// MaxAccountKeyLength bounds a stored account key. Canonical keys are 111
// characters (xpub, zpub) or at most 44 (a Solana public key); the bound
// only keeps a caller's mistake out of the database.
const MaxAccountKeyLength = 200

// Wallet is where a business's payments land: the public account key of
// each network it can receive on (docs/wallets.md). Deposit addresses are
// derived from the keys; the funds never pass through payd.
type Wallet struct {
	ID         string
	BusinessID string
	// Keys maps each network the wallet can receive on to its account key
	// in hd's canonical spelling (hd.AccountKey.String), so that one key
	// written two ways is stored, compared and refused as one. Polygon
	// normally holds the ethereum key: the same addresses on both chains.
	Keys map[money.Network]string
	// KeyIDs maps each network to the identity of its key: what derives
	// its addresses (hd.AccountKey.Identity), whatever bytes of the
	// serialisation that change no address say. Keys are refused for a
	// second business by identity, not by spelling, because a key
	// re-serialised with another parent fingerprint or child number would
	// otherwise take the first business's deposit addresses.
	KeyIDs map[money.Network]string
	// Overlap marks the networks where the wallet's key may derive another
	// wallet's deposit addresses: some key on the network has no identity
	// (attached to two wallets before keys were compared by identity, or by
	// an older payd during an upgrade). Only there is a deposit checked
	// against every checkout before it is taken (WalletStore.DepositTaken);
	// elsewhere the unique identities rule an overlap out. Set by the store.
	Overlap   map[money.Network]bool
	Source    WalletSource
	CreatedAt time.Time
}

// NewWallet validates keys (already parsed and written canonically by the
// caller, which owns the key formats through package hd) and their
// identities ids (see Wallet.KeyIDs), and returns a wallet to store. At
// least one network is required.
func NewWallet(businessID string, keys, ids map[money.Network]string, source WalletSource, now time.Time) (*Wallet, error) {
	if source != WalletGenerated && source != WalletAttached {
		return nil, Errorf(ErrInvalidRequest, "wallet source %q is neither generated nor attached", source)
	}
	if len(keys) == 0 {
		return nil, FieldError("keys", "attach the account key of at least one network: bitcoin, ethereum, polygon, solana or tron")
	}
	out, outIDs := make(map[money.Network]string, len(keys)), make(map[money.Network]string, len(keys))
	for n, k := range keys {
		field := "keys." + string(n)
		switch {
		case !n.Valid():
			return nil, FieldError(field, "network %q is not one of bitcoin, ethereum, polygon, solana, tron", n)
		case k == "" || strings.TrimSpace(k) != k:
			return nil, FieldError(field, "the %s account key is empty or has spaces around it", n)
		case len(k) > MaxAccountKeyLength:
			return nil, FieldError(field, "the %s account key is %d characters long; at most %d are allowed", n, len(k), MaxAccountKeyLength)
		case ids[n] == "" || len(ids[n]) > MaxAccountKeyLength:
			return nil, Errorf(ErrInvalidRequest, "the %s account key has no identity to tell it apart by", n)
		}
		out[n], outIDs[n] = k, ids[n]
	}
	return &Wallet{ID: NewID(PrefixWallet), BusinessID: businessID, Keys: out, KeyIDs: outIDs, Source: source, CreatedAt: now}, nil
}

// CanReceive reports whether the wallet has a key on network n. A nil
// wallet (a business without one) receives nothing.
func (w *Wallet) CanReceive(n money.Network) bool {
	return w != nil && w.Keys[n] != ""
}

// Networks lists the networks the wallet can receive on, in money.Networks
// order.
func (w *Wallet) Networks() []money.Network {
	var out []money.Network
	for _, n := range money.Networks {
		if w.CanReceive(n) {
			out = append(out, n)
		}
	}
	return out
}

// Assets lists the coins the wallet can receive on network n, in
// money.Assets order: every coin that moves on n (spec 2.11 rule 9) when
// the wallet has a key there, none otherwise. One key serves every coin
// of its network: a token lands on the same address as the native coin.
func (w *Wallet) Assets(n money.Network) []money.Asset {
	if !w.CanReceive(n) {
		return nil
	}
	var out []money.Asset
	for _, a := range money.Assets {
		if money.Supports(a, n) {
			out = append(out, a)
		}
	}
	return out
}

// Receives reports whether the wallet can receive coin a on network n.
func (w *Wallet) Receives(a money.Asset, n money.Network) bool {
	return w.CanReceive(n) && money.Supports(a, n)
}

// CheckReceives returns not_accepting unless the wallet can receive coin a
// on network n: the business has no wallet (w is nil), or no key there.
func (w *Wallet) CheckReceives(a money.Asset, n money.Network) error {
	switch {
	case w == nil:
		return Errorf(ErrNotAccepting, "the business has no wallet to receive payments yet")
	case !w.Receives(a, n):
		return Errorf(ErrNotAccepting, "the business's wallet cannot receive %s on %s", a, n)
	}
	return nil
}

// KeyAttachedElsewhere is the error for an account key that another
// business's wallet already holds on network n (spec 7.2, POST /wallet),
// however either of them is serialised (Wallet.KeyIDs). The key itself is
// never repeated.
func KeyAttachedElsewhere(n money.Network) *Error {
	return FieldError("keys."+string(n), "this %s account key is already attached to another business's wallet", n)
}

// WalletExists is the error for a business that already has a wallet.
func WalletExists() *Error {
	return Errorf(ErrWalletExists, "the business already has a wallet")
}

// MaxAddressIndex is the last receive index a wallet can hand out on one
// network: BIP32 derives children from a public key only below 2^31.
const MaxAddressIndex = 1<<31 - 1

// Holding is how much of one coin on one network a wallet has received and
// kept, in base units (Amount.Asset is the coin).
type Holding struct {
	Network money.Network
	Amount  money.CoinAmount
}

// Balances lists held: one entry per coin and network the wallet holds or
// can receive, zero where nothing arrived yet, coins in money.Assets order
// and each on its networks in the spec's order. Entries of held on
// networks the wallet no longer receives on are kept: what is held stays
// shown.
func (w *Wallet) Balances(held []Holding) []Holding {
	byKey := map[Offer]money.CoinAmount{}
	for _, h := range held {
		o := Offer{h.Amount.Asset, h.Network}
		if prev, ok := byKey[o]; ok {
			byKey[o] = prev.Add(h.Amount)
			continue
		}
		byKey[o] = h.Amount
	}
	var out []Holding
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			amt, ok := byKey[Offer{a, n}]
			switch {
			case ok:
				out = append(out, Holding{Network: n, Amount: amt})
			case w.Receives(a, n):
				out = append(out, Holding{Network: n, Amount: money.CoinAmount{Asset: a, Units: new(big.Int)}})
			}
		}
	}
	return out
}

// CheckHoldingDelta refuses a change of holdings that no settlement or
// send could make: an unknown coin, a coin that does not move on network
// n, or a zero amount.
func CheckHoldingDelta(n money.Network, amount money.CoinAmount) error {
	if !money.Supports(amount.Asset, n) {
		return Errorf(ErrInvalidRequest, "%q does not move on %q", amount.Asset, n)
	}
	if amount.IsZero() {
		return Errorf(ErrInvalidRequest, "a change of holdings must not be zero")
	}
	return nil
}

// SortHoldings orders holdings like Balances: coins in money.Assets order,
// each on its networks in the spec's order.
func SortHoldings(hs []Holding) {
	rank := map[Offer]int{}
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			rank[Offer{a, n}] = len(rank)
		}
	}
	slices.SortStableFunc(hs, func(x, y Holding) int {
		return rank[Offer{x.Amount.Asset, x.Network}] - rank[Offer{y.Amount.Asset, y.Network}]
	})
}

// WalletStore keeps wallets, the counters behind their deposit addresses
// and their holdings.
type WalletStore interface {
	// CreateWallet stores a new wallet and its keys, all or nothing:
	// wallet_exists when the business already has a wallet, and
	// invalid_request naming keys.<network> (KeyAttachedElsewhere) when a
	// key is already attached on that network to another wallet. Both are
	// checked by unique constraints, so they hold across replicas racing
	// each other, and neither leaves the caller's transaction unusable.
	CreateWallet(ctx context.Context, w *Wallet) error
	// WalletByBusiness returns the business's wallet; not_found when it has none.
	WalletByBusiness(ctx context.Context, businessID string) (*Wallet, error)
	// NextAddressIndex hands out the wallet's next receive index on network
	// n, 0 first: one counter row per wallet and network, updated in the
	// caller's transaction, so concurrent callers get distinct indexes and
	// a rolled-back caller's index is handed out again (no gaps). not_found
	// when the wallet has no key on n.
	NextAddressIndex(ctx context.Context, walletID string, n money.Network) (uint32, error)
	// DepositTaken reports whether a checkout of any business already has
	// deposit d on network n. On a network where the wallet's key may
	// overlap another's (Wallet.Overlap), its next index can derive such a
	// deposit, and the checkout's caller then moves on to the next index
	// rather than fail on the checkouts' unique deposit.
	DepositTaken(ctx context.Context, n money.Network, d Deposit) (bool, error)
	// AddHoldings adds amount (negative for money leaving) of amount.Asset
	// on network n to the wallet's holdings, exactly, in the caller's
	// transaction; call it in the transaction that settles a payment.
	// invalid_request for a coin that does not move on n or a zero amount,
	// not_found when the wallet has no key on n, insufficient_funds when
	// the holding would drop below zero.
	AddHoldings(ctx context.Context, walletID string, n money.Network, amount money.CoinAmount) error
	// WalletHoldings returns the holdings of the business's wallet in
	// SortHoldings order; none for another business's wallet.
	WalletHoldings(ctx context.Context, businessID, walletID string) ([]Holding, error)
}
