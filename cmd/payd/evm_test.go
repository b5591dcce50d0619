package main

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"payd/chain/evm/evmtest"
	"payd/clock"
	"payd/money"
)

// evmShop is payd serve, without --dev, following go-ethereum's simulated
// chain over HTTP JSON-RPC, with a real ERC-20 deployed as USDC and a
// business made with a generated wallet.
type evmShop struct {
	chain *evmtest.Chain
	usdc  string
	api   apiClient
	dsn   string
}

// evmConfirmations is --confirmations ethereum=3 of every evmShop.
const evmConfirmations = 3

// startEVMShop starts the chain, deploys the token and runs payd serve on
// them.
func startEVMShop(t *testing.T, dsn string) *evmShop {
	t.Helper()
	chain := evmtest.Start(t)
	usdc := chain.DeployToken(chain.Accounts[0], "USDC", big.NewInt(1e15))
	cli(t, dsn, "migrate")
	var biz newBusiness
	out := cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--wallet", "generate", "--json")
	if err := json.Unmarshal(out, &biz); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := startServe(t, dsn, "--chain", "ethereum="+chain.URL(), "--token", "ethereum:USDC="+usdc, "--rates", "static",
		"--follow-interval", "100ms", "--drop-after", "2s", "--confirmations", "ethereum=3")
	return &evmShop{chain: chain, usdc: usdc, api: apiClient{t: t, base: s.base, key: biz.SecretKey}, dsn: dsn}
}

// evmCheckout is a payment of $25 and its checkout in one coin on
// ethereum.
type evmCheckout struct {
	payID, id, address string
	amount             money.CoinAmount
}

// open creates the payment and its checkout in asset.
func (s *evmShop) open(t *testing.T, asset money.Asset) evmCheckout {
	t.Helper()
	pay := s.api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
	chk := s.api.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
		"asset": string(asset), "network": "ethereum"})
	crypto := chk["crypto"].(map[string]any)
	amount, err := money.ParseCoinAmount(asset, crypto["amount"].(string))
	if err != nil {
		t.Fatal(err)
	}
	addr := crypto["address"].(string)
	if !strings.HasPrefix(addr, "0x") || len(addr) != 42 || !strings.HasPrefix(crypto["payment_uri"].(string), "ethereum:") {
		t.Fatalf("deposit on the simulated chain: %v", crypto)
	}
	return evmCheckout{payID: pay["id"].(string), id: chk["id"].(string), address: addr, amount: amount}
}

// units is the checkout's amount in base units plus delta.
func (c evmCheckout) units(delta int64) *big.Int {
	return new(big.Int).Add(c.amount.Units, big.NewInt(delta))
}

// commit mines a block.
func (s *evmShop) commit() { s.chain.Commit() }

// waitCheckout waits up to 20 s for the checkout to satisfy ok, and
// returns it.
func (s *evmShop) waitCheckout(t *testing.T, id string, what string, ok func(chk map[string]any) bool) map[string]any {
	t.Helper()
	var chk map[string]any
	for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
		chk = s.api.call(200, "GET", "/checkouts/"+id, nil)
		if ok(chk) {
			return chk
		}
		<-clockAfter(50 * time.Millisecond)
	}
	t.Fatalf("checkout %s never %s: %v", id, what, chk)
	return nil
}

// current is the checkout's confirmations.current.
func current(chk map[string]any) int {
	return int(chk["confirmations"].(map[string]any)["current"].(float64))
}

// TestServeFollowsEVMChain runs payd serve without --dev on go-ethereum's
// simulated chain with static rates and a real ERC-20 named as USDC: a
// business made with a generated wallet takes an ETH payment, detected in
// its first block (pending pools are not read) and confirmed block by
// block to succeeded, and USDC payments in the same blocks: exact
// (succeeded), short (underpaid) and over (succeeded, overpaid_amount).
// A coin with no contract on the chain (USDT) and a network without a
// node (polygon) are not offered; payd networks shows the chain's id.
func TestServeFollowsEVMChain(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		s := startEVMShop(t, dsn)
		api := s.api
		eth := s.open(t, money.ETH)
		exact, short, over := s.open(t, money.USDC), s.open(t, money.USDC), s.open(t, money.USDC)
		for _, c := range []struct {
			asset, network string
		}{{"USDT", "ethereum"}, {"USDC", "polygon"}} {
			code := api.errorCode(400, "POST", "/checkouts", map[string]any{"payment_id": eth.payID, "rail": "crypto",
				"asset": c.asset, "network": c.network})
			if code != "asset_unavailable" {
				t.Errorf("%s on %s: %s, want asset_unavailable", c.asset, c.network, code)
			}
		}

		payer, holder := s.chain.Accounts[1], s.chain.Accounts[0]
		ethTx := s.chain.SendETH(payer, eth.address, eth.units(0))
		exactTx := s.chain.TransferToken(holder, s.usdc, exact.address, exact.units(0))
		s.chain.TransferToken(holder, s.usdc, short.address, short.units(-1))
		s.chain.TransferToken(holder, s.usdc, over.address, over.units(1_000_000))
		// Nothing is seen before the block: EVM pending pools are not read.
		<-clockAfter(300 * time.Millisecond)
		api.waitEvents(eth.payID, "created", "method_selected")
		s.commit()
		api.waitEvents(eth.payID, "created", "method_selected", "detected", "confirmation")
		if chk := api.call(200, "GET", "/checkouts/"+eth.id, nil); chk["status"] != "processing" || current(chk) != 1 {
			t.Fatalf("checkout after the first block: %v", chk)
		}
		s.commit()
		api.waitEvents(eth.payID, "created", "method_selected", "detected", "confirmation", "confirmation")
		s.commit()
		paid := []string{"created", "method_selected", "detected", "confirmation", "confirmation", "confirmation"}
		got := api.waitEvents(eth.payID, append(paid, "succeeded")...)
		method := got["method"].(map[string]any)
		if method["tx_hash"] != ethTx || method["amount"] != eth.amount.String() || method["overpaid_amount"] != nil {
			t.Fatalf("ETH payment after three blocks: %v", got)
		}

		got = api.waitEvents(exact.payID, append(paid, "succeeded")...)
		if method := got["method"].(map[string]any); method["tx_hash"] != exactTx || method["overpaid_amount"] != nil {
			t.Errorf("exact USDC payment: %v", got)
		}
		got = api.waitEvents(short.payID, append(paid, "underpaid")...)
		if got["status"] != "underpaid" {
			t.Errorf("short USDC payment: %v", got)
		}
		got = api.waitEvents(over.payID, append(paid, "succeeded")...)
		overpaid, _ := got["method"].(map[string]any)["overpaid_amount"].(string)
		if a, err := money.ParseCoinAmount(money.USDC, overpaid); err != nil || a.Units.Int64() != 1_000_000 {
			t.Errorf("USDC payment 1 USDC over: %v", got)
		}
		if b := s.chain.TokenBalance(s.usdc, over.address); b.Cmp(over.units(1_000_000)) != 0 {
			t.Errorf("the deposit holds %s on chain", b)
		}

		var status struct {
			Data []networkStatus `json:"data"`
		}
		if err := json.Unmarshal(cli(t, dsn, "networks", "--json"), &status); err != nil {
			t.Fatal(err)
		}
		tip, _ := s.chain.Head()
		if len(status.Data) != 1 || status.Data[0].Chain != "chain 1337" || status.Data[0].Height != tip ||
			status.Data[0].Error != "" {
			t.Fatalf("payd networks: %+v (tip %d)", status.Data, tip)
		}
	})
}

// TestServeEVMReorg orphans the block of an ETH payment one block after
// it, and builds a longer branch from before it. go-ethereum puts the
// orphaned transaction back in its pool and mines it again in the new
// branch's first block: the follower unwinds, the checkout's
// confirmations go back, and the payment succeeds once on the new branch,
// each confirmation written once; so does a USDC payment whose longer
// branch is mined at once. A third payment's transaction is
// dropped from the pool after the fork (Rollback) and never mined again:
// the checkout records it dropped, is open again, and takes a new
// transaction.
func TestServeEVMReorg(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		s := startEVMShop(t, dsn)
		api := s.api

		// Mined again on the new branch.
		c := s.open(t, money.ETH)
		height, parent := s.chain.Head()
		tx := s.chain.SendETH(s.chain.Accounts[1], c.address, c.units(0))
		orphan := s.chain.Commit()
		s.commit()
		twice := []string{"created", "method_selected", "detected", "confirmation", "confirmation"}
		api.waitEvents(c.payID, twice...)
		s.waitCheckout(t, c.id, "at 2 confirmations", func(chk map[string]any) bool { return current(chk) == 2 })
		s.chain.Fork(parent)
		// The simulated chain's tip is the fork point until the next
		// block: the follower unwinds both blocks, and the transaction
		// waits in the pool again.
		s.waitCheckout(t, c.id, "back to 0 confirmations", func(chk map[string]any) bool {
			return current(chk) == 0 && chk["status"] == "processing"
		})
		s.commit()
		if r := s.chain.Receipt(tx); r.BlockNumber.Int64() != height+1 || r.BlockHash.Hex() == orphan {
			t.Fatalf("the orphaned transaction was mined again in block %d %s; the orphan was %d %s",
				r.BlockNumber, r.BlockHash.Hex(), height+1, orphan)
		}
		s.waitCheckout(t, c.id, "at 1 confirmation on the new branch", func(chk map[string]any) bool { return current(chk) == 1 })
		api.waitEvents(c.payID, twice...)
		s.commit()
		s.commit() // the new branch is longer than the old
		got := api.waitEvents(c.payID, append(twice, "confirmation", "succeeded")...)
		if got["method"].(map[string]any)["tx_hash"] != tx {
			t.Fatalf("payment after the reorg: %v", got)
		}

		// A USDC payment whose longer branch is mined at once: the
		// follower usually never sees the fork point as the tip, and finds
		// the orphan by the new block's parent. The transfer's log is read
		// again from the new branch's block.
		c = s.open(t, money.USDC)
		_, parent = s.chain.Head()
		tx = s.chain.TransferToken(s.chain.Accounts[0], s.usdc, c.address, c.units(0))
		s.commit()
		s.commit()
		api.waitEvents(c.payID, twice...)
		s.chain.Fork(parent)
		s.commit()
		s.commit()
		s.commit()
		got = api.waitEvents(c.payID, append(twice, "confirmation", "succeeded")...)
		if got["method"].(map[string]any)["tx_hash"] != tx {
			t.Fatalf("USDC payment after the reorg: %v", got)
		}

		// Dropped, and paid again.
		c = s.open(t, money.ETH)
		_, parent = s.chain.Head()
		s.chain.SendETH(s.chain.Accounts[2], c.address, c.units(0))
		s.commit()
		s.commit()
		api.waitEvents(c.payID, twice...)
		s.chain.Fork(parent)
		s.chain.Rollback()
		dropped := append(twice, "dropped")
		got = api.waitEvents(c.payID, dropped...)
		if got["status"] != "pending" || got["method"].(map[string]any)["tx_hash"] != nil {
			t.Fatalf("payment after its transaction was dropped: %v", got)
		}
		s.waitCheckout(t, c.id, "open again", func(chk map[string]any) bool {
			return current(chk) == 0 && chk["status"] == "open"
		})
		for range 3 {
			s.commit()
		}
		again := s.chain.SendETH(s.chain.Accounts[3], c.address, c.units(0))
		for range evmConfirmations {
			s.commit()
		}
		got = api.waitEvents(c.payID, append(dropped, "detected", "confirmation", "confirmation", "confirmation",
			"succeeded")...)
		if got["method"].(map[string]any)["tx_hash"] != again {
			t.Fatalf("payment paid again after the drop: %v", got)
		}
	})
}
