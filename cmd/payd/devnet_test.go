package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"payd/hd"
	"payd/money"
)

const devnetTo = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"

// devnetCLI runs `payd devnet ARGS` with getenv and returns the decoded
// data of the answer.
func devnetCLI(t *testing.T, env map[string]string, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	if err := run(context.Background(), append([]string{"devnet"}, args...), getenv, &out, &errb); err != nil {
		t.Fatalf("payd devnet %v: %v\n%s", args, err, errb.String())
	}
	var v struct{ Data map[string]any }
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Data == nil {
		t.Fatalf("payd devnet %v printed %q", args, out.String())
	}
	return v.Data
}

// TestDevnetCommands drives a real payd serve --dev with the devnet
// commands on both databases, then restarts it and finds the chain as it
// was.
func TestDevnetCommands(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		url := map[string]string{}
		tx := devnetCLI(t, url, "pay", "--url", s.base, "--network", "bitcoin", "--asset", "BTC",
			"--to", devnetTo, "--amount", "0.00123")
		hash, _ := tx["tx_hash"].(string)
		if err := hd.ValidTxHash(money.Bitcoin, hash); err != nil || tx["status"] != "pending" || tx["amount"] != "0.00123000" {
			t.Fatalf("pay printed %v (%v)", tx, err)
		}
		// --addr, here from PAYD_ADDR, names the server as serve's --addr does.
		addr := map[string]string{"PAYD_ADDR": strings.TrimSuffix(strings.TrimPrefix(s.base, "http://"), "/api/v1")}
		if got := devnetCLI(t, addr, "mine", "--network", "bitcoin", "--count", "2"); got["height"] != 2.0 {
			t.Fatalf("mine printed %v", got)
		}
		if got := devnetCLI(t, url, "reorg", "--url", s.base, "--network", "bitcoin", "--depth", "1"); got["height"] != 1.0 {
			t.Fatalf("reorg printed %v", got)
		}
		if got := devnetCLI(t, url, "advance", "--url", s.base, "--seconds", "90"); got["kind"] != "devnet_clock" {
			t.Fatalf("advance printed %v", got)
		}
		s.stop(t)

		s = start(t, dsn)
		res := getJSON(t, s.base+"/devnet/transactions/bitcoin/"+hash)
		if res["confirmations"] != 1.0 || res["to"] != devnetTo {
			t.Fatalf("after a restart: %v", res)
		}
	})
}

// TestDevnetCommandErrors checks what a person sees when something is
// wrong.
func TestDevnetCommandErrors(t *testing.T) {
	s := start(t, "sqlite:"+t.TempDir()+"/payd.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pay", "--url", s.base, "--network", "bitcoin", "--asset", "BTC", "--to", devnetTo, "--amount", "0"}, "invalid_request (amount)"},
		{[]string{"mine", "--url", s.base, "--network", "dogecoin"}, "invalid_request (network)"},
		{[]string{"mine", "--url", s.base + "/nope", "--network", "bitcoin"}, "not_found"},
		{[]string{"fly"}, "unknown devnet command"},
		{[]string{}, "pay, mine, reorg or advance"},
		{[]string{"mine", "--count"}, "flag needs an argument"},
	} {
		err := run(context.Background(), append([]string{"devnet"}, c.args...), func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("payd devnet %v: %v, want %q", c.args, err, c.want)
		}
	}
}

// getJSON fetches url and returns its data object.
func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v struct{ Data map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return v.Data
}
