package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"payd/api"
	"payd/chain/devnet"
	"payd/clock"
	"payd/store"
)

// The wiring of `payd serve --dev`: the devnet's log is the database.
var (
	_ devnet.Log        = (*store.DB)(nil)
	_ api.DevnetControl = (*devnet.Devnet)(nil)
)

// openDevnet rebuilds the simulated networks from db's devnet log when dev
// is set, and returns nil otherwise. apiBase is where the devnet's
// explorer URLs point.
func openDevnet(ctx context.Context, dev bool, db *store.DB, clk clock.Clock, apiBase string) (*devnet.Devnet, error) {
	if !dev {
		return nil, nil
	}
	return devnet.New(ctx, db, clk, apiBase)
}

// devnetControl is d for api.Options, and a nil interface (not a nil
// pointer in one) without the devnet.
func devnetControl(d *devnet.Devnet) api.DevnetControl {
	if d == nil {
		return nil
	}
	return d
}

const devnetUsage = `Usage:
  payd devnet pay --network N --asset A --to ADDRESS --amount X [--reference R] [--from F]
  payd devnet mine --network N [--count 1]
  payd devnet reorg --network N --depth D
  payd devnet advance --seconds S
Each calls the devnet routes of a running payd serve --dev and prints the JSON answer.
--url is its API base URL (default http://ADDR/api/v1 from --addr or PAYD_ADDR).
`

// runDevnet drives the simulated networks of a running `payd serve --dev`
// through its HTTP routes, for people trying payd by hand.
func runDevnet(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, devnetUsage)
		return usagef("devnet needs pay, mine, reorg or advance")
	}
	sub, rest := args[0], args[1:]
	if sub == "help" || sub == "-h" || sub == "--help" {
		fmt.Fprint(stdout, devnetUsage)
		return nil
	}
	fs := flag.NewFlagSet("devnet "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address of the running payd serve --dev")
	base := fs.String("url", "", "API base URL (default http://ADDR/api/v1)")
	path, body, err := devnetRequest(sub, fs)
	if err != nil {
		fmt.Fprint(stderr, devnetUsage)
		return err
	}
	if err := parseDevnetFlags(fs, rest, getenv); err != nil {
		return err
	}
	if *base == "" {
		*base = "http://" + *addr + api.BasePath
	}
	return devnetPost(ctx, strings.TrimRight(*base, "/")+path, body(), stdout)
}

// devnetRequest defines sub's own flags on fs and returns its route and a
// function that builds the request body once the flags are parsed.
func devnetRequest(sub string, fs *flag.FlagSet) (string, func() map[string]any, error) {
	network := func() *string { return fs.String("network", "", "network: bitcoin, ethereum, polygon, solana, tron") }
	switch sub {
	case "pay":
		n, a := network(), fs.String("asset", "", "coin: USDC, USDT, BTC, ETH, SOL")
		to, amount := fs.String("to", "", "receiving address"), fs.String("amount", "", "amount in whole coins, e.g. 12.50")
		ref, from := fs.String("reference", "", "Solana Pay reference (solana only)"), fs.String("from", "", "sender's address")
		return "/devnet/transfers", func() map[string]any {
			return omitEmpty(map[string]any{"network": *n, "asset": *a, "to": *to, "amount": *amount, "reference": *ref, "from": *from})
		}, nil
	case "mine":
		n, count := network(), fs.Int("count", 1, "blocks to mine")
		return "/devnet/blocks", func() map[string]any { return map[string]any{"network": *n, "count": *count} }, nil
	case "reorg":
		n, depth := network(), fs.Int("depth", 1, "blocks to orphan")
		return "/devnet/reorg", func() map[string]any { return map[string]any{"network": *n, "depth": *depth} }, nil
	case "advance":
		s := fs.Int64("seconds", 0, "seconds to move the service clock forward")
		return "/devnet/clock", func() map[string]any { return map[string]any{"advance_seconds": *s} }, nil
	}
	return "", nil, usagef("unknown devnet command %q: use pay, mine, reorg or advance", sub)
}

// omitEmpty drops the string members left empty, so that the server sees
// an absent optional field rather than an empty one.
func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// parseDevnetFlags parses args. Only --addr and --url fall back to their
// PAYD_* variables: the others describe one payment, not the installation.
func parseDevnetFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, name := range []string{"addr", "url"} {
		env := "PAYD_" + strings.ToUpper(name)
		if v := getenv(env); v != "" && !given[name] {
			_ = fs.Set(name, v) // string flags take any value
		}
	}
	return nil
}

// devnetClient bounds a call: the devnet answers at once, so a long wait
// means a server that is not there.
var devnetClient = &http.Client{Timeout: 30 * time.Second}

// devnetPost sends body to url and prints the answer; an error status
// comes back as an error carrying the server's message.
func devnetPost(ctx context.Context, url string, body map[string]any, stdout io.Writer) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return usagef("--url: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := devnetClient.Do(req)
	if err != nil {
		return fmt.Errorf("is payd serve --dev running there? %w", err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if res.StatusCode >= 300 {
		return devnetError(res.StatusCode, answer)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", bytes.TrimSpace(answer))
	return err
}

// devnetError turns an error answer into an error that says what the
// server said.
func devnetError(status int, answer []byte) error {
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	if json.Unmarshal(answer, &e) != nil || e.Error.Code == "" {
		return fmt.Errorf("the server answered %d: %.200s", status, answer)
	}
	if status == http.StatusNotFound && e.Error.Field == "" {
		return fmt.Errorf("%s: %s (is the server running with --dev?)", e.Error.Code, e.Error.Message)
	}
	if e.Error.Field != "" {
		return fmt.Errorf("%s (%s): %s", e.Error.Code, e.Error.Field, e.Error.Message)
	}
	return fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)
}
