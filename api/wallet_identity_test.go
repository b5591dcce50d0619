package api

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestWalletKeyReserialised attaches another business's keys re-serialised
// with bytes that change no address: a zeroed parent fingerprint, another
// (hardened) child number. Each is the same key and refused, naming it;
// before keys were compared by identity they were attached, and the two
// businesses shared deposit addresses.
func TestWalletKeyReserialised(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		owner, other := b.newBusiness(true), b.newBusiness(true)
		w := newHDWallet(t)
		c.data(postWallet(owner.live, keysBody("bitcoin", w.Bitcoin.String(), "ethereum", w.Ethereum.String(),
			"tron", w.Tron.String())), 201)
		for name, variant := range map[string]func(*hdkeychain.ExtendedKey) *hdkeychain.ExtendedKey{
			"zero parent fingerprint": func(k *hdkeychain.ExtendedKey) *hdkeychain.ExtendedKey {
				return hdkeychain.NewExtendedKey(k.Version(), pubBytes(t, k), k.ChainCode(), []byte{0, 0, 0, 0}, k.Depth(), k.ChildIndex(), false)
			},
			"other child number": func(k *hdkeychain.ExtendedKey) *hdkeychain.ExtendedKey {
				return hdkeychain.NewExtendedKey(k.Version(), pubBytes(t, k), k.ChainCode(), binary.BigEndian.AppendUint32(nil, k.ParentFingerprint()), k.Depth(), hdkeychain.HardenedKeyStart+7, false)
			},
		} {
			for n, key := range map[money.Network]string{money.Bitcoin: w.Bitcoin.String(), money.Ethereum: w.Ethereum.String(), money.Tron: w.Tron.String()} {
				k, err := hdkeychain.NewKeyFromString(key)
				if err != nil {
					t.Fatal(err)
				}
				v := variant(k).String()
				if v == key {
					t.Fatalf("%s: the variant of the %s key is the key", name, n)
				}
				c.call(postWallet(other.live, keysBody(string(n), v)), 400, "invalid_request", "keys."+string(n))
			}
		}
		c.call(getWallet(other.live), 404, "not_found")
	})
}

// pubBytes is the compressed public key of an extended public key.
func pubBytes(t *testing.T, k *hdkeychain.ExtendedKey) []byte {
	t.Helper()
	pub, err := k.ECPubKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub.SerializeCompressed()
}

// TestCheckoutSkipsTakenDeposit gives a second business the first one's
// polygon key re-serialised and without identity, as migration 16 leaves
// the later of two wallets attached before keys were compared by identity
// (payd.Wallet.Overlap): its first checkout's address (index
// 0) is the first business's, so it takes index 1 instead of failing with
// a 409 on every checkout from then on; and the first business's next
// checkout skips the index the second took.
func TestCheckoutSkipsTakenDeposit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		key := s.walletKey(t, money.Polygon)
		first := s.checkout("link_code", s.link(2500)["code"].(string), "USDC", "polygon")
		twin := &shop{t: t, b: s.b, c: s.c, biz: s.b.newBusiness(false), wallet: s.wallet}
		k, err := hdkeychain.NewKeyFromString(key.String())
		if err != nil {
			t.Fatal(err)
		}
		reserialised := hdkeychain.NewExtendedKey(k.Version(), pubBytes(t, k), k.ChainCode(), []byte{0, 0, 0, 0}, k.Depth(), k.ChildIndex(), false)
		keys := map[money.Network]string{money.Polygon: reserialised.String()}
		w, err := payd.NewWallet(twin.biz.biz.ID, keys, map[money.Network]string{money.Polygon: "legacy-" + key.Identity()},
			payd.WalletAttached, s.b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateWallet(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		// As migration 16 leaves the later of two wallets sharing a key.
		storetest.ExecRaw(t, db, `UPDATE wallet_keys SET key_id = NULL WHERE wallet_id = $1`, w.ID)
		second := twin.checkout("link_code", twin.link(2500)["code"].(string), "USDC", "polygon")
		third := s.checkout("link_code", s.link(2500)["code"].(string), "USDC", "polygon")
		for i, chk := range []map[string]any{first, second, third} {
			want, err := key.Address(uint32(i))
			if err != nil {
				t.Fatal(err)
			}
			if got := chk["crypto"].(map[string]any)["address"]; got != want {
				t.Fatalf("checkout %d's address = %v, want index %d's %s", i, got, i, want)
			}
		}
	})
}
