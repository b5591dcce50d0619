// Command payd is the payd service and its operator's tool: serve, migrate,
// business create, keys create|revoke, pause and resume, link disable,
// devnet pay|mine|reorg|advance against a running serve --dev, and openapi
// (prints the API's OpenAPI document).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(withStdin(ctx, os.Stdin), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// exitStatus reports err on stderr after "payd: ", and returns the exit
// status: 0 for none, 2 for a usage error, 1 otherwise.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "payd:", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// usageError is a mistake on the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `payd: self-hosted payment acceptance

Usage:
  payd serve [--dev] [--addr HOST:PORT] [--database DSN]
  payd migrate [--database DSN]
  payd business create --name NAME --email EMAIL [--live] [--wallet generate] [--json]
  payd business suspend|reinstate --business BIZ_ID [--json]
  payd users create --email EMAIL --name NAME [--password-stdin] [--business BIZ_ID [--role owner]] [--json]
  payd users add --email EMAIL --business BIZ_ID --role ROLE [--json]
  payd keys create --business BIZ_ID --permissions AREA:LEVEL,... [--test] [--json]
  payd keys revoke --business BIZ_ID --id KEY_ID
  payd pause checkouts|card|signups|network:NAME [--reason TEXT]
  payd resume checkouts|card|signups|network:NAME
  payd pause --list
  payd dev seed --payments N [--businesses B] [--seed S] [--now RFC3339] [--json]
  payd link disable --link LNK_ID [--reason TEXT] [--public-url URL | --addr ADDR] [--json]
  payd devnet pay --network N --asset A --to ADDRESS --amount X [--reference R] [--from F] [--url URL]
  payd devnet mine --network N [--count 1] [--url URL]
  payd devnet reorg --network N --depth D [--url URL]
  payd devnet advance --seconds S [--url URL]
  payd openapi [--dev]
  payd networks [--json]
  payd backup --to PATH [--database DSN]

DSN is sqlite:PATH (default sqlite:./payd.db), postgres://... or "host=... dbname=...".
Commands other than serve, migrate and dev seed need an existing database.
Every flag can also be set as a PAYD_* variable (see the README).
`

// groups are the commands whose first argument names a subcommand: their
// --help comes before any flag set exists.
var groups = map[string]bool{"users": true, "business": true, "keys": true, "dev": true, "link": true, "devnet": true}

// run is payd's whole program, callable from tests. A command's --help
// (or -h) prints its flags and succeeds.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := runCommand(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// runCommand runs the command args name.
func runCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("a command is required")
	}
	cmd, rest := args[0], args[1:]
	if groups[cmd] && len(rest) > 0 && (rest[0] == "-h" || rest[0] == "-help" || rest[0] == "--help") {
		fmt.Fprint(stdout, usage) // the synopsis of every subcommand of the group
		return nil
	}
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "business":
		return runBusiness(ctx, rest, getenv, stdout, stderr)
	case "keys":
		return runKeys(ctx, rest, getenv, stdout, stderr)
	case "pause", "resume":
		return runPause(ctx, cmd, rest, getenv, stdout, stderr)
	case "dev":
		return runDev(ctx, rest, getenv, stdout, stderr)
	case "link":
		return runLink(ctx, rest, getenv, stdout, stderr)
	case "devnet":
		return runDevnet(ctx, rest, getenv, stdout, stderr)
	case "openapi":
		return runOpenAPI(ctx, rest, getenv, stdout, stderr)
	case "networks":
		return runNetworks(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout, stderr)
	case "users":
		return runUsers(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usagef("unknown command %q", cmd)
}
