package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"payd"
	"payd/clock"
	"payd/rate"
	"payd/seed"
)

// modeSetting names the settings row that says what a database is for:
// modeDev once payd dev seed has filled it with made-up data, modeProduction
// once payd serve has run on it without --dev. Whichever comes first stays,
// so seeded data is never served as real and real data is never seeded.
const (
	modeSetting    = "database_mode"
	modeDev        = "dev"
	modeProduction = "production"
)

// markMode records want as the database's mode unless it has one, and
// returns the mode in force.
func markMode(ctx context.Context, db payd.SettingStore, want string) (string, error) {
	return db.EnsureSetting(ctx, modeSetting, want)
}

// checkServeMode is what payd serve does before serving: without --dev it
// marks the database production and refuses one that payd dev seed filled.
// With --dev it marks nothing, so that a database tried out in development
// can still go to production as long as nothing was seeded into it.
func checkServeMode(ctx context.Context, db payd.SettingStore, dev bool) error {
	if dev {
		return nil
	}
	mode, err := markMode(ctx, db, modeProduction)
	if err != nil {
		return err
	}
	if mode == modeDev {
		return fmt.Errorf("this database holds data made up by payd dev seed; serve it with --dev, or give payd serve a fresh database")
	}
	return nil
}

const devUsage = `usage: payd dev seed --payments N [--businesses B] [--seed S] [--now RFC3339] [--database DSN] [--json]`

// runDev runs the development tools: dev seed.
func runDev(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "seed" {
		return usagef("%s", devUsage)
	}
	var cfg Config
	fs := cfg.newFlagSet("dev seed", stderr)
	payments := fs.Int("payments", -1, "how many payments to make (required)")
	businesses := fs.Int("businesses", 3, "how many businesses; the first gets 90% of the payments")
	seedFlag := fs.Uint64("seed", 1, "the seed: the same seed and --now give the same data")
	nowFlag := fs.String("now", "", "end of the seeded year, RFC 3339 (default: now, to the second)")
	batch := fs.Int("batch", 1000, "payments per transaction")
	asJSON := fs.Bool("json", false, "print what was made, with the keys, as JSON")
	if err := parse(fs, args[1:], getenv); err != nil {
		return err
	}
	sc, err := seedConfig(*payments, *businesses, *seedFlag, *nowFlag, *batch)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, &cfg, stderr, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return seedDatabase(ctx, db, sc, *asJSON, stdout, stderr)
}

// seedConfig checks the flags and turns them into a seed.Config priced
// at the development rate table.
func seedConfig(payments, businesses int, s uint64, now string, batch int) (seed.Config, error) {
	if payments < 0 {
		return seed.Config{}, usagef("--payments is required: how many payments to make (0 or more)")
	}
	if businesses < 1 || batch < 1 {
		return seed.Config{}, usagef("--businesses and --batch must be 1 or more")
	}
	at := clock.Real{}.Now().Truncate(time.Second)
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return seed.Config{}, usagef("--now %q: use RFC 3339, such as 2026-01-31T12:00:00Z", now)
		}
		at = t
	}
	x, err := rate.Combine([]rate.Report{{Source: "static", Quotes: rate.DevQuotes()}}, nil, at)
	if err != nil {
		return seed.Config{}, err
	}
	x.ID, x.CreatedAt = "xr_seed", at
	return seed.Config{Payments: payments, Businesses: businesses, Seed: s, Now: at.UTC(), Rates: x,
		BatchSize: batch}, nil
}

// seedDatabase marks the database a development one, refusing one that
// payd serve ran on in production, then seeds it and prints the result.
func seedDatabase(ctx context.Context, db payd.Store, sc seed.Config, asJSON bool, stdout, stderr io.Writer) error {
	mode, err := markMode(ctx, db, modeDev)
	if err != nil {
		return err
	}
	if mode != modeDev {
		return fmt.Errorf("refusing to seed: this database is marked %q (payd serve ran on it without --dev) and may hold real data; seed a fresh database", mode)
	}
	clk := clock.Real{}
	start := clk.Now()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	last := start
	sc.Progress = func(done int) {
		if now := clk.Now(); now.Sub(last) >= 5*time.Second || done == sc.Payments {
			last = now
			log.Info("seeding", "payments", done, "of", sc.Payments, "elapsed", now.Sub(start).Round(100*time.Millisecond))
		}
	}
	sum, err := seed.Run(ctx, db, sc)
	if err != nil {
		return err
	}
	log.Info("seeded; indexing for search and folding the rollups", "elapsed", clk.Now().Sub(start).Round(100*time.Millisecond))
	if err := drain(ctx, db.IndexSearch, 5000); err != nil {
		return err
	}
	if err := drain(ctx, db.FoldRollups, 50_000); err != nil {
		return err
	}
	if a, ok := db.(interface{ Analyze(context.Context) error }); ok {
		if err := a.Analyze(ctx); err != nil {
			return err
		}
	}
	took := clk.Now().Sub(start)
	if asJSON {
		return json.NewEncoder(stdout).Encode(seeded{Summary: sum, Seconds: took.Seconds()})
	}
	printSummary(stdout, sum, took)
	return nil
}

// drain runs a batched background job (search indexing, folding the
// rollups) until nothing is left, rather than leaving a million seeded
// objects to the server's loops, during which reads would take the slow
// way.
func drain(ctx context.Context, job func(ctx context.Context, max int) (int, error), batch int) error {
	for {
		n, err := job(ctx, batch)
		if err != nil || n == 0 {
			return err
		}
	}
}

// seeded is what dev seed --json prints.
type seeded struct {
	*seed.Summary
	Seconds float64 `json:"seconds"`
}

// printSummary writes what was made for a person.
func printSummary(w io.Writer, s *seed.Summary, took time.Duration) {
	fmt.Fprintf(w, "seeded %d payments, %d customers and %d links in %s (seed %d, up to %s)\n\n",
		s.Payments, s.Customers, s.Links, took.Round(time.Millisecond), s.Seed, s.Now.Format(time.RFC3339))
	for _, b := range s.Businesses {
		fmt.Fprintf(w, "%s  %s (%d payments)\n  secret key      %s\n  test secret key %s\n  publishable key %s\n",
			b.ID, b.Name, b.Payments, b.SecretKey, b.TestSecretKey, b.PublishableKey)
	}
	t := s.Terms
	fmt.Fprintf(w, "\nplanted search terms: %q in %d payments, %q in %d, %q in %d\nThe keys are shown once; payd keeps only their hashes.\n",
		t.Rare.Query, t.Rare.Payments, t.Mid.Query, t.Mid.Payments, t.Broad.Query, t.Broad.Payments)
}
