package solana_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"payd/chain/solana/solanatest"
)

// extraKeys are the keys a node sends that the documentation's examples
// leave out (testdata/NOTE.md), by the path they appear at.
var extraKeys = map[string]bool{
	"result.context.apiVersion":                           true,
	"result.version":                                      true,
	"result.meta.loadedAddresses":                         true,
	"result.meta.logMessages":                             true,
	"result.meta.computeUnitsConsumed":                    true,
	"result.transaction.message.instructions.stackHeight": true,
	"result.transaction.message.addressTableLookups":      true,
}

// sameShape reports where got and want differ in keys: every key of want
// must be in got, and every key of got in want or extraKeys. Arrays are
// compared by their first elements; a null on either side matches
// anything (an optional object).
func sameShape(path string, got, want any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			if got == nil {
				return nil
			}
			return []string{path + ": not an object"}
		}
		var out []string
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"."+k+": missing")
				continue
			}
			out = append(out, sameShape(path+"."+k, gv, v)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok && !extraKeys[(path + "." + k)[1:]] {
				out = append(out, path+"."+k+": not in the documented answer")
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{path + ": not an array"}
		}
		if len(w) == 0 || len(g) == 0 {
			return nil
		}
		return sameShape(path, g[0], w[0])
	}
	return nil
}

// post sends one JSON-RPC request to url and decodes the answer.
func post(t *testing.T, url, method string, params ...any) any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fixture(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestAnswersShapedAsDocumented compares solanatest's answer to each
// method with the documentation's example (testdata/NOTE.md).
func TestAnswersShapedAsDocumented(t *testing.T) {
	c := solanatest.New(t)
	owner, payer, r := solanatest.Key("owner"), solanatest.Key("payer"), solanatest.Key("ref")
	sig := c.Transfer(payer, owner, solanatest.USDC, 25_000_000, r)
	sol := c.Transfer(payer, owner, "", 1_000, r)
	lookup := c.Send(solanatest.Payment{From: payer, To: owner, Amount: 5, Reference: r, Lookup: true})
	c.Advance(40)
	confirmed := map[string]any{"commitment": "confirmed", "encoding": "json", "maxSupportedTransactionVersion": 0}
	for _, tc := range []struct {
		fixture, method string
		params          []any
	}{
		{"getGenesisHash.json", "getGenesisHash", nil},
		{"getSlot.json", "getSlot", []any{map[string]any{"commitment": "finalized"}}},
		{"getTokenSupply.json", "getTokenSupply", []any{solanatest.USDC}},
		{"getTokenSupply-error.json", "getTokenSupply", []any{owner}},
		{"getRecentPrioritizationFees.json", "getRecentPrioritizationFees", nil},
		{"getSignaturesForAddress.json", "getSignaturesForAddress", []any{owner, map[string]any{"limit": 10}}},
		{"getSignatureStatuses.json", "getSignatureStatuses", []any{[]string{sig, "unknown"},
			map[string]any{"searchTransactionHistory": true}}},
		{"getTransaction.json", "getTransaction", []any{sol, confirmed}},
		{"getTransaction.json", "getTransaction", []any{sig, confirmed}},
		{"getTransaction.json", "getTransaction", []any{lookup, confirmed}},
	} {
		got := post(t, c.URL(), tc.method, tc.params...)
		for _, diff := range sameShape("", got, fixture(t, tc.fixture)) {
			t.Errorf("%s %v: %s", tc.method, tc.params[:min(len(tc.params), 1)], diff)
		}
	}
	tx := post(t, c.URL(), "getTransaction", sig, confirmed).(map[string]any)
	meta := tx["result"].(map[string]any)["meta"].(map[string]any)
	for _, k := range []string{"preTokenBalances", "postTokenBalances"} {
		bs := meta[k].([]any)
		if len(bs) != 2 {
			t.Fatalf("%s = %v", k, bs)
		}
		for _, diff := range sameShape("", bs[0], fixture(t, "tokenBalance.json")) {
			t.Errorf("%s: %s", k, diff)
		}
	}
	statuses := post(t, c.URL(), "getSignatureStatuses", []string{sig, "unknown"})
	if v := statuses.(map[string]any)["result"].(map[string]any)["value"].([]any); v[1] != nil {
		t.Errorf("an unknown signature's status = %v, want null", v[1])
	}
	keys := tx["result"].(map[string]any)["transaction"].(map[string]any)["message"].(map[string]any)["accountKeys"]
	if !slices.Contains(keys.([]any), any(r)) {
		t.Errorf("the reference is not among the account keys: %v", keys)
	}
}
