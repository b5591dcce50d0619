package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// chainSpec is one --chain: a network of the spec and its node's URL.
type chainSpec struct {
	network money.Network
	url     string
}

// chains parses --chain (or PAYD_CHAINS) into one node per network.
func (c *Config) chains(getenv func(string) string) ([]chainSpec, error) {
	if len(c.Chains) == 0 {
		if err := c.Chains.Set(getenv("PAYD_CHAINS")); err != nil {
			return nil, err
		}
	}
	var out []chainSpec
	seen := map[money.Network]bool{}
	for _, s := range c.Chains {
		name, raw, _ := strings.Cut(s, "=")
		n, ok := money.ParseNetwork(name)
		if !ok {
			return nil, usagef("--chain %q: the network must be one of bitcoin, ethereum, polygon, solana, tron", name)
		}
		if err := checkNodeURL(n, raw); err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, usagef("--chain %s is given twice: payd follows one node per network", n)
		}
		seen[n] = true
		out = append(out, chainSpec{network: n, url: raw})
	}
	return out, nil
}

// checkNodeURL checks the scheme and host of a --chain URL: http(s), or
// ws(s) for an EVM node (CONTRACT.md), which chain/evm reaches over one
// websocket connection. The message never repeats the URL.
func checkNodeURL(n money.Network, raw string) error {
	evm := n == money.Ethereum || n == money.Polygon
	u, err := url.Parse(raw)
	if err == nil && u.Host != "" {
		switch u.Scheme {
		case "http", "https":
			return nil
		case "ws", "wss":
			if evm {
				return nil
			}
		}
	}
	if evm {
		return usagef("--chain %s: the node's URL must be http(s)://[USER:PASS@]HOST:PORT[/PATH] or ws(s)://…", n)
	}
	return usagef("--chain %s: the node's URL must be http(s)://[USER:PASS@]HOST:PORT[/PATH]", n)
}

// tokens parses --token NETWORK:ASSET=CONTRACT.
func (c *Config) tokens() (map[money.Network]map[money.Asset]string, error) {
	out := map[money.Network]map[money.Asset]string{}
	for _, s := range c.Tokens {
		left, contract, _ := strings.Cut(s, "=")
		name, asset, _ := strings.Cut(left, ":")
		n, ok := money.ParseNetwork(name)
		a, aok := money.ParseAsset(asset)
		if !ok || !aok || contract == "" || !money.Supports(a, n) || n.Native() == a {
			return nil, usagef("--token %q: use NETWORK:ASSET=CONTRACT for a token that moves on the network (USDC, USDT)", s)
		}
		if out[n] == nil {
			out[n] = map[money.Asset]string{}
		}
		out[n][a] = contract
	}
	return out, nil
}

// explorers parses --explorer NETWORK=URL.
func (c *Config) explorers() (map[money.Network]string, error) {
	out := map[money.Network]string{}
	for _, s := range c.Explorers {
		name, raw, _ := strings.Cut(s, "=")
		n, ok := money.ParseNetwork(name)
		u, err := url.Parse(raw)
		if !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("--explorer %q: use NETWORK=URL with an http(s) URL", s)
		}
		out[n] = strings.TrimRight(raw, "/")
	}
	return out, nil
}

// nodeAddress is where a node's URL points, for logs: scheme and host
// only. Credentials live in the user part and hosted providers put their
// keys in the path or query, so neither is ever shown.
func nodeAddress(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

// runNetworks prints how each followed network's node was last found, as
// the following replica stored it: chain, tip, the last processed block,
// the lag, when it was read and its last error.
func runNetworks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("networks", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	all, err := db.ChainStatuses(ctx)
	if err != nil {
		return err
	}
	return printNetworks(stdout, all, clock.Real{}.Now(), *asJSON)
}

// networkStatus is one network in payd networks --json.
type networkStatus struct {
	Network      string     `json:"network"`
	Chain        string     `json:"chain"`
	TipHeight    int64      `json:"tip_height"`
	TipHash      string     `json:"tip_hash"`
	Height       int64      `json:"height"`
	Hash         string     `json:"hash"`
	Lag          int64      `json:"lag"`
	CheckedAt    time.Time  `json:"checked_at"`
	Error        string     `json:"error"`
	FailingSince *time.Time `json:"failing_since"`
}

func printNetworks(w io.Writer, all []payd.ChainStatus, now time.Time, asJSON bool) error {
	if asJSON {
		out := make([]networkStatus, len(all))
		for i, s := range all {
			out[i] = networkStatus{Network: string(s.Network), Chain: s.Chain, TipHeight: s.Tip.Height, TipHash: s.Tip.Hash,
				Height: s.Head.Height, Hash: s.Head.Hash, Lag: s.Lag(), CheckedAt: s.CheckedAt, Error: s.Error,
				FailingSince: s.FailingSince}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"data": out})
	}
	if len(all) == 0 {
		_, err := fmt.Fprintln(w, "no network has been followed: payd serve follows the nodes named by --chain")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NETWORK\tCHAIN\tTIP\tPROCESSED\tLAG\tREAD\tERROR")
	for _, s := range all {
		errText := s.Error
		if s.FailingSince != nil {
			errText = fmt.Sprintf("failing for %s: %s", now.Sub(*s.FailingSince).Round(time.Second), s.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s ago\t%s\n", s.Network, s.Chain, s.Tip.Height, s.Head.Height, s.Lag(),
			now.Sub(s.CheckedAt).Round(time.Second), errText)
	}
	return tw.Flush()
}
