package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"payd"
	"payd/clock"
	"payd/money"
)

// runPause pauses or resumes something for every replica (it is stored in
// the database), or lists what is paused.
func runPause(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// The name comes first (payd pause checkouts --reason …); the flag
	// package stops at the first argument that is not a flag.
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var cfg Config
	fs := cfg.newFlagSet(cmd, stderr)
	// Only pause takes a reason or lists: resume's --help shows neither.
	reason, list := new(string), new(bool)
	if cmd == "pause" {
		fs.StringVar(reason, "reason", "", "why, for the log and for other operators")
		fs.BoolVar(list, "list", false, "list what is paused")
	}
	if err := parseArgs(fs, args, getenv); err != nil {
		return err
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if !*list && name == "" {
		return usagef("usage: payd %s checkouts|card|signups|network:NAME", cmd)
	}
	var nets []string
	for _, n := range money.Networks {
		nets = append(nets, string(n))
	}
	if !*list && !payd.ValidPauseName(name, nets) {
		return usagef("%q cannot be paused: use checkouts, card, signups or network:{%s}", name, strings.Join(nets, ","))
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	switch {
	case *list:
		ps, err := db.Pauses(ctx)
		if err == nil && len(ps) == 0 {
			fmt.Fprintln(stdout, "nothing is paused")
		}
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s\tsince %s\t%s\n", p.Name, p.PausedAt.Format("2006-01-02 15:04:05Z"), p.Reason)
		}
		return err
	case cmd == "pause":
		err = db.SetPause(ctx, payd.Pause{Name: name, Reason: *reason, PausedAt: clock.Real{}.Now()})
	default:
		err = db.DeletePause(ctx, name)
	}
	if err == nil {
		fmt.Fprintf(stdout, "%sd %s\n", cmd, name)
	}
	return err
}
