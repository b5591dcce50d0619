package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"payd"
	"payd/clock"
)

// suspendUsage is the synopsis of business suspend and reinstate.
const suspendUsage = "usage: payd business suspend|reinstate --business BIZ_ID [--json]"

// runSuspend is the operator's stop for a business (spec 7.3
// business_suspended): a suspended business cannot create payments or
// open checkouts, while checkouts already open may finish. It is stored in
// the database the servers share, so every replica obeys it.
func runSuspend(ctx context.Context, action string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("business "+action, stderr)
	id := fs.String("business", "", "business id (biz_...)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	if !payd.HasPrefix(*id, payd.PrefixBusiness) {
		return usagef("--business must be a business id (biz_...), not %q", *id)
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	var at *time.Time
	if action == "suspend" {
		now := clock.Real{}.Now()
		at = &now
	}
	if err := db.SetBusinessSuspended(ctx, *id, at); err != nil {
		return fmt.Errorf("--business %q: %w", *id, err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"business_id": *id, "suspended": at != nil})
	}
	fmt.Fprintf(stdout, "business %s %s\n", *id, map[bool]string{true: "suspended", false: "reinstated"}[at != nil])
	return nil
}
