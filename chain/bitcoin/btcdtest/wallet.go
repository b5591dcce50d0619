package btcdtest

import (
	"bytes"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// Output is one output of a transaction the harness sends.
type Output struct {
	To   string // a regtest address
	Sats int64
}

// SendOptions tune SendOutputs.
type SendOptions struct {
	// Fee in satoshis; zero means DefaultFee.
	Fee int64
	// Final opts out of replace-by-fee: every input's sequence is
	// 0xffffffff. By default transactions signal BIP125 replaceability.
	Final bool
}

// DefaultFee is the fee of a harness transaction, about 14 sat/vB for one
// input and two outputs: above btcd's minimum relay fee (1 sat/vB).
const DefaultFee = 2000

// dust is the smallest change output kept (P2WPKH dust at 3 sat/vB).
const dust = 294

// coin is an output the harness key can spend.
type coin struct {
	op       wire.OutPoint
	value    int64
	coinbase bool
}

// sent is what Replace needs of a transaction the harness sent.
type sent struct {
	in  coin
	fee int64
}

// wallet is the harness key and the coins it has: the coinbases of the
// blocks Mine mined, and the change of the transactions it sent.
type wallet struct {
	key    *btcec.PrivateKey
	script []byte // P2WPKH of key
	addr   string

	mu    sync.Mutex
	coins []coin
	used  map[wire.OutPoint]bool
	sent  map[string]sent
}

// newWallet makes a fresh key.
func newWallet(t testing.TB) *wallet {
	key, err := btcec.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	a, err := address.NewAddressWitnessPubKeyHash(address.Hash160(key.PubKey().SerializeCompressed()), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	script, err := txscript.PayToAddrScript(a)
	if err != nil {
		t.Fatal(err)
	}
	return &wallet{key: key, script: script, addr: a.EncodeAddress(), used: map[wire.OutPoint]bool{}, sent: map[string]sent{}}
}

// addCoinbase records the coinbase output of block hash that pays the key.
func (w *wallet) addCoinbase(n *Node, hash string) {
	n.t.Helper()
	var raw string
	n.Call("getblock", &raw, hash, 0)
	b, err := hex.DecodeString(raw)
	if err != nil {
		n.t.Fatal(err)
	}
	var blk wire.MsgBlock
	if err := blk.Deserialize(bytes.NewReader(b)); err != nil {
		n.t.Fatalf("block %s: %v", hash, err)
	}
	cb := blk.Transactions[0]
	for i, o := range cb.TxOut {
		if bytes.Equal(o.PkScript, w.script) {
			w.mu.Lock()
			w.coins = append(w.coins, coin{*wire.NewOutPoint(ptr(cb.TxHash()), uint32(i)), o.Value, true})
			w.mu.Unlock()
		}
	}
}

// ptr returns a pointer to a copy of h.
func ptr(h chainhash.Hash) *chainhash.Hash { return &h }

// Send sends sats to the address to in a transaction that signals
// replace-by-fee, and returns its txid.
func (n *Node) Send(to string, sats int64) string {
	n.t.Helper()
	return n.SendOutputs([]Output{{to, sats}}, SendOptions{})
}

// SendOutputs sends one transaction paying outs, from one coin of the
// harness key with the change back to it, and returns its txid.
func (n *Node) SendOutputs(outs []Output, opts SendOptions) string {
	n.t.Helper()
	fee := opts.Fee
	if fee == 0 {
		fee = DefaultFee
	}
	var total int64
	for _, o := range outs {
		total += o.Sats
	}
	in := n.wallet.pick(n, total+fee)
	return n.broadcast(in, outs, fee, opts.Final)
}

// Replace sends a replacement of the harness transaction txid (BIP125):
// the same input, paying outs instead, with twice the fee and 1,000 sat
// more. It returns the replacement's txid.
func (n *Node) Replace(txid string, outs ...Output) string {
	n.t.Helper()
	n.wallet.mu.Lock()
	old, ok := n.wallet.sent[txid]
	n.wallet.mu.Unlock()
	if !ok {
		n.t.Fatalf("Replace: %s is not a transaction the harness sent", txid)
	}
	return n.broadcast(old.in, outs, 2*old.fee+1000, false)
}

// pick returns an unspent coin worth at least need: a coinbase with 100
// confirmations (regtest's coinbase maturity) or confirmed change.
func (w *wallet) pick(n *Node, need int64) coin {
	n.t.Helper()
	w.mu.Lock()
	coins := append([]coin(nil), w.coins...)
	w.mu.Unlock()
	for _, c := range coins {
		w.mu.Lock()
		used := w.used[c.op]
		w.mu.Unlock()
		if used || c.value < need {
			continue
		}
		var out *struct {
			Confirmations int64 `json:"confirmations"`
		}
		n.Call("gettxout", &out, c.op.Hash.String(), c.op.Index, true)
		switch {
		case out == nil: // spent, or its block was reorganised away
			continue
		case c.coinbase && out.Confirmations < 100, !c.coinbase && out.Confirmations < 1:
			continue
		}
		return c
	}
	n.t.Fatalf("the harness key has no spendable coin of %d sat: mine more blocks", need)
	return coin{}
}

// broadcast signs and sends a transaction spending in to outs plus
// change, and records it.
func (n *Node) broadcast(in coin, outs []Output, fee int64, final bool) string {
	n.t.Helper()
	w := n.wallet
	tx := wire.NewMsgTx(2)
	txIn := wire.NewTxIn(&in.op, nil, nil)
	txIn.Sequence = wire.MaxTxInSequenceNum - 2 // 0xfffffffd: BIP125 replaceable
	if final {
		txIn.Sequence = wire.MaxTxInSequenceNum
	}
	tx.AddTxIn(txIn)
	change := in.value - fee
	for _, o := range outs {
		a, err := address.DecodeAddress(o.To, &chaincfg.RegressionNetParams)
		if err != nil {
			n.t.Fatalf("send to %s: %v", o.To, err)
		}
		script, err := txscript.PayToAddrScript(a)
		if err != nil {
			n.t.Fatalf("send to %s: %v", o.To, err)
		}
		tx.AddTxOut(wire.NewTxOut(o.Sats, script))
		change -= o.Sats
	}
	if change < 0 {
		n.t.Fatalf("send: a coin of %d sat cannot pay the outputs and a fee of %d", in.value, fee)
	}
	if change >= dust {
		tx.AddTxOut(wire.NewTxOut(change, w.script))
	}
	hashes := txscript.NewTxSigHashes(tx, txscript.NewCannedPrevOutputFetcher(w.script, in.value))
	wit, err := txscript.WitnessSignature(tx, hashes, 0, in.value, w.script, txscript.SigHashAll, w.key, true)
	if err != nil {
		n.t.Fatal(err)
	}
	tx.TxIn[0].Witness = wit
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		n.t.Fatal(err)
	}
	var txid string
	n.Call("sendrawtransaction", &txid, hex.EncodeToString(buf.Bytes()))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.used[in.op] = true
	w.sent[txid] = sent{in: in, fee: fee}
	if change >= dust {
		w.coins = append(w.coins, coin{*wire.NewOutPoint(ptr(tx.TxHash()), uint32(len(tx.TxOut)-1)), change, false})
	}
	return txid
}
