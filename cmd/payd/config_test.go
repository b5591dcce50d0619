package main

import (
	"flag"
	"testing"
	"time"

	"payd/money"
)

// TestConfirmationsFlag parses --confirmations and refuses what is not
// NETWORK=COUNT with a count of 1 to 1,000.
func TestConfirmationsFlag(t *testing.T) {
	c := Config{Confirmations: " bitcoin=3, polygon=64 ,"}
	got, err := c.confirmations()
	if err != nil || len(got) != 2 || got[money.Bitcoin] != 3 || got[money.Polygon] != 64 {
		t.Fatalf("confirmations = %v, %v", got, err)
	}
	for _, bad := range []string{"bitcoin", "bitcoin=0", "bitcoin=1001", "doge=3", "bitcoin=x", "=3"} {
		c := Config{Confirmations: bad}
		if _, err := c.confirmations(); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// TestChainFlags parses --chain (or PAYD_CHAINS), --token and --explorer,
// and refuses what payd cannot follow.
func TestChainFlags(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "PAYD_CHAINS" {
				return v
			}
			return ""
		}
	}
	var c Config
	got, err := c.chains(env("bitcoin=http://u:p@127.0.0.1:8332, ethereum=https://rpc.example/v2/KEY"))
	if err != nil || len(got) != 2 || got[0].network != money.Bitcoin || got[1].url != "https://rpc.example/v2/KEY" {
		t.Fatalf("chains from PAYD_CHAINS = %+v, %v", got, err)
	}
	c = Config{Chains: listFlag{"polygon=http://127.0.0.1:8545"}}
	if got, err := c.chains(env("bitcoin=http://x:1")); err != nil || len(got) != 1 || got[0].network != money.Polygon {
		t.Fatalf("--chain over PAYD_CHAINS = %+v, %v", got, err)
	}
	c = Config{Chains: listFlag{"tron=https://KEY@api.trongrid.io"}}
	if got, err := c.chains(env("")); err != nil || len(got) != 1 || got[0].network != money.Tron {
		t.Fatalf("--chain tron = %+v, %v", got, err)
	}
	c = Config{Chains: listFlag{"solana=https://rpc.example/?api-key=KEY"}}
	if got, err := c.chains(env("")); err != nil || len(got) != 1 || got[0].network != money.Solana {
		t.Fatalf("--chain solana = %+v, %v", got, err)
	}
	c = Config{Chains: listFlag{"ethereum=wss://u:p@rpc.example/v2/KEY", "polygon=ws://127.0.0.1:8546"}}
	if got, err := c.chains(env("")); err != nil || len(got) != 2 || got[0].url != "wss://u:p@rpc.example/v2/KEY" {
		t.Fatalf("--chain over websocket = %+v, %v", got, err)
	}
	for _, bad := range []string{"doge=http://x:1", "bitcoin=ftp://x", "bitcoin=ws://x:1", "ethereum=ftp://x:1",
		"ethereum=httpx://x:1", "bitcoin=", "bitcoin", "solana=ws://x:1",
		"tron=ws://x:1", "bitcoin=http://a:1,bitcoin=http://b:1"} {
		c := Config{}
		if err := c.Chains.Set(bad); err != nil {
			t.Fatal(err)
		}
		if _, err := c.chains(env("")); err == nil {
			t.Errorf("--chain %q was accepted", bad)
		}
	}
	c = Config{Tokens: listFlag{"ethereum:USDC=0xabc", "polygon:USDC=0xdef", "solana:USDT=Mint1"}}
	tokens, err := c.tokens()
	if err != nil || tokens[money.Ethereum][money.USDC] != "0xabc" || tokens[money.Polygon][money.USDC] != "0xdef" ||
		tokens[money.Solana][money.USDT] != "Mint1" {
		t.Fatalf("tokens = %v, %v", tokens, err)
	}
	for _, bad := range []string{"ethereum:ETH=0x1", "bitcoin:USDC=0x1", "ethereum:USDC=", "ethereum=0x1", "ethereum:DOGE=0x1", "polygon:USDT=0x1"} {
		c := Config{Tokens: listFlag{bad}}
		if _, err := c.tokens(); err == nil {
			t.Errorf("--token %q was accepted", bad)
		}
	}
	c = Config{Explorers: listFlag{"bitcoin=https://mempool.example/"}}
	if ex, err := c.explorers(); err != nil || ex[money.Bitcoin] != "https://mempool.example" {
		t.Fatalf("explorers = %v, %v", ex, err)
	}
	if _, err := (&Config{Explorers: listFlag{"bitcoin=javascript:alert(1)"}}).explorers(); err == nil {
		t.Error("a javascript: explorer was accepted")
	}
}

// TestNodeAddressHidesSecrets shows a node's URL without its credentials
// or the path and query where hosted providers put their keys.
func TestNodeAddressHidesSecrets(t *testing.T) {
	for raw, want := range map[string]string{
		"http://rpcuser:hunter2@127.0.0.1:8332":        "http://127.0.0.1:8332",
		"https://eth-mainnet.example.com/v2/SECRETKEY": "https://eth-mainnet.example.com",
		"https://rpc.example.com/?apikey=SECRET&x=1":   "https://rpc.example.com",
		"http://[::1]:8545":                            "http://[::1]:8545",
		"https://TRONGRIDKEY@api.trongrid.io":          "https://api.trongrid.io",
	} {
		if got := nodeAddress(raw); got != want {
			t.Errorf("nodeAddress(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzChainFlags feeds the parsers of --chain, --token and --explorer
// anything: they never panic, and what they accept names a network of
// the spec.
func FuzzChainFlags(f *testing.F) {
	for _, s := range []string{"bitcoin=http://u:p@127.0.0.1:8332", "ethereum:USDC=0xabc", "polygon=https://x/y",
		"=", ":=", "bitcoin=http://%zz", ",,,", "ethereum:usdc=0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Config{Chains: listFlag{s}, Tokens: listFlag{s}, Explorers: listFlag{s}}
		if got, err := c.chains(func(string) string { return "" }); err == nil {
			for _, spec := range got {
				if _, ok := money.ParseNetwork(string(spec.network)); !ok {
					t.Fatalf("accepted network %q", spec.network)
				}
			}
		}
		_, _ = c.tokens()
		_, _ = c.explorers()
		_ = nodeAddress(s)
	})
}

// TestConfigFollowInterval: without --follow-interval (or
// PAYD_FOLLOW_INTERVAL) a node's tip is read every second, and tron's
// every block, 3 s, to stay within TronGrid's daily quota; an interval
// given wins on every network.
func TestConfigFollowInterval(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want map[money.Network]time.Duration
	}{
		{nil, "", map[money.Network]time.Duration{money.Tron: 3 * time.Second, money.Bitcoin: time.Second,
			money.Polygon: time.Second}},
		{[]string{"--follow-interval", "100ms"}, "", map[money.Network]time.Duration{money.Tron: 100 * time.Millisecond,
			money.Ethereum: 100 * time.Millisecond}},
		{nil, "5s", map[money.Network]time.Duration{money.Tron: 5 * time.Second, money.Bitcoin: 5 * time.Second}},
	} {
		var cfg Config
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		cfg.addServeFlags(fs)
		getenv := func(k string) string {
			if k == "PAYD_FOLLOW_INTERVAL" {
				return c.env
			}
			return ""
		}
		if err := parse(fs, c.args, getenv); err != nil {
			t.Fatal(err)
		}
		for n, want := range c.want {
			if got := followInterval(n, cfg.FollowInterval); got != want {
				t.Errorf("%v, PAYD_FOLLOW_INTERVAL=%q: %s every %s, want %s", c.args, c.env, n, got, want)
			}
		}
	}
}
