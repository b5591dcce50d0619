package devnet

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd"
	"payd/hd"
	"payd/money"
)

// TransferRequest is a customer's payment to make on a simulated network,
// as POST /devnet/transfers and `payd devnet pay` give it: each field is
// the text a person sent, and Transfer checks it.
//
// It is an alias of an unnamed struct type so that a package that must not
// import devnet (api, whose DevnetControl interface *Devnet satisfies) can
// declare the identical type: in Go two unnamed struct types with the same
// fields, in the same order and with the same tags, are one type. Change
// both together; cmd/payd's wiring stops compiling if they drift.
type TransferRequest = struct {
	// Network is bitcoin, ethereum, polygon, solana or tron.
	Network string
	// Asset is the coin: USDC, USDT, BTC, ETH or SOL, one that moves on
	// Network.
	Asset string
	// To is the receiving address in the network's own format.
	To string
	// Amount is a decimal string in whole coins ("0.015", "12.50"), more
	// than zero, with at most the coin's base decimals.
	Amount string
	// From is the sender's address; "" makes up one.
	From string
	// Reference is a Solana Pay reference key (base58, 32 bytes) the
	// wallet attaches on solana; "" sends none. Other networks have none.
	Reference string
}

// transferOp checks req and builds its op, with a fresh transaction hash
// and, unless req names one, a made-up sender. The caller holds opMu.
func (d *Devnet) transferOp(req TransferRequest) (op, error) {
	n, err := parseNetwork(req.Network)
	if err != nil {
		return op{}, err
	}
	a, err := parseAsset(n, req.Asset)
	if err != nil {
		return op{}, err
	}
	if err := checkAddress(n, "to", req.To, true); err != nil {
		return op{}, err
	}
	amount, err := parseAmount(a, req.Amount)
	if err != nil {
		return op{}, err
	}
	if err := checkAddress(n, "from", req.From, false); err != nil {
		return op{}, err
	}
	if err := checkReference(n, req.Reference); err != nil {
		return op{}, err
	}
	o := op{Kind: opTransfer, Network: n, Asset: a, Units: amount.Units.String(),
		To: req.To, From: req.From, Reference: req.Reference}
	if o.From == "" {
		o.From = newAddress(n)
	}
	for o.TxHash == "" || d.ledgers[n].allows(o) != nil { // a clash is one in 2^256
		o.TxHash = newTxHash(n)
	}
	return o, nil
}

// parseAsset reads the coin and checks that it moves on n.
func parseAsset(n money.Network, s string) (money.Asset, error) {
	a, ok := money.ParseAsset(s)
	if !ok {
		return "", payd.FieldError("asset", "asset must be one of USDC, USDT, BTC, ETH, SOL")
	}
	if !money.Supports(a, n) {
		return "", payd.FieldError("asset", "%s does not move on %s; it moves on %s", a, n, networkList(money.NetworksFor(a)))
	}
	return a, nil
}

// parseAmount reads a positive decimal amount of a.
func parseAmount(a money.Asset, s string) (money.CoinAmount, error) {
	c, err := money.ParseCoinAmount(a, s)
	if err != nil {
		return c, payd.FieldError("amount", "amount must be a decimal string such as \"12.50\" with at most %d decimals for %s", a.BaseDecimals(), a)
	}
	if c.Sign() <= 0 {
		return c, payd.FieldError("amount", "amount must be more than 0")
	}
	return c, nil
}

// checkAddress checks an address field; an optional one may be "".
func checkAddress(n money.Network, field, s string, required bool) error {
	switch {
	case s == "" && required:
		return payd.FieldError(field, "%s is required: an address on %s", field, n)
	case s == "":
		return nil
	}
	if err := hd.ValidAddress(n, s); err != nil {
		return payd.FieldError(field, "%v", err)
	}
	return nil
}

// checkReference checks a Solana Pay reference: "" or 32 bytes of base58,
// and only on solana.
func checkReference(n money.Network, ref string) error {
	switch {
	case ref == "":
		return nil
	case n != money.Solana:
		return payd.FieldError("reference", "reference is a Solana Pay key; %s transfers have none", n)
	case hd.ValidAddress(money.Solana, ref) != nil:
		return payd.FieldError("reference", "reference must be a Solana Pay reference: base58 of 32 bytes")
	}
	return nil
}

// newTxHash makes a random transaction hash in the network's format: 32
// bytes of hex (0x-prefixed on ethereum and polygon), or a 64-byte
// signature in base58 on solana.
func newTxHash(n money.Network) string {
	switch n {
	case money.Solana:
		return base58.Encode(random(ed25519.SignatureSize))
	case money.Ethereum, money.Polygon:
		return "0x" + hex.EncodeToString(random(32))
	}
	return hex.EncodeToString(random(32))
}

// newAddress makes up a sender's address on n.
func newAddress(n money.Network) string {
	size := 20
	if n == money.Solana {
		size = ed25519.PublicKeySize
	}
	s, err := hd.SampleAddress(n, random(size))
	if err != nil {
		panic(err) // the size is the one SampleAddress asks for n
	}
	return s
}

// random returns n bytes from the system's random source. crypto/rand.Read
// never fails (it crashes the program rather than return weak bytes).
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// networkList writes networks as "polygon, ethereum, solana".
func networkList(ns []money.Network) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
