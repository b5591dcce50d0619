package main

import (
	"encoding/json"
	"math/big"
	"net/url"
	"slices"
	"testing"
	"time"

	"payd/chain/solana/solanatest"
	"payd/chain/tron/trontest"
	"payd/clock"
	"payd/money"
)

// customerCheckout is a checkout a customer opened on a payment's hosted
// page, through the public API the page calls.
type customerCheckout struct {
	payID, id, address, reference string
	amount                        money.CoinAmount
}

// payOnPage makes a payment of $25 as the business, then does what its
// hosted page does for a customer choosing asset on network: it reads the
// public payment by its code, checks the coin is offered, and opens the
// checkout without a key.
func payOnPage(t *testing.T, business, customer apiClient, asset money.Asset, network money.Network) customerCheckout {
	t.Helper()
	pay := business.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
	page := customer.call(200, "GET", "/public/payments/"+pay["code"].(string), nil)
	offered := false
	b, _ := json.Marshal(page)
	var offers struct {
		Crypto []struct {
			Asset, Network string
		} `json:"crypto"`
	}
	_ = json.Unmarshal(b, &offers)
	for _, o := range offers.Crypto {
		offered = offered || o.Asset == string(asset) && o.Network == string(network)
	}
	if !offered {
		t.Fatalf("%s on %s is not offered on the page: %s", asset, network, b)
	}
	chk := customer.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
		"asset": string(asset), "network": string(network)})
	crypto := chk["crypto"].(map[string]any)
	amount, err := money.ParseCoinAmount(asset, crypto["amount"].(string))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(crypto["payment_uri"].(string))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := crypto["reference"].(string)
	if ref != u.Query().Get("reference") {
		t.Fatalf("the checkout's reference %q is not its payment URI's: %s", ref, u)
	}
	return customerCheckout{payID: pay["id"].(string), id: chk["id"].(string), address: crypto["address"].(string),
		reference: ref, amount: amount}
}

// waitStatus waits up to 20 s for the checkout, as its page reads it
// without a key, to reach status.
func waitStatus(t *testing.T, customer apiClient, id, status string) map[string]any {
	t.Helper()
	var chk map[string]any
	for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
		if chk = customer.call(200, "GET", "/checkouts/"+id, nil); chk["status"] == status {
			return chk
		}
		<-clockAfter(50 * time.Millisecond)
	}
	t.Fatalf("checkout %s never %s: %v", id, status, chk)
	return nil
}

// TestServePaysOnSolanaAndTron runs payd serve without --dev following
// solanatest's RPC node (mainnet's genesis and mints) and trontest's node
// (its TRC-20 named as USDT, 3 confirmations), the two replaying servers
// shaped as the providers document their answers. Customers open a USDC
// and a SOL checkout on solana and a USDT one on tron through the hosted
// page's API, without a key, and pay them: each is processing once seen
// and completed once final (finalized on solana, 3 blocks deep on tron),
// its payment succeeded with its events once each. A USDC transfer of the
// exact amount to the same wallet without the checkout's reference pays
// nothing: that checkout stays open.
func TestServePaysOnSolanaAndTron(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		sol := solanatest.New(t)
		trx := trontest.Start(t, trontest.Options{})
		cli(t, dsn, "migrate")
		var biz newBusiness
		if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example",
			"--wallet", "generate", "--json"), &biz); err != nil {
			t.Fatal(err)
		}
		s := startServe(t, dsn, "--chain", "solana="+sol.URL(), "--chain", "tron="+trx.URL(),
			"--token", "tron:USDT="+trx.Token(), "--rates", "static", "--follow-interval", "100ms",
			"--confirmations", "tron=3")
		business := apiClient{t: t, base: s.base, key: biz.SecretKey}
		customer := apiClient{t: t, base: s.base}

		usdc := payOnPage(t, business, customer, money.USDC, money.Solana)
		coin := payOnPage(t, business, customer, money.SOL, money.Solana)
		unpaid := payOnPage(t, business, customer, money.USDC, money.Solana)
		usdt := payOnPage(t, business, customer, money.USDT, money.Tron)
		if usdc.address != coin.address || usdc.reference == "" || usdc.reference == coin.reference {
			t.Fatalf("solana deposits %+v %+v: the wallet's one address, a reference each", usdc, coin)
		}
		if usdt.address[0] != 'T' || usdt.reference != "" || usdt.amount.Units.Cmp(big.NewInt(25_000_000)) != 0 {
			t.Fatalf("a USDT checkout on tron: %+v", usdt)
		}

		payer := solanatest.Key("customer")
		usdcSig := sol.Transfer(payer, usdc.address, solanatest.USDC, usdc.amount.Units.Int64(), usdc.reference)
		sol.Transfer(payer, coin.address, "", coin.amount.Units.Int64(), coin.reference)
		sol.Transfer(payer, unpaid.address, solanatest.USDC, unpaid.amount.Units.Int64(), "") // no reference
		trx.Transfer(usdt.address, usdt.amount.Units.Int64())
		trx.Mine(1)
		for _, c := range []customerCheckout{usdc, coin, usdt} {
			chk := waitStatus(t, customer, c.id, "processing")
			if chk["crypto"].(map[string]any)["tx_hash"] == nil {
				t.Fatalf("a checkout seen paid without its transaction: %v", chk)
			}
		}

		sol.Advance(solanatest.Lag) // finalized
		trx.Mine(2)                 // 3 deep
		for _, c := range []customerCheckout{usdc, coin, usdt} {
			waitStatus(t, customer, c.id, "completed")
		}
		// One confirmation event per confirmation up to the required (spec
		// 3, event order): a finalized solana transfer counts 32 at once.
		confirmed := func(n int) []string {
			return append(append([]string{"created", "method_selected", "detected"},
				slices.Repeat([]string{"confirmation"}, n)...), "succeeded")
		}
		business.waitEvents(usdc.payID, confirmed(32)...)
		business.waitEvents(coin.payID, confirmed(32)...)
		business.waitEvents(usdt.payID, confirmed(3)...)
		method := business.call(200, "GET", "/payments/"+usdc.payID, nil)["method"].(map[string]any)
		if method["tx_hash"] != usdcSig || method["explorer_url"] != "https://explorer.solana.com/tx/"+usdcSig {
			t.Errorf("the USDC payment's method: %v", method)
		}
		if chk := customer.call(200, "GET", "/checkouts/"+unpaid.id, nil); chk["status"] != "open" ||
			chk["crypto"].(map[string]any)["tx_hash"] != nil {
			t.Fatalf("a transfer without the checkout's reference paid it: %v", chk)
		}
		business.waitEvents(unpaid.payID, "created", "method_selected")
	})
}
