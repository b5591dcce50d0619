package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"iter"
	"maps"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/chain/solana"
	"payd/chain/solana/solanatest"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/store/storetest"
)

// solRates is a pricer with a SOL price.
type solRates struct{}

func (solRates) Latest(context.Context) (*payd.ExchangeRates, error) {
	return &payd.ExchangeRates{Coins: map[money.Asset]int64{money.SOL: 15_000}}, nil
}

// keySet is a payd.Watched of DepositKeys.
type keySet map[string]bool

func (k keySet) Has(s string) bool      { return k[s] }
func (k keySet) Keys() iter.Seq[string] { return maps.Keys(k) }

// TestOpenSolana opens --chain solana=URL with a --token mint on devnet.
func TestOpenSolana(t *testing.T) {
	c := solanatest.New(t)
	c.SetGenesis(solanatest.Devnet)
	mint := solanatest.Key("devnet usdc")
	c.SetMint(mint, 6)
	cfg := &Config{Chains: listFlag{"solana=" + c.URL()}, Tokens: listFlag{"solana:USDC=" + mint}, NodeWait: time.Second}
	nodes, err := openNodes(context.Background(), cfg, func(string) string { return "" }, solRates{}, clock.Real{},
		storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	n, ok := nodes[money.Solana].(*solana.Node)
	if !ok || n.Chain() != "devnet" {
		t.Fatalf("nodes = %v", nodes)
	}
	if m, ok := n.Mint(money.USDC); !ok || m != mint {
		t.Errorf("USDC mint = %q", m)
	}
}

// TestLazySolanaScans: a solana node that did not answer at start is
// still a payd.Scanner, so the follower scans it once it answers.
func TestLazySolanaScans(t *testing.T) {
	ctx := context.Background()
	c := solanatest.New(t)
	c.Throttle(1_000_000, "0")
	cfg := &Config{Chains: listFlag{"solana=" + c.URL()}, NodeWait: time.Millisecond}
	nodes, err := openNodes(ctx, cfg, func(string) string { return "" }, solRates{}, clock.Real{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := nodes[money.Solana].(payd.Scanner)
	if !ok {
		t.Fatalf("the lazy solana node %T is not a Scanner", nodes[money.Solana])
	}
	if sc.FinalDepth() != 32 || len(sc.Assets()) != 0 {
		t.Errorf("before it answers: depth %d, assets %v", sc.FinalDepth(), sc.Assets())
	}
	if _, _, err := sc.Scan(ctx, payd.BlockRef{}, payd.BlockRef{}, keySet{}, nil); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("Scan before the node answers: %v", err)
	}

	c.Throttle(0, "")
	tip, err := sc.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := hd.NewReference(rand.Reader)
	ref, _ := hd.NewReference(rand.Reader)
	key, ok := sc.DepositKey(payd.Deposit{Address: owner, Reference: ref})
	if !ok {
		t.Fatal("DepositKey refused once connected")
	}
	sig := c.Transfer(solanatest.Key("payer"), owner, solanatest.USDC, 5_000_000, ref)
	_, p, err := sc.Scan(ctx, tip, tip, keySet{key: true}, nil)
	if err != nil || len(p.Transfers) != 1 || p.Transfers[0].TxHash != sig {
		t.Fatalf("Scan once connected = %+v, %v", p, err)
	}
}

// TestServeFollowsSolana runs payd serve without --dev on solanatest's
// mainnet with static rates: a business made with a generated wallet
// opens USDC and SOL checkouts whose deposits are the wallet's address
// with a fresh reference each, and Solana Pay URIs that carry it; each
// payment is detected while confirmed and succeeds once finalized, with
// its signature and explorer page.
func TestServeFollowsSolana(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		c := solanatest.New(t)
		cli(t, dsn, "migrate")
		var biz newBusiness
		out := cli(t, dsn, "business", "create", "--name", "Shop", "--email", "o@shop.example", "--wallet", "generate", "--json")
		if err := json.Unmarshal(out, &biz); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		s := startServe(t, dsn, "--chain", "solana="+c.URL(), "--rates", "static", "--follow-interval", "100ms")
		api := apiClient{t: t, base: s.base, key: biz.SecretKey}
		type checkout struct {
			payID, address, reference string
			units                     int64
		}
		open := func(asset money.Asset) checkout {
			t.Helper()
			pay := api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
			chk := api.call(201, "POST", "/checkouts", map[string]any{"payment_id": pay["id"], "rail": "crypto",
				"asset": string(asset), "network": "solana"})
			crypto := chk["crypto"].(map[string]any)
			ref, _ := crypto["reference"].(string)
			amount, err := money.ParseCoinAmount(asset, crypto["amount"].(string))
			if err != nil || ref == "" {
				t.Fatalf("a solana checkout: %v (%v)", crypto, err)
			}
			uri := crypto["payment_uri"].(string)
			if !strings.HasPrefix(uri, "solana:"+crypto["address"].(string)+"?") || !strings.Contains(uri, "reference="+ref) {
				t.Fatalf("payment URI %s", uri)
			}
			return checkout{pay["id"].(string), crypto["address"].(string), ref, amount.Units.Int64()}
		}
		usdc, sol := open(money.USDC), open(money.SOL)
		if usdc.address != sol.address || usdc.reference == sol.reference {
			t.Fatalf("deposits %+v %+v: one wallet address, a reference each", usdc, sol)
		}
		payer := solanatest.Key("customer")
		usdcSig := c.Transfer(payer, usdc.address, solanatest.USDC, usdc.units, usdc.reference)
		c.Transfer(payer, sol.address, "", sol.units, sol.reference)
		api.waitEvents(usdc.payID, "created", "method_selected", "detected")
		api.waitEvents(sol.payID, "created", "method_selected", "detected")
		c.Advance(solanatest.Lag)
		for _, id := range []string{usdc.payID, sol.payID} {
			var p map[string]any
			for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
				if p = api.call(200, "GET", "/payments/"+id, nil); p["status"] == "succeeded" {
					break
				}
				<-clockAfter(50 * time.Millisecond)
			}
			if p["status"] != "succeeded" {
				t.Fatalf("payment %s after finality: %v", id, p)
			}
		}
		method := api.call(200, "GET", "/payments/"+usdc.payID, nil)["method"].(map[string]any)
		if method["tx_hash"] != usdcSig || method["explorer_url"] != "https://explorer.solana.com/tx/"+usdcSig {
			t.Errorf("the USDC payment's method: %v", method)
		}
	})
}
