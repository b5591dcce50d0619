package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd/clock"
	"payd/money"
)

// TestServeFollowsBitcoinRegtest runs payd serve without --dev on a real
// bitcoin node (btcd in regtest) with static rates: a business made with
// a generated wallet takes a BTC payment, detected from the mempool,
// confirmed block by block and succeeded; networks without a node are not
// offered; payd networks shows the node.
func TestServeFollowsBitcoinRegtest(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		b := startBTCServe(t, dsn)
		node, api := b.node, b.api
		pay := api.call(201, "POST", "/payments", map[string]any{"amount": 2500, "currency": "USD"})
		payID := pay["id"].(string)
		api.call(400, "POST", "/checkouts", map[string]any{"payment_id": payID, "rail": "crypto", "asset": "USDC",
			"network": "polygon"})
		chk := api.call(201, "POST", "/checkouts", map[string]any{"payment_id": payID, "rail": "crypto", "asset": "BTC",
			"network": "bitcoin"})
		crypto := chk["crypto"].(map[string]any)
		addr := crypto["address"].(string)
		if !strings.HasPrefix(addr, "bcrt1q") || !strings.HasPrefix(crypto["payment_uri"].(string), "bitcoin:"+addr) {
			t.Fatalf("deposit on regtest: %v", crypto)
		}
		amount, err := money.ParseCoinAmount(money.BTC, crypto["amount"].(string))
		if err != nil {
			t.Fatal(err)
		}
		txid := node.Send(addr, amount.Units.Int64())
		api.waitEvents(payID, "created", "method_selected", "detected")
		node.Mine(1)
		api.waitEvents(payID, "created", "method_selected", "detected", "confirmation")
		node.Mine(1)
		got := api.waitEvents(payID, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded")
		method := got["method"].(map[string]any)
		if got["status"] != "succeeded" || method["tx_hash"] != txid || method["amount"] != crypto["amount"] {
			t.Fatalf("payment after two blocks: %v", got)
		}

		var status struct {
			Data []networkStatus `json:"data"`
		}
		if err := json.Unmarshal(cli(t, dsn, "networks", "--json"), &status); err != nil {
			t.Fatal(err)
		}
		tip, _ := node.Tip()
		if len(status.Data) != 1 || status.Data[0].Chain != "regtest" || status.Data[0].Height != tip || status.Data[0].Error != "" {
			t.Fatalf("payd networks: %+v (tip %d)", status.Data, tip)
		}
	})
}

// apiClient calls the API as one business.
type apiClient struct {
	t         *testing.T
	base, key string
	// forwarded, when true, sends each request from another client address
	// (X-Forwarded-For; the server trusts loopback as a proxy), so that
	// many checkouts stay within the per-IP limit of POST /checkouts.
	forwarded bool
}

// apiRequests numbers the requests of every apiClient: idempotency keys
// and forwarded addresses.
var apiRequests atomic.Int64

// try sends a request and returns the status and the raw answer, without
// judging them. Each POST has a fresh Idempotency-Key.
func (c apiClient) try(method, path string, body any) (int, string) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	if c.key != "" { // the customer's requests of the hosted pages carry none
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Content-Type", "application/json")
	n := apiRequests.Add(1)
	if method == "POST" {
		req.Header.Set("Idempotency-Key", fmt.Sprintf("k-%d-%d", clock.Real{}.Now().UnixNano(), n))
	}
	if c.forwarded {
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// call sends a request and returns the answer's data, failing the test
// unless the status is want.
func (c apiClient) call(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	code, raw := c.try(method, path, body)
	if code != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, code, raw, want)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		c.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return env.Data
}

// errorCode sends a request that must fail with status want and returns
// the error's code.
func (c apiClient) errorCode(want int, method, path string, body any) string {
	c.t.Helper()
	code, raw := c.try(method, path, body)
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil || code != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, code, raw, want)
	}
	return env.Error.Code
}

// waitEvents waits up to 20 s for the payment's history to be exactly want.
func (c apiClient) waitEvents(id string, want ...string) map[string]any {
	c.t.Helper()
	var types []string
	for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
		p := c.call(200, "GET", "/payments/"+id, nil)
		types = types[:0]
		for _, e := range p["events"].([]any) {
			types = append(types, e.(map[string]any)["type"].(string))
		}
		if slices.Equal(types, want) {
			return p
		}
		<-clockAfter(50 * time.Millisecond)
	}
	c.t.Fatalf("payment %s events %v, want %v", id, types, want)
	return nil
}
