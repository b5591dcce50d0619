package api

import (
	"testing"

	"payd"
	"payd/chain/devnet"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// Receive addresses of the "abandon … about" wallet (docs/wallets.md).
const (
	devnetBTC = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	devnetEVM = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
)

func postDevnet(path string, body map[string]any) request {
	return request{method: "POST", path: path, body: jsonBody(body)}
}

func getDevnetTx(network, hash string) request {
	return request{method: "GET", path: "/devnet/transactions/" + network + "/" + hash}
}

// TestDevnetRoutes follows a payment through the devnet routes on both
// databases: a transfer into the mempool, blocks, a reorg, the explorer
// page, and what the chain watcher's payd.Network reads meanwhile.
func TestDevnetRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		tx := c.data(postDevnet("/devnet/transfers", map[string]any{"network": "polygon", "asset": "USDC",
			"to": devnetEVM, "amount": "12.5"}), 201)
		hash, _ := tx["tx_hash"].(string)
		wantFields(t, tx, map[string]any{"kind": "devnet_transaction", "network": "polygon", "asset": "USDC",
			"amount": "12.50", "to": devnetEVM, "reference": nil, "status": "pending", "confirmations": 0})
		dn := b.srv.opts.Devnet.(*devnet.Devnet)
		if err := dn.Network(money.Polygon).ValidTxHash(hash); err != nil {
			t.Fatalf("tx_hash %q: %v", hash, err)
		}

		got := c.data(postDevnet("/devnet/blocks", map[string]any{"network": "polygon", "count": 3}), 201)
		wantFields(t, got, map[string]any{"kind": "devnet_chain", "network": "polygon", "height": 3})
		got = c.data(postDevnet("/devnet/blocks", map[string]any{"network": "polygon"}), 201)
		wantFields(t, got, map[string]any{"height": 4})
		wantFields(t, c.data(getDevnetTx("polygon", hash), 200), map[string]any{"status": "mined", "confirmations": 4})

		seen, err := dn.Network(money.Polygon).Transfers(t.Context(), []payd.Deposit{{Address: devnetEVM}})
		if err != nil || len(seen) != 1 || seen[0].TxHash != hash || seen[0].Confirmations != 4 {
			t.Fatalf("Transfers = %+v, %v", seen, err)
		}

		got = c.data(postDevnet("/devnet/reorg", map[string]any{"network": "polygon", "depth": 4}), 200)
		wantFields(t, got, map[string]any{"kind": "devnet_chain", "network": "polygon", "height": 0})
		wantFields(t, c.data(getDevnetTx("polygon", hash), 200), map[string]any{"status": "pending", "confirmations": 0})
		if u := dn.Network(money.Polygon).ExplorerURL(hash); u != "http://payd.test/api/v1/devnet/transactions/polygon/"+hash {
			t.Fatalf("ExplorerURL = %s", u)
		}

		// A restart on the same database finds the same chain.
		again := clTest{t, setup(t, db)}
		wantFields(t, again.data(getDevnetTx("polygon", hash), 200), map[string]any{"amount": "12.50", "confirmations": 0})
	})
}

// TestDevnetSolana pays a Solana Pay reference.
func TestDevnetSolana(t *testing.T) {
	b := setup(t, storetest.OpenSQLite(t))
	c := clTest{t, b}
	ref := "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" // any 32-byte key
	tx := c.data(postDevnet("/devnet/transfers", map[string]any{"network": "solana", "asset": "SOL",
		"to": abandonSolana, "amount": "0.25", "reference": ref, "from": abandonSolana}), 201)
	wantFields(t, tx, map[string]any{"reference": ref, "from": abandonSolana, "amount": "0.2500"})
}

// TestDevnetRefusals checks that bad input names its field.
func TestDevnetRefusals(t *testing.T) {
	b := setup(t, storetest.OpenSQLite(t))
	c := clTest{t, b}
	ok := map[string]any{"network": "bitcoin", "asset": "BTC", "to": devnetBTC, "amount": "0.001"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range ok {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{with("network", "bitcoin-testnet"), "network"},
		{with("asset", "USDC"), "asset"},
		{with("to", devnetEVM), "to"},
		{with("to", nil), "to"},
		{with("amount", 0.001), "amount"},
		{with("amount", "0"), "amount"},
		{with("amount", nil), "amount"},
		{with("from", "1"), "from"},
		{with("reference", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"), "reference"},
		{with("memo", "hi"), "memo"},
	} {
		c.call(postDevnet("/devnet/transfers", bad.body), 400, "invalid_request", bad.field)
	}
	for _, bad := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/devnet/blocks", map[string]any{"network": "bitcoin", "count": 0}, "count"},
		{"/devnet/blocks", map[string]any{"network": "bitcoin", "count": 1001}, "count"},
		{"/devnet/blocks", map[string]any{"count": 1}, "network"},
		{"/devnet/reorg", map[string]any{"network": "bitcoin", "depth": 1}, "depth"},
		{"/devnet/reorg", map[string]any{"network": "bitcoin"}, "depth"},
	} {
		c.call(postDevnet(bad.path, bad.body), 400, "invalid_request", bad.field)
	}
	c.call(getDevnetTx("bitcoin", "00"), 404, "not_found")
	c.call(getDevnetTx("dogecoin", "00"), 404, "not_found")
}

// TestDevnetMissing answers temporarily_unavailable when the server was
// given no devnet.
func TestDevnetMissing(t *testing.T) {
	b := setup(t, storetest.OpenSQLite(t))
	b.srv.opts.Devnet = nil
	clTest{t, b}.call(postDevnet("/devnet/blocks", map[string]any{"network": "bitcoin"}), 503, "temporarily_unavailable")
}
