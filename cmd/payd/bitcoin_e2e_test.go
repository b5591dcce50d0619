package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"payd/chain/bitcoin/btcdtest"
	"payd/clock"
	"payd/money"
	"payd/store/storetest"
)

// The scenarios of issue 16 through payd serve, without --dev, on a real
// bitcoin node (btcd in regtest): what the customer sends, reorgs,
// replace-by-fee and a node or a server that goes away. The events of a
// payment are read from the API, not from webhooks.

// btcServe is payd serve following one btcd regtest node, with a business
// made with a generated wallet.
type btcServe struct {
	t    *testing.T
	dsn  string
	node *btcdtest.Node
	srv  *server
	api  apiClient
}

// startBTCServe starts btcd, migrates dsn, creates the business and runs
// payd serve on the node with two confirmations.
func startBTCServe(t *testing.T, dsn string) *btcServe {
	t.Helper()
	b := newBTCShop(t, dsn)
	b.serve()
	return b
}

// newBTCShop starts btcd and makes a business with a generated wallet on
// dsn, for payd serve to be started on them.
func newBTCShop(t *testing.T, dsn string) *btcServe {
	t.Helper()
	b := &btcServe{t: t, dsn: dsn, node: btcdtest.Start(t)}
	cli(t, dsn, "migrate")
	var biz newBusiness
	out := cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--wallet", "generate", "--json")
	if err := json.Unmarshal(out, &biz); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b.api.t, b.api.key = t, biz.SecretKey
	return b
}

// serve (re)starts payd serve on the node.
func (b *btcServe) serve() {
	b.t.Helper()
	b.srv = startServe(b.t, b.dsn, "--chain", "bitcoin="+b.node.URL(), "--rates", "static", "--follow-interval", "100ms", "--drop-after", "2s",
		"--confirmations", "bitcoin=2")
	b.api.base = b.srv.base
}

// btcCheckout is a payment with its BTC checkout open.
type btcCheckout struct {
	pay, checkout, addr, quoted string
	sats                        int64 // the quoted amount
}

// open creates a payment of cents US cents and its BTC checkout.
func (b *btcServe) open(cents int64) btcCheckout {
	b.t.Helper()
	pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": cents, "currency": "USD"})
	chk := b.api.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto", "asset": "BTC",
		"network": "bitcoin"})
	crypto := chk["crypto"].(map[string]any)
	amount, err := money.ParseCoinAmount(money.BTC, crypto["amount"].(string))
	if err != nil {
		b.t.Fatal(err)
	}
	return btcCheckout{pay: pay["id"].(string), checkout: chk["id"].(string), addr: crypto["address"].(string),
		quoted: crypto["amount"].(string), sats: amount.Units.Int64()}
}

// confirmations returns the checkout's confirmations.current.
func (b *btcServe) confirmations(c btcCheckout) float64 {
	b.t.Helper()
	chk := b.api.call(200, "GET", "/checkouts/"+c.checkout, nil)
	return chk["confirmations"].(map[string]any)["current"].(float64)
}

// waitConfirmations waits up to 20 s for the checkout to show want
// confirmations.
func (b *btcServe) waitConfirmations(c btcCheckout, want float64) {
	b.t.Helper()
	var got float64
	for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
		if got = b.confirmations(c); got == want {
			return
		}
		<-clockAfter(50 * time.Millisecond)
	}
	b.t.Fatalf("checkout %s shows %v confirmations, want %v", c.checkout, got, want)
}

// sats writes satoshis as a BTC decimal, as the API does.
func sats(n int64) string {
	return strings.TrimRight(strings.TrimRight(new(big.Rat).SetFrac64(n, 100_000_000).FloatString(8), "0"), ".")
}

// confirmed are the events of a BTC payment that ends as status after
// two confirmations.
func confirmed(status string) []string {
	return []string{"created", "method_selected", "detected", "confirmation", "confirmation", status}
}

// TestServeBitcoinUnderAndOverpaid pays one checkout too little and one
// too much on btcd regtest: the first ends underpaid with what was
// received, the second succeeds and shows the excess as overpaid_amount.
func TestServeBitcoinUnderAndOverpaid(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		b := startBTCServe(t, dsn)
		under, over := b.open(2500), b.open(4000)
		b.node.Send(under.addr, under.sats*7/10)
		overTx := b.node.Send(over.addr, under.sats+over.sats) // one checkout's worth more
		b.api.waitEvents(under.pay, "created", "method_selected", "detected")
		b.api.waitEvents(over.pay, "created", "method_selected", "detected")
		b.node.Mine(2)

		got := b.api.waitEvents(under.pay, confirmed("underpaid")...)
		chk := b.api.call(200, "GET", "/checkouts/"+under.checkout, nil)
		received := 2500 * (under.sats * 7 / 10) / under.sats // rounded down
		if got["status"] != "underpaid" || got["amount_received"] != float64(received) || chk["status"] != "underpaid" {
			t.Fatalf("underpaid payment %v, checkout %v", got, chk)
		}
		got = b.api.waitEvents(over.pay, confirmed("succeeded")...)
		method := got["method"].(map[string]any)
		chk = b.api.call(200, "GET", "/checkouts/"+over.checkout, nil)
		if got["status"] != "succeeded" || got["amount_received"] != float64(4000) || method["tx_hash"] != overTx ||
			rat(fmt.Sprint(method["overpaid_amount"])).Cmp(rat(sats(under.sats))) != 0 || chk["status"] != "completed" {
			t.Fatalf("overpaid payment %v (sent %s more), checkout %v", got, sats(under.sats), chk)
		}
	})
}

// TestServeBitcoinReorg confirms a payment once, orphans that block (the
// transaction goes back to btcd's mempool) and mines a new branch: the
// checkout's confirmations go back to 0, then the payment succeeds once,
// with each confirmation event written once.
func TestServeBitcoinReorg(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		b := startBTCServe(t, dsn)
		c := b.open(2500)
		tx := b.node.Send(c.addr, c.sats)
		b.api.waitEvents(c.pay, "created", "method_selected", "detected")
		block := b.node.Mine(1)[0]
		b.api.waitEvents(c.pay, "created", "method_selected", "detected", "confirmation")
		b.waitConfirmations(c, 1)

		b.node.Invalidate(block)
		if mp := b.node.Mempool(); len(mp) != 1 || mp[0] != tx {
			t.Fatalf("btcd's mempool after the reorg: %v, want %s", mp, tx)
		}
		b.waitConfirmations(c, 0)
		if chk := b.api.call(200, "GET", "/checkouts/"+c.checkout, nil); chk["status"] != "processing" {
			t.Fatalf("checkout after the reorg: %v", chk)
		}

		b.node.Mine(1)
		b.waitConfirmations(c, 1)
		b.node.Mine(1)
		got := b.api.waitEvents(c.pay, confirmed("succeeded")...)
		if method := got["method"].(map[string]any); method["tx_hash"] != tx {
			t.Fatalf("payment after the new branch: %v", got)
		}
		for i, e := range got["events"].([]any) {
			data, _ := e.(map[string]any)["data"].(map[string]any)
			if i == 3 || i == 4 {
				if data["current"] != float64(i-2) {
					t.Fatalf("confirmation event %d: %v", i-2, data)
				}
			}
		}
		// Nothing more is written later: a block more changes nothing.
		b.node.Mine(1)
		<-clockAfter(500 * time.Millisecond)
		b.api.waitEvents(c.pay, confirmed("succeeded")...)
	})
}

// TestServeBitcoinReplaceByFee replaces a payment's transaction before it
// is mined (BIP125): the payment records the first as detected, then the
// replacement as detected (seen at once in the mempool), then the first
// as dropped (once btcd has not known it for the follower's DropAfter);
// mined, the replacement pays the checkout once.
func TestServeBitcoinReplaceByFee(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		b := startBTCServe(t, dsn)
		c := b.open(2500)
		first := b.node.Send(c.addr, c.sats)
		b.api.waitEvents(c.pay, "created", "method_selected", "detected")
		second := b.node.Replace(first, btcdtest.Output{To: c.addr, Sats: c.sats})
		got := b.api.waitEvents(c.pay, "created", "method_selected", "detected", "detected", "dropped")
		events := got["events"].([]any)
		hashes := make([]any, len(events))
		for i, e := range events {
			data, _ := e.(map[string]any)["data"].(map[string]any)
			hashes[i] = data["tx_hash"]
		}
		if hashes[2] != first || hashes[3] != second || hashes[4] != first {
			t.Fatalf("detected %v then %v, dropped %v; want %s, %s, %s (events %v)", hashes[2], hashes[3], hashes[4],
				first, second, first, events)
		}
		if b.confirmations(c) != 0 {
			t.Fatal("a replacement in the mempool has confirmations")
		}
		b.node.Mine(2)
		got = b.api.waitEvents(c.pay, "created", "method_selected", "detected", "detected", "dropped", "confirmation",
			"confirmation", "succeeded")
		if method := got["method"].(map[string]any); got["status"] != "succeeded" || method["tx_hash"] != second ||
			method["amount"] != c.quoted {
			t.Fatalf("payment after the replacement was mined: %v", got)
		}
	})
}

// TestServeBitcoinNodeDown stops btcd under payd serve: new BTC checkouts
// answer 503 temporarily_unavailable within seconds and payd networks
// shows the error; once btcd is back they open again. Then payd serve
// itself stops while a payment is sent and confirmed; started again, it
// catches up from the block it stored last and the payment succeeds.
func TestServeBitcoinNodeDown(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		b := startBTCServe(t, dsn)
		c := b.open(2500) // opened before anything goes away
		b.node.Stop()
		stopped := clock.Real{}.Now()
		for {
			pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": 1000, "currency": "USD"})
			code, body := b.api.try("POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
				"asset": "BTC", "network": "bitcoin"})
			if code == 503 && strings.Contains(body, `"temporarily_unavailable"`) {
				break
			}
			if code != 201 {
				t.Fatalf("POST /checkouts while btcd stops: %d %s", code, body)
			}
			if (clock.Real{}).Now().Sub(stopped) > 5*time.Second {
				t.Fatal("checkouts still open 5 s after btcd stopped")
			}
			<-clockAfter(100 * time.Millisecond)
		}
		t.Logf("checkouts refused %v after btcd stopped", clock.Real{}.Now().Sub(stopped).Round(time.Millisecond))
		if s := btcNetworks(t, dsn); len(s) != 1 || s[0].Error == "" || s[0].FailingSince == nil {
			t.Fatalf("payd networks while btcd is stopped: %+v", s)
		}

		b.node.Restart()
		restarted := clock.Real{}.Now()
		for {
			pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": 1000, "currency": "USD"})
			code, body := b.api.try("POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
				"asset": "BTC", "network": "bitcoin"})
			if code == 201 {
				break
			}
			if code != 503 || (clock.Real{}).Now().Sub(restarted) > 40*time.Second {
				t.Fatalf("POST /checkouts after btcd restarted: %d %s", code, body)
			}
			<-clockAfter(100 * time.Millisecond)
		}
		t.Logf("checkouts open %v after btcd restarted", clock.Real{}.Now().Sub(restarted).Round(time.Millisecond))
		if s := btcNetworks(t, dsn); len(s) != 1 || s[0].Error != "" {
			t.Fatalf("payd networks after btcd restarted: %+v", s)
		}

		// The server goes away; the customer pays and the chain moves on.
		b.srv.stop(t)
		tx := b.node.Send(c.addr, c.sats)
		b.node.Mine(3)
		b.serve()
		got := b.api.waitEvents(c.pay, confirmed("succeeded")...)
		if method := got["method"].(map[string]any); method["tx_hash"] != tx {
			t.Fatalf("payment made while payd was stopped: %v", got)
		}
		tip, _ := b.node.Tip()
		if s := btcNetworks(t, dsn); len(s) != 1 || s[0].Height != tip || s[0].Error != "" {
			t.Fatalf("payd networks after catching up: %+v (tip %d)", s, tip)
		}
	})
}

// btcNetworks runs payd networks --json.
func btcNetworks(t *testing.T, dsn string) []networkStatus {
	t.Helper()
	var status struct {
		Data []networkStatus `json:"data"`
	}
	if err := json.Unmarshal(cli(t, dsn, "networks", "--json"), &status); err != nil {
		t.Fatal(err)
	}
	return status.Data
}

// TestServeStartsWithNodeDown starts payd serve while its bitcoin node is
// down: serve starts anyway (the other networks would go on), bitcoin is
// offered nothing and refuses checkouts; once the node answers, the
// follower connects it and BTC checkouts open.
func TestServeStartsWithNodeDown(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	b := newBTCShop(t, dsn)
	b.node.Stop()
	b.srv = startServe(t, dsn, "--chain", "bitcoin="+b.node.URL(), "--rates", "static", "--follow-interval", "100ms",
		"--node-wait", "1s")
	b.api.base = b.srv.base
	pay := b.api.call(201, "POST", "/payments", map[string]any{"amount": 1000, "currency": "USD"})
	b.api.call(400, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto", "asset": "BTC",
		"network": "bitcoin"})
	b.node.Restart()
	for deadline := (clock.Real{}).Now().Add(30 * time.Second); ; {
		code, body := b.api.try("POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
			"asset": "BTC", "network": "bitcoin"})
		if code == 201 {
			break
		}
		if (clock.Real{}).Now().After(deadline) {
			t.Fatalf("BTC checkouts still refused 30 s after the node came back: %d %s", code, body)
		}
		<-clockAfter(100 * time.Millisecond)
	}
}
