package main

import (
	"encoding/json"
	"math/big"
	"net/url"
	"testing"
	"time"

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

// TestServePaysOnTron runs payd serve without --dev following trontest's
// node (the TRC-20 token named as USDT, 3 confirmations): a customer
// opens a USDT checkout on the payment's hosted page, pays it, and the
// page sees it processing from its block and completed three blocks deep.
func TestServePaysOnTron(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		node := trontest.Start(t, trontest.Options{})
		cli(t, dsn, "migrate")
		var biz newBusiness
		if err := json.Unmarshal(cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example",
			"--wallet", "generate", "--json"), &biz); err != nil {
			t.Fatal(err)
		}
		s := startServe(t, dsn, "--chain", "tron="+node.URL(), "--token", "tron:USDT="+node.Token(), "--rates", "static",
			"--follow-interval", "100ms", "--confirmations", "tron=3")
		business := apiClient{t: t, base: s.base, key: biz.SecretKey}
		customer := apiClient{t: t, base: s.base}
		c := payOnPage(t, business, customer, money.USDT, money.Tron)
		if c.address[0] != 'T' || c.amount.Units.Cmp(big.NewInt(25_000_000)) != 0 {
			t.Fatalf("a USDT checkout on tron: %+v", c)
		}
		node.Transfer(c.address, c.amount.Units.Int64())
		node.Mine(1)
		chk := waitStatus(t, customer, c.id, "processing")
		if chk["crypto"].(map[string]any)["tx_hash"] == nil {
			t.Fatalf("a detected checkout without its transaction: %v", chk)
		}
		node.Mine(2)
		waitStatus(t, customer, c.id, "completed")
		business.waitEvents(c.payID, "created", "method_selected", "detected", "confirmation", "confirmation",
			"confirmation", "succeeded")
	})
}
