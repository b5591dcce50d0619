package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"payd/clock"
	"payd/store"
	"payd/store/storetest"
)

// devDSN returns a fresh database of dialect (skipping PostgreSQL when it
// is not configured).
func devDSN(t *testing.T, dialect string) string {
	if dialect == "postgres" {
		return storetest.PostgresDSN(t)
	}
	return storetest.SQLiteDSN(t)
}

// TestDevSeed seeds a small database on each store through the command
// line and checks the printed businesses, keys and counts; a second run
// with the same seed is refused, and payd serve then refuses the database
// without --dev.
func TestDevSeed(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dsn := devDSN(t, dialect)
			getenv := func(k string) string { return map[string]string{"PAYD_DATABASE": dsn}[k] }
			var out bytes.Buffer
			args := []string{"dev", "seed", "--payments", "300", "--businesses", "2", "--seed", "5",
				"--now", "2026-11-01T00:00:00Z", "--json"}
			if err := run(context.Background(), args, getenv, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			var got seeded
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, out.Bytes())
			}
			if got.Payments != 300 || len(got.Businesses) != 2 || got.Businesses[0].Payments != 270 ||
				!strings.HasPrefix(got.Businesses[0].SecretKey, "sk_live_") || got.Customers == 0 {
				t.Fatalf("printed %s", out.Bytes())
			}
			err := run(context.Background(), args, getenv, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "already holds") {
				t.Fatalf("second seed: %v, want a refusal", err)
			}
			db := storetest.OpenDSN(t, dsn, clock.Real{})
			if err := checkServeMode(context.Background(), db, false); err == nil {
				t.Fatal("payd serve without --dev accepted a seeded database")
			}
			if err := checkServeMode(context.Background(), db, true); err != nil {
				t.Fatalf("payd serve --dev refused a seeded database: %v", err)
			}
		})
	}
}

// TestDevSeedRefusesProduction checks that a database payd serve ran on
// without --dev is never seeded.
func TestDevSeedRefusesProduction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := checkServeMode(ctx, db, false); err != nil {
			t.Fatal(err)
		}
		sc, err := seedConfig(10, 1, 1, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		err = seedDatabase(ctx, db, sc, false, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "refusing to seed") {
			t.Fatalf("seeding a production database: %v, want a refusal", err)
		}
		if _, err := db.BusinessByID(ctx, "biz_none"); err == nil {
			t.Fatal("unexpected business")
		}
	})
}

func TestDevSeedUsage(t *testing.T) {
	for _, args := range [][]string{
		{"dev"}, {"dev", "grow"}, {"dev", "seed"}, {"dev", "seed", "--payments", "-3"},
		{"dev", "seed", "--payments", "5", "--now", "yesterday"}, {"dev", "seed", "--payments", "5", "--businesses", "0"},
	} {
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
