package devnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"

	"payd/hd"
	"payd/money"
)

// opVersion is the format of a logged op. A log written by a later payd,
// in a format this one does not know, is refused rather than misread.
const opVersion = 1

// The kinds of op.
const (
	opTransfer = "transfer"
	opMine     = "mine"
	opReorg    = "reorg"
)

// maxUnitDigits bounds a transfer's base units: 20 whole digits and 18
// decimals, the most money.ParseCoinAmount gives.
const maxUnitDigits = 38

// op is one devnet operation as the log keeps it. It holds everything the
// operation decided, the generated transaction hash and sender included,
// so that replaying the log rebuilds exactly the state it acknowledged.
type op struct {
	V       int           `json:"v"`
	Kind    string        `json:"op"`
	Network money.Network `json:"network"`
	// At is the service time of the operation, Unix microseconds.
	At int64 `json:"at"`
	// A transfer's fields. Units is the amount in base units as a decimal
	// integer, so that nothing on the way can round it.
	TxHash    string      `json:"tx_hash,omitempty"`
	Asset     money.Asset `json:"asset,omitempty"`
	Units     string      `json:"units,omitempty"`
	To        string      `json:"to,omitempty"`
	From      string      `json:"from,omitempty"`
	Reference string      `json:"reference,omitempty"`
	// Count is how many blocks a mine op adds; Depth how many a reorg
	// orphans.
	Count int `json:"count,omitempty"`
	Depth int `json:"depth,omitempty"`
}

// encode writes the op as one JSON object. Every field is a string or an
// integer, so encoding cannot fail.
func (o op) encode() []byte {
	b, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("devnet: encoding an op: %v", err))
	}
	return b
}

// decodeOp reads one logged op and checks it as strictly as a new one:
// a damaged or foreign entry must stop the replay, not rebuild a different
// chain.
func decodeOp(b []byte) (op, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var o op
	if err := dec.Decode(&o); err != nil {
		return op{}, fmt.Errorf("devnet: malformed op: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return op{}, errors.New("devnet: malformed op: data after the object")
	}
	if err := o.check(); err != nil {
		return op{}, fmt.Errorf("devnet: invalid %s op: %w", o.Kind, err)
	}
	return o, nil
}

// check enforces what every op of its kind must hold, whatever state it
// is applied to; ledger.allows checks the rest against the state.
func (o op) check() error {
	switch {
	case o.V != opVersion:
		return fmt.Errorf("format version %d, want %d", o.V, opVersion)
	case !o.Network.Valid():
		return fmt.Errorf("unknown network %q", o.Network)
	}
	switch o.Kind {
	case opTransfer:
		return o.checkTransfer()
	case opMine:
		if o.Count < 1 || o.Count > maxBlocks || o.Depth != 0 || o.hasTransfer() {
			return fmt.Errorf("a mine op adds 1 to %d blocks and nothing else", maxBlocks)
		}
		return nil
	case opReorg:
		if o.Depth < 1 || o.Count != 0 || o.hasTransfer() {
			return errors.New("a reorg op orphans at least one block and nothing else")
		}
		return nil
	}
	return fmt.Errorf("unknown kind %q", o.Kind)
}

// hasTransfer reports whether any transfer field is set.
func (o op) hasTransfer() bool {
	return o.TxHash != "" || o.Asset != "" || o.Units != "" || o.To != "" || o.From != "" || o.Reference != ""
}

// checkTransfer checks a transfer's fields with the network's own rules.
func (o op) checkTransfer() error {
	n := o.Network
	switch {
	case o.Count != 0 || o.Depth != 0:
		return errors.New("a transfer has no count or depth")
	case !money.Supports(o.Asset, n):
		return fmt.Errorf("%q does not move on %s", o.Asset, n)
	case !positiveUnits(o.Units):
		return errors.New("units must be a positive integer without leading zeros")
	}
	for _, err := range []error{hd.ValidTxHash(n, o.TxHash), hd.ValidAddress(n, o.To),
		hd.ValidAddress(n, o.From), checkReference(n, o.Reference)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// positiveUnits reports whether s is a canonical positive integer of at
// most maxUnitDigits digits.
func positiveUnits(s string) bool {
	if s == "" || len(s) > maxUnitDigits || s[0] == '0' {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// amount returns a transfer op's amount.
func (o op) amount() money.CoinAmount {
	u, _ := new(big.Int).SetString(o.Units, 10) // checked by positiveUnits
	return money.CoinAmount{Asset: o.Asset, Units: u}
}
