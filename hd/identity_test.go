package hd

import (
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"payd/money"
)

// TestIdentity gives one key one identity however it is serialised: xpub
// or zpub, any parent fingerprint, any (hardened) child number. Another
// key, or the same public key with another chain code, is another.
func TestIdentity(t *testing.T) {
	w, err := WalletFromMnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := WalletFromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []AccountKey{w.Bitcoin, w.Ethereum, w.Tron} {
		id := k.Identity()
		if len(id) != 64 {
			t.Fatalf("%s identity %q", k.Network(), id)
		}
		ext := k.ext
		pub, _ := ext.ECPubKey()
		fp := binary.BigEndian.AppendUint32(nil, ext.ParentFingerprint())
		same := []*hdkeychain.ExtendedKey{
			hdkeychain.NewExtendedKey(ext.Version(), pub.SerializeCompressed(), ext.ChainCode(), []byte{0, 0, 0, 0}, 3, ext.ChildIndex(), false),
			hdkeychain.NewExtendedKey(ext.Version(), pub.SerializeCompressed(), ext.ChainCode(), fp, 3, hdkeychain.HardenedKeyStart+9, false),
			hdkeychain.NewExtendedKey([]byte{0x04, 0x88, 0xb2, 0x1e}, pub.SerializeCompressed(), ext.ChainCode(), fp, 3, ext.ChildIndex(), false),
		}
		for _, v := range same {
			got, err := KeyIdentity(k.Network(), v.String())
			if err != nil || got != id {
				t.Fatalf("%s: %s has identity %q, %v; want %q", k.Network(), v, got, err, id)
			}
		}
		chain := append([]byte(nil), ext.ChainCode()...)
		chain[0] ^= 1
		moved := hdkeychain.NewExtendedKey(ext.Version(), pub.SerializeCompressed(), chain, fp, 3, ext.ChildIndex(), false)
		if got, err := KeyIdentity(k.Network(), moved.String()); err != nil || got == id {
			t.Fatalf("%s: another chain code has identity %q, %v", k.Network(), got, err)
		}
	}
	if w.Ethereum.Identity() == other.Ethereum.Identity() || w.Solana.Identity() == other.Solana.Identity() {
		t.Fatal("two wallets share an identity")
	}
	if id, err := KeyIdentity(money.Solana, w.Solana.String()); err != nil || id != w.Solana.Identity() || len(id) != 64 {
		t.Fatalf("solana identity %q, %v", id, err)
	}
	if (AccountKey{}).Identity() != "" {
		t.Fatal("the zero key has an identity")
	}
	if _, err := KeyIdentity(money.Tron, "xpub-nope"); err == nil {
		t.Fatal("a malformed key has an identity")
	}
}
