package api

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"

	"payd"
	"payd/hd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// Published keys and first receive addresses of the recovery phrase
// "abandon abandon … about" (see hd/account_test.go for their sources:
// BIP84's test vectors, bip_utils, kos-rs).
const (
	abandonZpub   = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	abandonZprv   = "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE"
	abandonVpub   = "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
	abandonEth    = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
	abandonTron   = "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
	abandonSolana = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
)

// TestWallet covers POST and GET /wallet on both databases.
func TestWallet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz := b.newBusiness(true)
		c.call(getWallet(biz.live), 404, "not_found")
		body := jsonBody(map[string]any{"keys": map[string]any{"bitcoin": abandonZpub, "ethereum": abandonEth,
			"tron": abandonTron, "solana": abandonSolana, "polygon": nil}})
		c.call(postWallet(biz.test, body), 403, "test_mode_unavailable")
		testWalletRefusals(t, c, biz)

		post := postWallet(biz.live, body)
		post.header = map[string]string{"Idempotency-Key": "attach-1"}
		first, again := b.do(post), b.do(post)
		if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) ||
			again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("idempotent attach: %d %s / %d %s", first.status, first.body, again.status, again.body)
		}
		got := first.json(t)["data"].(map[string]any)
		wantAbandonWallet(t, got)
		c.call(postWallet(biz.live, body), 409, "wallet_exists")
		read := c.data(getWallet(biz.live), 200)
		wantFields(t, read, got)

		testWalletKeysAreUnique(t, c, b)
		testWalletHoldings(t, c, db, biz)
		testWalletAccess(t, c, b, biz)
	})
}

func getWallet(key string) request { return request{method: "GET", path: "/wallet", key: key} }

func postWallet(key, body string) request {
	return request{method: "POST", path: "/wallet", key: key, body: body}
}

// keysBody is a POST /wallet body of the given network → key pairs.
func keysBody(pairs ...string) string {
	keys := map[string]any{}
	for i := 0; i+1 < len(pairs); i += 2 {
		keys[pairs[i]] = pairs[i+1]
	}
	return jsonBody(map[string]any{"keys": keys})
}

// wantAbandonWallet checks the wallet of "abandon … about" attached with
// polygon left out: every network, its canonical key, its published first
// address, its coins, and nothing held yet.
func wantAbandonWallet(t *testing.T, got map[string]any) {
	t.Helper()
	if id, _ := got["id"].(string); !payd.HasPrefix(id, payd.PrefixWallet) {
		t.Fatalf("id %q", got["id"])
	}
	evm := map[string]any{"account_key": abandonEth, "first_address": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"}
	wantFields(t, got, map[string]any{"kind": "wallet", "source": "attached", "total_usd": 0, "networks": map[string]any{
		"bitcoin": map[string]any{"account_key": abandonZpub, "first_address": "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
			"assets": []any{"BTC"}},
		"ethereum": withAssets(evm, "USDC", "USDT", "ETH"),
		"polygon":  withAssets(evm, "USDC"),
		"tron": map[string]any{"account_key": abandonTron, "first_address": "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
			"assets": []any{"USDT"}},
		"solana": map[string]any{"account_key": abandonSolana, "first_address": abandonSolana,
			"assets": []any{"USDC", "USDT", "SOL"}},
	}})
	wantHoldingList(t, got, "USDC/polygon 0.00 0, USDC/ethereum 0.00 0, USDC/solana 0.00 0, USDT/tron 0.00 0, "+
		"USDT/ethereum 0.00 0, USDT/solana 0.00 0, BTC/bitcoin 0.00000000 0, ETH/ethereum 0.000000 0, SOL/solana 0.0000 0")
}

func withAssets(m map[string]any, assets ...any) map[string]any {
	out := map[string]any{"assets": assets}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// wantHoldingList checks holdings, written "ASSET/network amount
// amount_usd" and joined by ", ".
func wantHoldingList(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var parts []string
	for _, h := range got["holdings"].([]any) {
		m := h.(map[string]any)
		usd := strconv.FormatFloat(m["amount_usd"].(float64), 'f', -1, 64)
		parts = append(parts, m["asset"].(string)+"/"+m["network"].(string)+" "+m["amount"].(string)+" "+usd)
	}
	if g := strings.Join(parts, ", "); g != want {
		t.Fatalf("holdings = %q, want %q", g, want)
	}
}

// testWalletRefusals sends bodies that must each be refused with a 400
// naming the field, and checks that a private key is never repeated.
func testWalletRefusals(t *testing.T, c clTest, biz *testBusiness) {
	for body, field := range map[string]string{
		`{}`:                                                   "keys",
		`{"keys":{}}`:                                          "keys",
		`{"keys":{"bitcoin":null}}`:                            "keys",
		`{"keys":{"dogecoin":"x"}}`:                            "keys.dogecoin",
		`{"keys":{"bitcoin":5}}`:                               "keys.bitcoin",
		`{"keys":{"bitcoin":""}}`:                              "keys.bitcoin",
		`{"keys":"zpub"}`:                                      "keys",
		keysBody("bitcoin", abandonZprv):                       "keys.bitcoin",
		keysBody("bitcoin", abandonVpub):                       "keys.bitcoin",
		keysBody("ethereum", abandonZpub):                      "keys.ethereum",
		keysBody("solana", "0OIl"):                             "keys.solana",
		keysBody("tron", abandonTron+"x"):                      "keys.tron",
		keysBody("bitcoin", abandonZpub, "tron", abandonZprv):  "keys.tron",
		`{"keys":{"bitcoin":"` + abandonZpub + `"},"keys":{}}`: "keys",
	} {
		res := c.call(postWallet(biz.live, body), 400, "invalid_request", field)
		if strings.Contains(jsonBody(res), abandonZprv[4:40]) {
			t.Fatalf("a refusal repeats the private key: %v", res)
		}
	}
	if strings.Contains(c.b.logs.String(), abandonZprv[4:40]) {
		t.Fatal("the log holds the private key")
	}
	c.call(getWallet(biz.live), 404, "not_found")
}

// testWalletKeysAreUnique attaches keys another business holds: refused on
// the network that collides, however the key is spelled.
func testWalletKeysAreUnique(t *testing.T, c clTest, b *bundle) {
	other := b.newBusiness(false)
	fresh := newHDWallet(t)
	c.call(postWallet(other.live, keysBody("bitcoin", xpubOf(t, abandonZpub))), 400, "invalid_request", "keys.bitcoin")
	c.call(postWallet(other.live, keysBody("solana", fresh.Solana.String(), "ethereum", abandonEth)), 400, "invalid_request", "keys.ethereum")
	c.call(postWallet(other.live, keysBody("ethereum", fresh.Ethereum.String(), "polygon", abandonEth)), 400, "invalid_request", "keys.polygon")
	// A key held on polygon alone, taken by a body that leaves polygon
	// out: the field named is the one sent.
	third, p := b.newBusiness(false), newHDWallet(t)
	c.data(postWallet(third.test, keysBody("ethereum", p.Tron.String(), "polygon", p.Ethereum.String())), 201)
	c.call(postWallet(other.live, keysBody("ethereum", p.Ethereum.String())), 400, "invalid_request", "keys.ethereum")
	// Nothing was attached by the refusals: other's fresh keys go in now.
	got := c.data(postWallet(other.test, keysBody("solana", fresh.Solana.String(), "ethereum", fresh.Ethereum.String())), 201)
	nets := got["networks"].(map[string]any)
	if len(nets) != 3 || nets["polygon"].(map[string]any)["account_key"] != fresh.Ethereum.String() {
		t.Fatalf("networks = %v", nets)
	}
}

// testWalletHoldings settles coins into the wallet through the store, as
// the payment lifecycle will, and reads their values.
func testWalletHoldings(t *testing.T, c clTest, db *store.DB, biz *testBusiness) {
	ctx := context.Background()
	w, err := db.WalletByBusiness(ctx, biz.biz.ID)
	if err != nil {
		t.Fatal(err)
	}
	tenETH, _ := new(big.Int).SetString("10000000000000000001", 10) // 10 ETH and 1 wei: past int64
	for _, h := range []payd.Holding{
		{Network: money.Bitcoin, Amount: money.NewCoinAmount(money.BTC, 150_000_000)},
		{Network: money.Polygon, Amount: money.NewCoinAmount(money.USDC, 2_505_000)},
		{Network: money.Ethereum, Amount: money.CoinAmount{Asset: money.ETH, Units: tenETH}},
	} {
		if err := db.AddHoldings(ctx, w.ID, h.Network, h.Amount); err != nil {
			t.Fatal(err)
		}
	}
	got := c.data(getWallet(biz.live), 200)
	// At the test rates: BTC $64,000, ETH $3,200; 2.505 USDC rounds to 251 cents.
	wantHoldingList(t, got, "USDC/polygon 2.505 251, USDC/ethereum 0.00 0, USDC/solana 0.00 0, USDT/tron 0.00 0, "+
		"USDT/ethereum 0.00 0, USDT/solana 0.00 0, BTC/bitcoin 1.50000000 9600000, "+
		"ETH/ethereum 10.000000000000000001 3200000, SOL/solana 0.0000 0")
	wantFields(t, got, map[string]any{"total_usd": 9600000 + 251 + 3200000})
}

// testWalletAccess checks the wallet areas of restricted keys.
func testWalletAccess(t *testing.T, c clTest, b *bundle, biz *testBusiness) {
	read := b.restricted(biz, "wallet:read")
	c.data(getWallet(read), 200)
	c.call(postWallet(read, keysBody("solana", abandonSolana)), 403, "permission_denied")
	c.call(getWallet(b.restricted(biz, "payments:write,checkout_settings:write")), 403, "permission_denied")
	c.call(getWallet(""), 401, "unauthenticated")
	other := b.newBusiness(true)
	write := b.restricted(other, "wallet:write")
	c.call(getWallet(write), 404, "not_found")
	c.data(postWallet(write, keysBody("solana", newHDWallet(t).Solana.String())), 201)
}

// newHDWallet makes the public keys of a fresh random wallet.
func newHDWallet(t *testing.T) hd.Wallet {
	t.Helper()
	phrase, err := hd.NewMnemonic(rand.Reader, 12)
	if err != nil {
		t.Fatal(err)
	}
	w, err := hd.WalletFromMnemonic(phrase, "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// xpubOf writes a zpub with xpub version bytes: the same key spelled the
// other way a wallet may export it.
func xpubOf(t *testing.T, zpub string) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(zpub)
	if err != nil {
		t.Fatal(err)
	}
	x, err := k.CloneWithVersion(chaincfg.MainNetParams.HDPublicKeyID[:])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(x.String(), "xpub") {
		t.Fatalf("re-encoded %s", x)
	}
	return x.String()
}

// FuzzWalletBody feeds bodies through the strict decoder, the key checks
// and the wallet rules: any input ends in a wallet or a 400 error naming
// the problem, never a panic, and a refusal never repeats a key it was
// sent (it may be private).
func FuzzWalletBody(f *testing.F) {
	for _, s := range []string{keysBody("bitcoin", abandonZpub), keysBody("bitcoin", abandonZprv), keysBody("ethereum", abandonEth),
		keysBody("solana", abandonSolana, "tron", abandonTron), keysBody("bitcoin", abandonVpub), `{"keys":{"polygon":null}}`,
		keysBody("tron", "xpub661MyMwAqRbc"), `{"keys":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createWalletRequest
		if err := decodeJSON(body, &req); err != nil {
			return
		}
		keys, ids, err := req.Keys.parse()
		if err == nil {
			if _, err = payd.NewWallet("biz_x", keys, ids, payd.WalletAttached, time.Unix(0, 0)); err == nil {
				return
			}
		}
		var pe *payd.Error
		if !errors.As(err, &pe) || statusByCode[pe.Code] != 400 || !strings.HasPrefix(pe.Field, "keys") {
			t.Fatalf("error %v is not a 400 naming a key", err)
		}
		for _, k := range req.Keys.byNetwork() {
			if k != nil && len(*k) >= 8 && strings.Contains(pe.Message, *k) {
				t.Fatalf("the refusal %q repeats the key it was sent", pe.Message)
			}
		}
	})
}
