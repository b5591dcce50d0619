package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"payd/money"
	"payd/store"
)

// Config is payd's one configuration. Each field is a flag; a flag not given
// on the command line takes its PAYD_* variable (--log-level reads
// PAYD_LOG_LEVEL), then its default.
type Config struct {
	Addr string
	// OpsAddr is where the operator's listener serves metrics and the
	// profiler (--ops-addr); "" serves none.
	OpsAddr   string
	Database  string
	Dev       bool
	PublicURL string
	WalletURL string
	LogLevel  string
	LogFormat string
	// TrustedProxies is a comma-separated list of CIDRs whose
	// X-Forwarded-For is believed for per-IP limits.
	TrustedProxies  string
	RateRefresh     time.Duration
	RateMaxAge      time.Duration
	ShutdownTimeout time.Duration
	// Confirmations overrides payd.DefaultConfirmations, as
	// "bitcoin=2,ethereum=12".
	Confirmations string
	// Chains point networks at real nodes: NETWORK=URL each (--chain,
	// repeatable; PAYD_CHAINS, comma separated).
	Chains listFlag
	// Tokens set token contracts: NETWORK:ASSET=CONTRACT each.
	Tokens listFlag
	// Explorers set explorer base URLs: NETWORK=URL each.
	Explorers listFlag
	// Rates is live (the public sources) or static (the --dev table).
	Rates string
	// FollowInterval is how often each followed node's tip is read; 0
	// for each network's own (followInterval).
	FollowInterval time.Duration
	// DropAfter is how long a waiting transaction may be unknown to its
	// node before payd takes it as replaced or double-spent.
	DropAfter time.Duration
	// NodeWait is how long serve waits at start for each --chain node
	// before it starts without it (its network offered once it answers).
	NodeWait time.Duration
	// SMTP is the mail server, smtp://USER:PASS@HOST:PORT or smtps://…
	// (docs/email.md); MailFrom the address payd's emails come from.
	SMTP     string
	MailFrom string
	// Challenge is the bot check of sign-up, sign-in and reset
	// (docs/bot-check.md); Pwned the Pwned Passwords range API's base URL,
	// empty for no breach check (docs/passwords.md).
	Challenge string
	// ChallengeSiteKey is the public site key of the Turnstile or
	// hCaptcha widget the dashboard's forms show (docs/bot-check.md).
	ChallengeSiteKey string
	Pwned            string
	// Card is the card provider (docs/card.md): sandbox, stripe or none; the
	// default is sandbox with --dev, none otherwise.
	Card string
	// StripeSecretKey and StripeWebhookSecret configure --card stripe:
	// Stripe's secret key and the signing secret of the webhook endpoint
	// registered at {public}/api/v1/card-providers/stripe/webhook.
	StripeSecretKey     string
	StripeWebhookSecret string
}

// listFlag is a repeatable flag; one value may also list several, comma
// separated (as a PAYD_* variable does).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// newFlagSet defines the Config flags every command shares.
func (c *Config) newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Database, "database", "sqlite:./payd.db", "database: sqlite:PATH, postgres://... or 'host=... dbname=...'")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	return fs
}

// defaultAddr is where payd serve listens unless told otherwise.
const defaultAddr = "127.0.0.1:8080"

// addServeFlags defines the flags only `serve` uses.
func (c *Config) addServeFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", defaultAddr, "address to listen on")
	fs.StringVar(&c.OpsAddr, "ops-addr", "", "HOST:PORT of the operator's listener: Prometheus /metrics and /debug/pprof/ (docs/operations.md)")
	fs.BoolVar(&c.Dev, "dev", false, "development mode: devnet, static rates, test clock")
	fs.StringVar(&c.PublicURL, "public-url", "", "public base URL of this server (default http://ADDR)")
	fs.StringVar(&c.WalletURL, "wallet-url", "", "wallet base URL (default PUBLIC_URL/wallet/v1)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is trusted")
	fs.DurationVar(&c.RateRefresh, "rate-refresh", time.Minute, "how often exchange rates are fetched")
	fs.DurationVar(&c.RateMaxAge, "rate-max-age", 10*time.Minute, "oldest exchange rate a checkout may quote")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for in-flight requests")
	fs.StringVar(&c.Confirmations, "confirmations", "", "confirmations a transfer needs, per network: bitcoin=2,ethereum=12,... (defaults in docs/checkouts.md)")
	fs.Var(&c.Chains, "chain", "NETWORK=URL: follow a real node for the network (repeatable; PAYD_CHAINS comma separated; docs/networks.md)")
	fs.Var(&c.Tokens, "token", "NETWORK:ASSET=CONTRACT: a token's contract (repeatable; default the main chain's)")
	fs.Var(&c.Explorers, "explorer", "NETWORK=URL: the explorer base URL of a network's transaction pages (repeatable)")
	fs.StringVar(&c.Rates, "rates", "live", "exchange rates: live (public sources) or static (the --dev table, for isolated test set-ups)")
	fs.DurationVar(&c.FollowInterval, "follow-interval", 0, "how often each followed node's tip is read (default 1s, 3s on tron: a block every 3 s, and TronGrid's daily quota)")
	fs.DurationVar(&c.NodeWait, "node-wait", 10*time.Second, "how long serve waits at start for each --chain node before it starts without it")
	fs.StringVar(&c.SMTP, "smtp", "", "mail server: smtp://USER:PASS@HOST:PORT (STARTTLS when offered) or smtps://… (docs/email.md); with --dev emails are kept instead")
	fs.StringVar(&c.MailFrom, "mail-from", "", "the address payd's emails come from, such as 'payd <no-reply@example.com>'")
	fs.StringVar(&c.Challenge, "challenge", "", "bot check of sign-up, sign-in and reset: turnstile:SECRET, hcaptcha:SECRET or none (default: dev tokens with --dev, none otherwise; docs/bot-check.md)")
	fs.StringVar(&c.ChallengeSiteKey, "challenge-site-key", "", "the site key of the --challenge provider's widget, shown on the dashboard's sign-up, sign-in and reset pages (docs/bot-check.md)")
	fs.StringVar(&c.Pwned, "pwned", "", "check new passwords against Have I Been Pwned's range API at this base URL, such as https://api.pwnedpasswords.com (off by default; docs/passwords.md)")
	fs.StringVar(&c.Card, "card", "", "card provider: sandbox (payd's own test cards; needs --dev), stripe (Stripe's crypto onramp; needs --stripe-secret-key and --stripe-webhook-secret) or none (default: sandbox with --dev, none otherwise; docs/card.md)")
	fs.StringVar(&c.StripeSecretKey, "stripe-secret-key", "", "Stripe secret key for --card stripe (sk_live_… or sk_test_…); never printed")
	fs.StringVar(&c.StripeWebhookSecret, "stripe-webhook-secret", "", "signing secret (whsec_…) of the Stripe webhook endpoint at PUBLIC_URL/api/v1/card-providers/stripe/webhook; never printed")
	fs.DurationVar(&c.DropAfter, "drop-after", 10*time.Minute, "how long a waiting transaction may be unknown to its node before it counts as replaced or double-spent")
}

// confirmations parses --confirmations into per-network counts of 1 to 1,000.
func (c *Config) confirmations() (map[money.Network]int, error) {
	out := map[money.Network]int{}
	for _, pair := range strings.Split(c.Confirmations, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		name, count, _ := strings.Cut(strings.TrimSpace(pair), "=")
		n, ok := money.ParseNetwork(name)
		v, err := strconv.Atoi(count)
		if !ok || err != nil || v < 1 || v > 1000 {
			return nil, usagef("--confirmations: %q is not NETWORK=COUNT with a network of the spec and a count of 1 to 1000", pair)
		}
		out[n] = v
	}
	return out, nil
}

// parse parses a command that takes no positional arguments.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := parseArgs(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseArgs parses args, then fills every flag not given from its PAYD_*
// variable; positional arguments are left in fs.Args.
func parseArgs(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "PAYD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}

// parseFlags parses args with fs: a mistake is a usage error, and --help
// (the flags were printed) is flag.ErrHelp, which run turns into success.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError{err.Error()}
	}
	return err
}

// logger builds the process logger.
func (c *Config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", c.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format %q: use text or json", c.LogFormat)
}

// proxies parses TrustedProxies.
func (c *Config) proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(c.TrustedProxies, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, usagef("--trusted-proxies: %q is not a CIDR", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// urls returns the public base URL (hosted pages live under it, the API
// under its /api/v1) and the wallet base URL for the address actually bound.
func (c *Config) urls(bound string) (public, walletBase string, err error) {
	public = c.PublicURL
	if public == "" {
		public = "http://" + bound
	}
	u, err := url.Parse(public)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", usagef("--public-url %q must be an http(s) URL", public)
	}
	public = strings.TrimRight(public, "/")
	walletBase = c.WalletURL
	if walletBase == "" {
		walletBase = public + "/wallet/v1"
	}
	return public, strings.TrimRight(walletBase, "/"), nil
}

// needExisting refuses an SQLite database file that does not exist. SQLite
// would create an empty one: a command run in another folder than the
// server's would then report success (payd pause checkouts: "paused")
// on a database no server reads.
func needExisting(dsn string) error {
	path, ok := store.SQLiteFile(dsn)
	if !ok {
		return nil
	}
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("database %s does not exist: run payd in the folder of the server's database, or name it "+
			"with --database (or PAYD_DATABASE); payd serve or payd migrate creates a new one", path)
	}
	return err
}
