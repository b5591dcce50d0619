package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"payd/clock"
	"payd/store"
)

// runBackup is `payd backup --to PATH`: an online, consistent copy of an
// SQLite database, taken while payd serves (store.DB.Backup). It opens the
// database without migrating it: a newer payd taking a backup must not
// change the schema under an older server. PostgreSQL is backed up with
// pg_dump (docs/operations.md).
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("backup", stderr)
	to := fs.String("to", "", "file to write the backup to (must not exist)")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	if *to == "" {
		return usagef("backup: --to PATH is required")
	}
	if _, ok := store.SQLiteFile(cfg.Database); !ok {
		return fmt.Errorf("payd backup copies SQLite databases; back PostgreSQL up with pg_dump --format=custom " +
			"(docs/operations.md)")
	}
	if err := needExisting(cfg.Database); err != nil {
		return err
	}
	log, err := cfg.logger(stderr)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.Database, clock.Real{}, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, *to); err != nil {
		return err
	}
	info, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes)\n", store.RedactDSN(cfg.Database), *to, info.Size())
	return nil
}
